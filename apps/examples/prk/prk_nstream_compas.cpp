// prk_nstream_openmp.cpp ported to processes x threads on compas: the same nstream (A += B +
// scalar * C) over a vector cut in one block per process; every `#pragma omp` line is kept.
// What changed (diff -u prk_nstream_openmp.cpp prk_nstream_compas.cpp):
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's OpenMP threads.
//  2. The three arrays become 1-D DistArrays (no halo); the loops run over this process's block.
//  3. The timer starts after compas::barrier(rt) (PRK's MPI_Barrier) and the job's time is the
//     slowest process's; the sum of A is reduced over the processes; process 0 prints.
// Usage: prk_nstream_compas ITERATIONS LENGTH   (compas-run -n P -t T, mpirun, srun, or alone)
#include <omp.h>

#include <cmath>
#include <cstdio>

#include "compas/compas.hpp"
#include "prk_common.hpp"

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);  // (1)
  prk::check_count(argc, argv, 2, {"ITERATIONS", "LENGTH"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const long length = prk::integer(argc, argv, 2, "length", rt.processes());
  const double scalar = 3.0;
  if (rt.process() == 0)
    std::printf(
        "Parallel Research Kernels: nstream, A += B + scalar * C (compas)\n"
        "Number of processes  = %d\nNumber of threads    = %d\n"
        "Vector length        = %ld\nNumber of iterations = %ld\n",
        rt.processes(), omp_get_max_threads(), length, iterations);

  compas::DistArray<double> a(rt, length, {.halo = 0, .fill = compas::comm::Fill::none});  // (2)
  compas::DistArray<double> b = a.like(), c = a.like();
#pragma omp parallel for
  for (long i = a.lo(); i < a.hi(); ++i) {
    a[i] = 0.0;
    b[i] = 2.0;
    c[i] = 2.0;
  }

  double start = 0;
  for (long it = 0; it <= iterations; ++it) {
    if (it == 1) {
      compas::barrier(rt);  // (3) the processes start the clock together
      start = omp_get_wtime();
    }
#pragma omp parallel for
    for (long i = a.lo(); i < a.hi(); ++i) a[i] += b[i] + scalar * c[i];
  }
  const double seconds = rt.allreduce(omp_get_wtime() - start, compas::op::max{});

  if (prk::perturbed() && a.owned().contains(length / 2)) a[length / 2] += 1.0;
  double sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (long i = a.lo(); i < a.hi(); ++i) sum += std::fabs(a[i]);
  sum = rt.allreduce(sum, compas::op::sum{});
  return prk::nstream_verdict(iterations, length, sum, seconds, rt.process() == 0);
}
