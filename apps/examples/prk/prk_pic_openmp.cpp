// The Parallel Research Kernels' PIC (particle-in-cell), written after PRK's definition for one
// shared-memory node with OpenMP: particles in a vector move through a periodic L x L grid of
// fixed charges, each pushed by the four charges at its cell's corners, ITERATIONS + 1 steps (the
// first untimed), with a `#pragma omp parallel for` over the particles; then every particle is
// checked against its analytic trajectory (prk_pic.hpp: the problem, the placing, the move, the
// check, PRK's rate in millions of particles moved per second). prk_pic_compas.cpp is its port.
// Usage: prk_pic_openmp ITERATIONS GRID_SIZE PARTICLES K M MODE [PARAMETERS]  (OMP_NUM_THREADS)
//   MODE: GEOMETRIC RHO | SINUSOIDAL | LINEAR ALPHA BETA | PATCH LEFT RIGHT BOTTOM TOP
#include <omp.h>

#include <cstdio>
#include <vector>

#include "prk_pic.hpp"

int main(int argc, char** argv) {
  const prk::PicArgs a = prk::pic_args(argc, argv);
  const long size = a.size;
  std::printf(
      "Parallel Research Kernels: particle-in-cell (OpenMP)\n"
      "Number of threads              = %d\n",
      omp_get_max_threads());
  prk::pic_print(a);

  std::vector<double> grid((size + 1) * (size + 1));  // vertex (x, y), y contiguous (PRK's)
#pragma omp parallel for
  for (long x = 0; x <= size; ++x)
    for (long y = 0; y <= size; ++y) grid[x * (size + 1) + y] = x % 2 == 0 ? 1.0 : -1.0;
  const auto charge = [&](long x, long y) { return grid[x * (size + 1) + y]; };
  std::vector<prk::Particle> particles;
  prk::pic_place(a, 0, size, 0, size, particles);
  const long placed = static_cast<long>(particles.size());
  std::printf("Number of particles placed     = %ld\n", placed);

  double start = 0;
  for (long it = 0; it <= a.iterations; ++it) {
    if (it == 1) start = omp_get_wtime();
#pragma omp parallel for
    for (long i = 0; i < static_cast<long>(particles.size()); ++i)
      prk::pic_move(particles[i], charge, size);
  }
  const double seconds = omp_get_wtime() - start;

  if (prk::perturbed())
    for (prk::Particle& p : particles) p.x += p.id == 1 ? 1.0 : 0.0;
  long wrong = 0, id_sum = 0;
#pragma omp parallel for reduction(+ : wrong, id_sum)
  for (long i = 0; i < static_cast<long>(particles.size()); ++i) {
    wrong += !prk::pic_in_place(particles[i], a);
    id_sum += particles[i].id;
  }
  return prk::pic_verdict(a, placed, wrong, id_sum, seconds, true);
}
