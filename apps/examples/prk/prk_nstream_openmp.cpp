// The Parallel Research Kernels' nstream (a STREAM triad made dependent from sweep to sweep),
// written after PRK's definition for one shared-memory node with OpenMP: A += B + scalar * C over
// ITERATIONS + 1 sweeps, the first one untimed; PRK's check of the sum of A and its rate in MB/s
// (prk_common.hpp). prk_nstream_compas.cpp is its port to processes x threads.
// Usage: prk_nstream_openmp ITERATIONS LENGTH   (threads: OMP_NUM_THREADS)
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "prk_common.hpp"

int main(int argc, char** argv) {
  prk::check_count(argc, argv, 2, {"ITERATIONS", "LENGTH"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const long length = prk::integer(argc, argv, 2, "length", 1);
  const double scalar = 3.0;
  std::printf(
      "Parallel Research Kernels: nstream, A += B + scalar * C (OpenMP)\n"
      "Number of threads    = %d\nVector length        = %ld\n"
      "Number of iterations = %ld\n",
      omp_get_max_threads(), length, iterations);

  auto a = std::make_unique_for_overwrite<double[]>(length);
  auto b = std::make_unique_for_overwrite<double[]>(length);
  auto c = std::make_unique_for_overwrite<double[]>(length);
#pragma omp parallel for
  for (long i = 0; i < length; ++i) {
    a[i] = 0.0;
    b[i] = 2.0;
    c[i] = 2.0;
  }

  double start = 0;
  for (long it = 0; it <= iterations; ++it) {
    if (it == 1) start = omp_get_wtime();
#pragma omp parallel for
    for (long i = 0; i < length; ++i) a[i] += b[i] + scalar * c[i];
  }
  const double seconds = omp_get_wtime() - start;

  if (prk::perturbed()) a[length / 2] += 1.0;
  double sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (long i = 0; i < length; ++i) sum += std::fabs(a[i]);
  return prk::nstream_verdict(iterations, length, sum, seconds, true);
}
