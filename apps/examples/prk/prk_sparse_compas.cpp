// prk_sparse_openmp.cpp ported to processes x threads on compas: the matrix's rows cut in one
// block per process, the vector a DistArray cut alike; every `#pragma omp` line is kept.
// What changed (diff -u prk_sparse_openmp.cpp prk_sparse_compas.cpp):
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's OpenMP threads.
//  2. The vector becomes a 1-D DistArray (no halo); this process builds, multiplies and updates
//     the rows of its block (result holds them).
//  3. The columns its rows read, anyone's, are listed once: a GatherPlan of them (the index lists
//     go to their owners once) that rewrites the column indices to positions in that list. Every
//     iteration, after the update, plan.gather(xs) brings their values (one message per peer:
//     where PRK's MPI version replicates the whole vector with MPI_Allgather), and the product
//     reads xs.
//  4. The timer starts at compas::barrier(rt) (PRK's MPI_Barrier; it returns omp_get_wtime())
//     and the job's time is the slowest process's; the result is summed over the job
//     (rt.transform_reduce), every process gets the same verdict; process 0 prints.
// Usage: prk_sparse_compas ITERATIONS LSIZE RADIUS [scrambled|canonical]
//        (compas-run -n P -t T, mpirun, srun, or alone)
#include <omp.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "compas/compas.hpp"
#include "prk_common.hpp"

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);  // (1)
  prk::check_count(argc, argv, 3, {"ITERATIONS", "LSIZE", "RADIUS", "scrambled|canonical"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const int lsize = static_cast<int>(prk::integer(argc, argv, 2, "lsize", 0, 0, 12));
  const long size = 1L << lsize, size2 = size * size;
  const long radius = prk::integer(argc, argv, 3, "radius", 0, 0, (size - 1) / 2);
  const bool scramble = prk::choice(argc, argv, 4, "indexing", "scrambled", "canonical", true);
  const long stencil = 4 * radius + 1;
  if (rt.process() == 0)
    std::printf(
        "Parallel Research Kernels: sparse matrix-vector multiplication (compas)\n"
        "Number of processes   = %d\nNumber of threads     = %d\nMatrix order          = %ld\n"
        "Stencil diameter      = %ld\nNumber of iterations  = %ld\nIndexing              = %s\n",
        rt.processes(), omp_get_max_threads(), size2, 2 * radius + 1, iterations,
        scramble ? "scrambled" : "canonical");

  compas::DistArray<double> vector = prk::or_bad_input([&] {  // (2)
    return compas::DistArray<double>(rt, size2, {.halo = 0, .fill = compas::comm::Fill::none});
  });
  const long lo = vector.lo(), hi = vector.hi(), nent = (hi - lo) * stencil;
  auto matrix = std::make_unique_for_overwrite<double[]>(nent);
  std::vector<long> col(nent);
  std::vector<double> result(hi - lo);
#pragma omp parallel for
  for (long row = lo; row < hi; ++row) {
    vector[row] = result[row - lo] = 0.0;
    long* c = &col[(row - lo) * stencil];
    prk::sparse_row(row, lsize, radius, scramble, c);
    for (long e = 0; e < stencil; ++e) matrix[(row - lo) * stencil + e] = 1.0 / (c[e] + 1.0);
  }
  compas::GatherPlan plan(vector, col, col);  // (3) col[e]: its column's position in xs
  std::vector<double> xs(plan.size());

  double start = 0;
  for (long it = 0; it <= iterations; ++it) {
    if (it == 1) start = compas::barrier(rt);  // (4)
#pragma omp parallel for
    for (long row = lo; row < hi; ++row) vector[row] += static_cast<double>(row + 1);
    plan.gather(xs);  // (3)
#pragma omp parallel for
    for (long row = lo; row < hi; ++row) {
      double temp = 0.0;
      for (long e = (row - lo) * stencil; e < (row - lo + 1) * stencil; ++e)
        temp += matrix[e] * xs[col[e]];
      result[row - lo] += temp;
    }
  }
  const double seconds = rt.allreduce(omp_get_wtime() - start, compas::op::max{});  // (4)

  if (prk::perturbed() && vector.owned().contains(size2 / 2)) result[size2 / 2 - lo] += 1.0;
  const double sum =  // (4)
      rt.transform_reduce(vector.owned(), 0.0, compas::op::sum{},
                          [&](long row) { return result[row - lo]; });
  return prk::sparse_verdict(iterations, size2, radius, sum, seconds, rt.process() == 0);
}
