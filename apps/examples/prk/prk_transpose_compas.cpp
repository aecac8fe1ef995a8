// prk_transpose_openmp.cpp ported to processes x threads on compas: the matrices cut by rows over
// the processes, B += A^T by compas::transpose. What changed (diff -u prk_transpose_openmp.cpp
// prk_transpose_compas.cpp):
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's OpenMP threads.
//  2. A and B become 2-D DistArrays without halo, cut by rows; the loops run over this process's
//     rows with global indices.
//  3. The tiled sweep becomes compas::transpose(a, b, sum, A += 1): each process fills its rows of
//     B from every process's A, in tiles, with the same OpenMP threads; A += 1 follows each read
//     in the same pass at one process, as in the original (at several, once all have read A).
//  4. The timer starts after compas::barrier(rt) (PRK's MPI_Barrier); the job's time is the slowest
//     process's; the error is reduced over the processes; process 0 prints.
// Usage: prk_transpose_compas ITERATIONS ORDER   (compas-run -n P -t T, mpirun, srun, or alone)
#include <omp.h>

#include <cstdio>

#include "compas/compas.hpp"
#include "prk_common.hpp"

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);  // (1)
  prk::check_count(argc, argv, 2, {"ITERATIONS", "ORDER"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const long order = prk::integer(argc, argv, 2, "order", rt.processes());
  if (rt.process() == 0)
    std::printf(
        "Parallel Research Kernels: transpose, B += A^T (compas)\nNumber of processes  = %d\n"
        "Number of threads    = %d\nMatrix order         = %ld\nNumber of iterations = %ld\n",
        rt.processes(), omp_get_max_threads(), order, iterations);

  compas::DistArray<double, 2> a(rt, order, order, {.halo = 0}), b = a.like();  // (2)
#pragma omp parallel for
  for (long i = a.rows().lo; i < a.rows().hi; ++i)
    for (long j = 0; j < order; ++j) {
      a(i, j) = static_cast<double>(i * order + j);
      b(i, j) = 0.0;
    }

  double start = 0;
  for (long it = 0; it <= iterations; ++it) {
    if (it == 1) {
      compas::barrier(rt);  // (4)
      start = omp_get_wtime();
    }
    compas::transpose(a, b, compas::op::sum{}, [](double& x) { x += 1.0; });  // (3)
  }
  const double seconds = rt.allreduce(omp_get_wtime() - start, compas::op::max{});  // (4)

  if (prk::perturbed() && b.rows().contains(order / 2)) b(order / 2, 0) += 1.0;
  double abserr = 0;
#pragma omp parallel for reduction(+ : abserr)
  for (long i = b.rows().lo; i < b.rows().hi; ++i)
    for (long j = 0; j < order; ++j)
      abserr += prk::transpose_error(order, iterations, i, j, b(i, j));
  abserr = rt.allreduce(abserr, compas::op::sum{});
  return prk::transpose_verdict(iterations, order, abserr, seconds, rt.process() == 0);
}
