// The Parallel Research Kernels' dgemm, written after PRK's definition for one shared-memory node
// with OpenMP: C += A B for square matrices of ORDER, ITERATIONS + 1 times (the first untimed),
// column-major, in tiles of TILE (0: no tiling; PRK's blocking, prk::dgemm_tiles); PRK's checksum
// and its rate in MFlops/s (prk_common.hpp). prk_dgemm_compas.cpp is its port to processes x
// threads (SUMMA on a process grid).
// Usage: prk_dgemm_openmp ITERATIONS ORDER [TILE]   (threads: OMP_NUM_THREADS; TILE 32 if not
// given)
#include <omp.h>

#include <cstdio>
#include <vector>

#include "prk_common.hpp"

int main(int argc, char** argv) {
  prk::check_count(argc, argv, 2, {"ITERATIONS", "ORDER", "TILE"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const long order = prk::integer(argc, argv, 2, "order", 1, 0, 1L << 15);
  const long tile = prk::integer(argc, argv, 3, "tile", 0, 32, 1L << 12);
  std::printf(
      "Parallel Research Kernels: dgemm, C += A B (OpenMP)\n"
      "Number of threads     = %d\nMatrix order          = %ld\n"
      "Blocking factor       = %ld\nNumber of iterations  = %ld\n",
      omp_get_max_threads(), order, tile, iterations);

  std::vector<double> a(order * order), b(order * order), c(order * order);
#pragma omp parallel for
  for (long j = 0; j < order; ++j)
    for (long i = 0; i < order; ++i) {
      a[i + order * j] = b[i + order * j] = static_cast<double>(j);
      c[i + order * j] = 0.0;
    }

  double start = 0;
  for (long it = 0; it <= iterations; ++it) {
    if (it == 1) start = omp_get_wtime();
#pragma omp parallel
    prk::dgemm_tiles(order, order, order, a.data(), order, b.data(), order, c.data(), order, tile);
  }
  const double seconds = omp_get_wtime() - start;

  if (prk::perturbed()) c[order * (order - 1)] *= 2.0;  // C(0, ORDER - 1)
  double checksum = 0;
#pragma omp parallel for reduction(+ : checksum)
  for (long k = 0; k < order * order; ++k) checksum += c[k];
  return prk::dgemm_verdict(iterations, order, checksum, seconds, true);
}
