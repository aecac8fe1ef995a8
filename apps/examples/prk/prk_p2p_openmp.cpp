// The Parallel Research Kernels' synch_p2p (a pipelined wavefront), written after PRK's definition
// for one shared-memory node with OpenMP: on an M x N grid whose left and bottom edges hold i and
// j, every sweep makes A(i, j) = A(i - 1, j) + A(i, j - 1) - A(i - 1, j - 1). Each thread owns a
// strip of i and passes "row j is done" to the next thread (a flag per strip and row); after each
// sweep the top right corner, negated, goes to A(0, 0), on which the next sweep depends. PRK's
// check of the corner and its rate in MFlops/s (prk_common.hpp). prk_p2p_compas.cpp is its port
// to processes x threads.
// Usage: prk_p2p_openmp ITERATIONS M N   (threads: OMP_NUM_THREADS)
#include <omp.h>

#include <cstdio>
#include <vector>

#include "prk_common.hpp"

int main(int argc, char** argv) {
  prk::check_count(argc, argv, 3, {"ITERATIONS", "M", "N"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const long m = prk::integer(argc, argv, 2, "m", 2);
  const long n = prk::integer(argc, argv, 3, "n", 2);
  const int threads = omp_get_max_threads();
  std::printf(
      "Parallel Research Kernels: synch_p2p, pipelined wavefront (OpenMP)\n"
      "Number of threads    = %d\nGrid sizes           = %ld, %ld\n"
      "Number of iterations = %ld\n",
      threads, m, n, iterations);

  std::vector<double> grid(static_cast<std::size_t>(m * n), 0.0);
  auto A = [&](long i, long j) -> double& { return grid[i + j * m]; };
  for (long j = 0; j < n; ++j) A(0, j) = static_cast<double>(j);
  for (long i = 0; i < m; ++i) A(i, 0) = static_cast<double>(i);
  std::vector<prk::Flag> done(static_cast<std::size_t>(threads * n)), corner(1);

  double start = 0;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const long lo = 1 + (m - 1) * t / threads, hi = 1 + (m - 1) * (t + 1) / threads;
    for (long it = 0; it <= iterations; ++it) {
      if (it == 1) {
#pragma omp barrier
#pragma omp master
        start = omp_get_wtime();
      }
      if (t == 0) prk::wait_for(corner[0], it);  // the previous sweep's corner is in A(0, 0)
      for (long j = 1; j < n; ++j) {
        if (t > 0) prk::wait_for(done[(t - 1) * n + j], it + 1);
        for (long i = lo; i < hi; ++i) A(i, j) = A(i - 1, j) + A(i, j - 1) - A(i - 1, j - 1);
        done[t * n + j].sweeps.store(it + 1, std::memory_order_release);
      }
      if (t == threads - 1) {
        A(0, 0) = -A(m - 1, n - 1);
        corner[0].sweeps.store(it + 1, std::memory_order_release);
      }
    }
  }
  const double seconds = omp_get_wtime() - start;

  if (prk::perturbed()) A(m - 1, n - 1) += 1.0;
  return prk::p2p_verdict(iterations, m, n, A(m - 1, n - 1), seconds, true);
}
