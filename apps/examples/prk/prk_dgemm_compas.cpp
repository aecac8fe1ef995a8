// prk_dgemm_openmp.cpp ported to processes x threads on compas: SUMMA on the near-square process
// grid, as PRK's MPI dgemm does it; the local product is the original's tiled loop.
// What changed (diff -u prk_dgemm_openmp.cpp prk_dgemm_compas.cpp):
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's OpenMP threads.
//  2. A, B and C become DistArray<double, 2> on Decomposition::grid, indexed (column, row) so that
//     each process's block is column-major as in the original: process (pr, pc) of the grid holds
//     the matrix columns of its grid row pr and the matrix rows of its grid column pc.
//  3. compas::Summa does each product panel by panel: the owner of A's columns k..k+w broadcasts
//     them down its grid column, the owner of B's rows k..k+w along its grid row, and every
//     process adds their product to its block of C with the original's tile loop.
//  4. The timer starts at compas::barrier(rt) (it returns omp_get_wtime() then); the job's time
//     is the slowest process's; the checksum is summed over the job (rt.transform_reduce);
//     process 0 prints.
// Usage: prk_dgemm_compas ITERATIONS ORDER [TILE]   (compas-run -n P -t T, mpirun, srun, or alone;
// TILE, 32 if not given, is also the panel width)
#include <omp.h>

#include <cstdio>

#include "compas/compas.hpp"
#include "prk_common.hpp"

using Matrix = compas::DistArray<double, 2>;

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);  // (1)
  prk::check_count(argc, argv, 2, {"ITERATIONS", "ORDER", "TILE"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const long order = prk::integer(argc, argv, 2, "order", rt.processes(), 0, 1L << 15);
  const long tile = prk::integer(argc, argv, 3, "tile", 0, 32, 1L << 12);
  if (rt.process() == 0)
    std::printf(
        "Parallel Research Kernels: dgemm, C += A B (compas)\n"
        "Number of processes   = %d\nNumber of threads     = %d\nMatrix order          = %ld\n"
        "Blocking factor       = %ld\nNumber of iterations  = %ld\n",
        rt.processes(), omp_get_max_threads(), order, tile, iterations);

  Matrix a(rt, {{0, order}, {0, order}}, {.halo = 0, .decomposition = compas::Decomposition::grid});
  Matrix b = a.like(), c = a.like();
  compas::Summa summa(a, b, c, tile > 0 ? tile : 32);  // (3)
#pragma omp parallel for
  for (long j = a.rows().lo; j < a.rows().hi; ++j)
    for (long i = a.cols().lo; i < a.cols().hi; ++i) {
      a(j, i) = b(j, i) = static_cast<double>(j);
      c(j, i) = 0.0;
    }

  double start = 0;
  for (long it = 0; it <= iterations; ++it) {
    if (it == 1) start = compas::barrier(rt);          // (4)
    summa([&](const compas::SummaPanels<double>& p) {  // (3)
#pragma omp parallel
      prk::dgemm_tiles(p.m, p.n, p.k, p.a, p.lda, p.b, p.ldb, p.c, p.ldc, tile);
    });
  }
  const double seconds = rt.allreduce(omp_get_wtime() - start, compas::op::max{});  // (4)

  if (prk::perturbed() && c.owned().contains(order - 1, 0)) c(order - 1, 0) *= 2.0;  // C(0, N - 1)
  const double checksum =                                                            // (4)
      rt.transform_reduce(c.owned(), 0.0, compas::op::sum{},
                          [&](long j, long i) { return c(j, i); });
  return prk::dgemm_verdict(iterations, order, checksum, seconds, rt.process() == 0);
}
