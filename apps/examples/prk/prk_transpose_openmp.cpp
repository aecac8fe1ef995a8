// The Parallel Research Kernels' transpose, written after PRK's definition for one shared-memory
// node with OpenMP: B += A^T, then A += 1, ITERATIONS + 1 times (the first untimed), in tiles of
// 32 x 32 so that the column-wise reads of A stay in the cache; PRK's check of B and its rate in
// MB/s (prk_common.hpp). prk_transpose_compas.cpp is its port to processes x threads.
// Usage: prk_transpose_openmp ITERATIONS ORDER   (threads: OMP_NUM_THREADS)
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "prk_common.hpp"

int main(int argc, char** argv) {
  prk::check_count(argc, argv, 2, {"ITERATIONS", "ORDER"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const long order = prk::integer(argc, argv, 2, "order", 1);
  std::printf(
      "Parallel Research Kernels: transpose, B += A^T (OpenMP)\nNumber of threads    = %d\n"
      "Matrix order         = %ld\nNumber of iterations = %ld\n",
      omp_get_max_threads(), order, iterations);

  auto a = std::make_unique_for_overwrite<double[]>(order * order);
  auto b = std::make_unique_for_overwrite<double[]>(order * order);
#pragma omp parallel for
  for (long i = 0; i < order; ++i)
    for (long j = 0; j < order; ++j) {
      a[i * order + j] = static_cast<double>(i * order + j);
      b[i * order + j] = 0.0;
    }

  const long tile = 32;
  double start = 0;
  for (long it = 0; it <= iterations; ++it) {
    if (it == 1) start = omp_get_wtime();
#pragma omp parallel for
    for (long i0 = 0; i0 < order; i0 += tile)
      for (long j0 = 0; j0 < order; j0 += tile)
        for (long i = i0; i < std::min(i0 + tile, order); ++i)
          for (long j = j0; j < std::min(j0 + tile, order); ++j) {
            b[i * order + j] += a[j * order + i];
            a[j * order + i] += 1.0;
          }
  }
  const double seconds = omp_get_wtime() - start;

  if (prk::perturbed()) b[order / 2] += 1.0;
  double abserr = 0;
#pragma omp parallel for reduction(+ : abserr)
  for (long i = 0; i < order; ++i)
    for (long j = 0; j < order; ++j)
      abserr += prk::transpose_error(order, iterations, i, j, b[i * order + j]);
  return prk::transpose_verdict(iterations, order, abserr, seconds, true);
}
