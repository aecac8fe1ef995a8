// The Parallel Research Kernels' reduce (vectors spread over the workers, added element by
// element), written after PRK's definition for one shared-memory node with OpenMP: every thread
// is a worker with a vector and a vector of ones; each sweep it adds its ones to its vector, then
// the threads add all vectors into thread 0's, each thread summing a block of the elements over
// every thread's vector. ITERATIONS + 1 sweeps, the first untimed; PRK's check of the result and
// its rate in MFlops/s (prk_common.hpp). prk_reduce_compas.cpp is its port to processes x threads.
// Usage: prk_reduce_openmp ITERATIONS LENGTH   (threads: OMP_NUM_THREADS)
#include <omp.h>

#include <cstdio>
#include <memory>

#include "prk_common.hpp"

int main(int argc, char** argv) {
  prk::check_count(argc, argv, 2, {"ITERATIONS", "LENGTH"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const long length = prk::integer(argc, argv, 2, "length", 1);
  const int threads = omp_get_max_threads();
  std::printf(
      "Parallel Research Kernels: reduce (OpenMP)\nNumber of threads    = %d\n"
      "Vector length        = %ld\nNumber of iterations = %ld\n",
      threads, length, iterations);

  // Thread t's vector and ones at vec[t * length], ones[t * length] (first touched by t).
  auto vec = std::make_unique_for_overwrite<double[]>(threads * length);
  auto ones = std::make_unique_for_overwrite<double[]>(threads * length);
  double start = 0;
#pragma omp parallel num_threads(threads)
  {
    double* v = &vec[omp_get_thread_num() * length];
    double* o = &ones[omp_get_thread_num() * length];
    for (long i = 0; i < length; ++i) v[i] = o[i] = 1.0;
    for (long it = 0; it <= iterations; ++it) {
      if (it == 1) {
#pragma omp barrier
#pragma omp master
        start = omp_get_wtime();
      }
      for (long i = 0; i < length; ++i) v[i] += o[i];
#pragma omp barrier
#pragma omp for
      for (long i = 0; i < length; ++i) {
        double s = 0;
        for (int t = 0; t < threads; ++t) s += vec[t * length + i];
        vec[i] = s;  // into thread 0's vector
      }
    }
  }
  const double seconds = omp_get_wtime() - start;

  if (prk::perturbed()) vec[length / 2] += 1.0;
  return prk::reduce_verdict(iterations, length, threads, &vec[0], seconds, true);
}
