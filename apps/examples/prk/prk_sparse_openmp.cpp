// The Parallel Research Kernels' sparse (a sparse matrix-vector product, repeated), written after
// PRK's definition for one shared-memory node with OpenMP: the matrix of a star stencil of radius
// RADIUS on a periodic 2^LSIZE x 2^LSIZE grid, its points numbered with their bits reversed
// (`scrambled`, PRK's default: each row's columns scattered over the whole vector) or in order
// (`canonical`), in compressed-row form; ITERATIONS + 1 times vector[c] += c + 1 and result +=
// matrix * vector, the first one untimed; PRK's check of the sum of the result and its rate in
// MFlops/s (prk_common.hpp). prk_sparse_compas.cpp is its port to processes x threads.
// Usage: prk_sparse_openmp ITERATIONS LSIZE RADIUS [scrambled|canonical]   (OMP_NUM_THREADS)
#include <omp.h>

#include <cstdio>
#include <memory>

#include "prk_common.hpp"

int main(int argc, char** argv) {
  prk::check_count(argc, argv, 3, {"ITERATIONS", "LSIZE", "RADIUS", "scrambled|canonical"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const int lsize = static_cast<int>(prk::integer(argc, argv, 2, "lsize", 0, 0, 12));
  const long size = 1L << lsize, size2 = size * size;
  const long radius = prk::integer(argc, argv, 3, "radius", 0, 0, (size - 1) / 2);
  const bool scramble = prk::choice(argc, argv, 4, "indexing", "scrambled", "canonical", true);
  const long stencil = 4 * radius + 1, nent = size2 * stencil;
  std::printf(
      "Parallel Research Kernels: sparse matrix-vector multiplication (OpenMP)\n"
      "Number of threads     = %d\nMatrix order          = %ld\nStencil diameter      = %ld\n"
      "Number of iterations  = %ld\nIndexing              = %s\n",
      omp_get_max_threads(), size2, 2 * radius + 1, iterations,
      scramble ? "scrambled" : "canonical");

  auto matrix = std::make_unique_for_overwrite<double[]>(nent);
  auto col = std::make_unique_for_overwrite<long[]>(nent);
  auto vector = std::make_unique_for_overwrite<double[]>(size2);
  auto result = std::make_unique_for_overwrite<double[]>(size2);
#pragma omp parallel for
  for (long row = 0; row < size2; ++row) {
    vector[row] = result[row] = 0.0;
    prk::sparse_row(row, lsize, radius, scramble, &col[row * stencil]);
    for (long e = row * stencil; e < (row + 1) * stencil; ++e) matrix[e] = 1.0 / (col[e] + 1.0);
  }

  double start = 0;
  for (long it = 0; it <= iterations; ++it) {
    if (it == 1) start = omp_get_wtime();
#pragma omp parallel for
    for (long row = 0; row < size2; ++row) vector[row] += static_cast<double>(row + 1);
#pragma omp parallel for
    for (long row = 0; row < size2; ++row) {
      double temp = 0.0;
      for (long e = row * stencil; e < (row + 1) * stencil; ++e) temp += matrix[e] * vector[col[e]];
      result[row] += temp;
    }
  }
  const double seconds = omp_get_wtime() - start;

  if (prk::perturbed()) result[size2 / 2] += 1.0;
  double sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (long row = 0; row < size2; ++row) sum += result[row];
  return prk::sparse_verdict(iterations, size2, radius, sum, seconds, true);
}
