// prk_dgemm_openmp.cpp ported to processes x threads on compas: SUMMA on the near-square process
// grid, as PRK's MPI dgemm does it; the local product is the original's tiled loop.
// What changed (diff -u prk_dgemm_openmp.cpp prk_dgemm_compas.cpp):
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's OpenMP threads.
//  2. A, B and C become DistArray<double, 2> on Decomposition::grid, indexed (column, row) so that
//     each process's block is column-major as in the original: process (pr, pc) of the grid holds
//     the matrix columns of its grid row pr and the matrix rows of its grid column pc.
//  3. The process's column group and row group (compas::grid_cols, grid_rows) learn who holds
//     which rows and columns (compas::allgather over the group), and each product goes panel by
//     panel: the owner of A's columns k..k+w broadcasts them down its grid column, the owner of
//     B's rows k..k+w along its grid row, and every process adds their product to its block of C.
//  4. The timer starts after rt.barrier(); the job's time is the slowest process's; the checksum
//     is summed over the processes; process 0 prints.
// Usage: prk_dgemm_compas ITERATIONS ORDER [TILE]   (compas-run -n P -t T, mpirun, srun, or alone;
// TILE, 32 if not given, is also the panel width)
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <span>
#include <vector>

#include "compas/compas.hpp"
#include "prk_common.hpp"

using Matrix = compas::DistArray<double, 2>;

namespace {

// Which process of `parts` (ranges in group order) holds index k.
int holder(const std::vector<compas::Range>& parts, long k) {
  int g = 0;
  while (!parts[static_cast<std::size_t>(g)].contains(k)) ++g;
  return g;
}

// One product C += A B, SUMMA over the groups (3): a panel of w columns of A (this process's
// rows) and of w rows of B (its columns) at a time.
void summa(Matrix& a, Matrix& b, Matrix& c, compas::Group& row, compas::Group& col, long order,
           long tile) {
  const compas::Range mrows = a.cols(), mcols = a.rows();   // this process's matrix rows, columns
  const auto col_parts = compas::allgather(col, a.rows());  // matrix columns by grid row
  const auto row_parts = compas::allgather(row, a.cols());  // matrix rows by grid column
  const long m = mrows.size(), n = mcols.size(), width = tile > 0 ? tile : 32;
  std::vector<double> ap(static_cast<std::size_t>(m * width)), bp(ap.size() / m * n);
  for (long k = 0; k < order;) {
    const int pr = holder(col_parts, k), pc = holder(row_parts, k);
    const long w = std::min({width, col_parts[pr].hi - k, row_parts[pc].hi - k});
    if (col.rank() == pr)
      for (long l = 0; l < w; ++l) std::copy_n(&a(k + l, mrows.lo), m, &ap[l * m]);
    if (row.rank() == pc)
      for (long j = 0; j < n; ++j) std::copy_n(&b(mcols.lo + j, k), w, &bp[j * w]);
    compas::broadcast(col, std::span<double>(ap.data(), m * w), pr);
    compas::broadcast(row, std::span<double>(bp.data(), w * n), pc);
#pragma omp parallel
    prk::dgemm_tiles(m, n, w, ap.data(), m, bp.data(), w, &c(mcols.lo, mrows.lo), c.pitch(), tile);
    k += w;
  }
}

}  // namespace

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

  Matrix a = prk::or_bad_input([&] {  // (2)
    return Matrix(rt, {{0, order}, {0, order}},
                  {.halo = 0, .decomposition = compas::Decomposition::grid});
  });
  Matrix b = a.like(), c = a.like();
  compas::Group row = compas::grid_rows(rt), col = compas::grid_cols(rt);  // (3)
#pragma omp parallel for
  for (long j = a.rows().lo; j < a.rows().hi; ++j)
    for (long i = a.cols().lo; i < a.cols().hi; ++i) {
      a(j, i) = b(j, i) = static_cast<double>(j);
      c(j, i) = 0.0;
    }

  double start = 0;
  for (long it = 0; it <= iterations; ++it) {
    if (it == 1) {
      rt.barrier();  // (4)
      start = omp_get_wtime();
    }
    summa(a, b, c, row, col, order, tile);  // (3)
  }
  const double seconds = rt.allreduce(omp_get_wtime() - start, compas::op::max{});  // (4)

  if (prk::perturbed() && c.owned().contains(order - 1, 0)) c(order - 1, 0) *= 2.0;  // C(0, N - 1)
  double checksum = 0;
#pragma omp parallel for reduction(+ : checksum)
  for (long j = c.rows().lo; j < c.rows().hi; ++j)
    for (long i = c.cols().lo; i < c.cols().hi; ++i) checksum += c(j, i);
  checksum = rt.allreduce(checksum, compas::op::sum{});  // (4)
  return prk::dgemm_verdict(iterations, order, checksum, seconds, rt.process() == 0);
}
