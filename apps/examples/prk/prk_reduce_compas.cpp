// prk_reduce_openmp.cpp ported to processes x threads on compas: every thread of every process is
// a worker; each sweep the threads of a process add their vectors as in the original, into a
// vector of the process, and the processes add theirs into process 0's thread 0's vector.
// What changed (diff -u prk_reduce_openmp.cpp prk_reduce_compas.cpp):
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's OpenMP threads.
//  2. The threads' sum is the process's: in thread 0's vector as before on process 0, in `sum`
//     on the others (their thread 0's vector stays its own), and compas::reduce adds it over the
//     processes into thread 0's vector on process 0 (PRK's MPI_Reduce, in place there), from the
//     master thread; one thread's vector is already its process's sum.
//  3. The timer starts after compas::barrier(rt) (PRK's MPI_Barrier); the job's time is the slowest
//     process's; process 0 checks and prints, and every process exits with its verdict.
// Usage: prk_reduce_compas ITERATIONS LENGTH   (compas-run -n P -t T, mpirun, srun, or alone)
#include <omp.h>

#include <cstdio>
#include <memory>

#include "compas/compas.hpp"
#include "prk_common.hpp"

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);  // (1)
  prk::check_count(argc, argv, 2, {"ITERATIONS", "LENGTH"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const long length = prk::integer(argc, argv, 2, "length", 1);
  const int threads = omp_get_max_threads(), me = rt.process();
  if (me == 0)
    std::printf(
        "Parallel Research Kernels: reduce (compas)\nNumber of processes  = %d\n"
        "Number of threads    = %d\nVector length        = %ld\nNumber of iterations = %ld\n",
        rt.processes(), threads, length, iterations);

  // Thread t's vector and ones at vec[t * length], ones[t * length] (first touched by t).
  auto vec = std::make_unique_for_overwrite<double[]>(threads * length);
  auto ones = std::make_unique_for_overwrite<double[]>(threads * length);
  std::vector<double> sum(me == 0 || threads == 1 ? 0 : length);    // (2)
  double* into = me == 0 || threads == 1 ? vec.get() : sum.data();  // (2) in place when it can
  double start = 0;
#pragma omp parallel num_threads(threads)
  {
    double* v = &vec[omp_get_thread_num() * length];
    double* o = &ones[omp_get_thread_num() * length];
    for (long i = 0; i < length; ++i) v[i] = o[i] = 1.0;
    for (long it = 0; it <= iterations; ++it) {
      if (it == 1) {
        if (omp_get_thread_num() == 0) compas::barrier(rt);  // (3)
#pragma omp barrier
#pragma omp master
        start = omp_get_wtime();
      }
      for (long i = 0; i < length; ++i) v[i] += o[i];
#pragma omp barrier
      if (threads > 1)  // (2) one thread's vector is its process's sum
#pragma omp for
        for (long i = 0; i < length; ++i) {
          double s = 0;
          for (int t = 0; t < threads; ++t) s += vec[t * length + i];
          into[i] = s;  // (2) the process's
        }
#pragma omp master
      compas::reduce(rt, std::span(into, length), std::span(vec.get(), length), compas::op::sum{},
                     0);  // (2)
#pragma omp barrier
    }
  }
  const double seconds = rt.allreduce(omp_get_wtime() - start, compas::op::max{});  // (3)

  if (prk::perturbed() && me == 0) vec[length / 2] += 1.0;
  const int bad = me == 0 && prk::reduce_verdict(iterations, length, threads * rt.processes(),
                                                 &vec[0], seconds, true);
  return rt.allreduce(bad, compas::op::max{});  // process 0's verdict, on every process
}
