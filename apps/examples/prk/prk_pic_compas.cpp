// prk_pic_openmp.cpp ported to processes x threads on compas: the grid of charges cut in blocks
// over a near-square process grid, y first as PRK's MPI version (P = 2 or 3: y only; 4: 2 x 2),
// each process moving the particles of its cells with the original's `#pragma omp` loop.
// What changed (diff -u prk_pic_openmp.cpp prk_pic_compas.cpp):
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's OpenMP threads.
//  2. The grid becomes a 2-D periodic DistArray q(x, y) of the L x L vertices (y contiguous, as
//     the original's), Decomposition::grid, one halo cell: a cell's right and top corners may be
//     the next part's first vertices, brought once by exchange_halos() (vertex L is vertex 0);
//     rt.parallel_for fills this process's part.
//  3. Each process places the particles of its own cells (PRK's counts jump to each column's
//     start) and numbers them after those of the processes before it (compas::numbering, which
//     also gives the job's total).
//  4. After each step the particles that left this process's part go to the owner of the cell
//     holding them (q.owner(p.x, p.y)) with compas::migrate, one alltoallv, however far they moved.
//  5. The timer starts at compas::barrier(rt) (PRK's MPI_Barrier; it returns omp_get_wtime());
//     the job's time is the slowest process's; the wrong positions and the serial numbers are
//     summed over the job in one rt.transform_reduce; process 0 prints.
// Usage: prk_pic_compas ITERATIONS GRID_SIZE PARTICLES K M MODE [PARAMETERS]
//        (compas-run -n P -t T, mpirun, srun, or alone)
#include <omp.h>

#include <array>
#include <cstdio>
#include <vector>

#include "compas/compas.hpp"
#include "prk_pic.hpp"

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);  // (1)
  const prk::PicArgs a = prk::pic_args(argc, argv);
  const long size = a.size;
  if (rt.process() == 0) {
    std::printf(
        "Parallel Research Kernels: particle-in-cell (compas)\n"
        "Number of processes            = %d\nNumber of threads              = %d\n",
        rt.processes(), omp_get_max_threads());
    prk::pic_print(a);
  }

  compas::DistArray<double, 2> q = prk::or_bad_input([&] {  // (2)
    return compas::DistArray<double, 2>(
        rt, {{0, size}, {0, size}},
        {.halo = 1, .periodic = true, .decomposition = compas::Decomposition::grid});
  });
  rt.parallel_for(q.owned(), [&](long x, long y) { q(x, y) = x % 2 == 0 ? 1.0 : -1.0; });
  q.exchange_halos();
  const auto charge = [&](long x, long y) { return q(x, y); };
  std::vector<prk::Particle> particles;
  prk::pic_place(a, q.rows().lo, q.rows().hi, q.cols().lo, q.cols().hi, particles);  // (3)
  const auto [before, placed] = compas::numbering(rt, static_cast<long>(particles.size()));
  for (prk::Particle& p : particles) p.id += before;
  if (rt.process() == 0) std::printf("Number of particles placed     = %ld\n", placed);

  double start = 0;
  for (long it = 0; it <= a.iterations; ++it) {
    if (it == 1) start = compas::barrier(rt);  // (5)
#pragma omp parallel for
    for (long i = 0; i < static_cast<long>(particles.size()); ++i)
      prk::pic_move(particles[i], charge, size);
    compas::migrate(rt, particles, [&](const prk::Particle& p) { return q.owner(p.x, p.y); });
  }
  const double seconds = rt.allreduce(omp_get_wtime() - start, compas::op::max{});

  if (prk::perturbed())
    for (prk::Particle& p : particles) p.x += p.id == 1 ? 1.0 : 0.0;
  const auto [wrong, id_sum] = rt.transform_reduce(
      compas::Range{0, static_cast<long>(particles.size())}, std::array<long, 2>{},
      compas::op::sum{}, [&](long i) {
        return std::array<long, 2>{!prk::pic_in_place(particles[i], a), particles[i].id};
      });  // (5)
  return prk::pic_verdict(a, placed, wrong, id_sum, seconds, rt.process() == 0);
}
