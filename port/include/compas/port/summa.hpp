// compas::Summa: C += A B over 2-D DistArrays on a process grid (SUMMA, as PRK's and ScaLAPACK's
// MPI codes do it), where a port from OpenMP keeps its own local product (a tile loop, a BLAS
// call) and drops the panel copies, the owner lookups and the broadcasts along the grid's rows
// and columns:
//
//   // matrices stored column-major: x(j, i) is X(i, j), so each process's block is column-major
//   const compas::DistOptions o{.halo = 0, .decomposition = compas::Decomposition::grid};
//   compas::DistArray<double, 2> a(rt, {{0, k}, {0, m}}, o), b(rt, {{0, n}, {0, k}}, o),
//       c(rt, {{0, n}, {0, m}}, o);                // A: m x k, B: k x n, C: m x n
//   compas::Summa summa(a, b, c, 64);              // once: checks, the row and column groups
//   summa([&](const compas::SummaPanels<double>& p) {  // one C += A B
//     my_gemm(p.m, p.n, p.k, p.a, p.lda, p.b, p.ldb, p.c, p.ldc);  // C(m x n) += A(m x k) B(k x n)
//   });
//
// Layout: every array is indexed (column, row) of its matrix, so that its local block is
// column-major with leading dimension pitch() (BLAS's and Fortran's layout): A is M x K
// (domain {K columns, M rows}), B is K x N, C is M x N, any origins, the three cut over the same
// process grid (Decomposition::grid, or rows: a P x 1 grid), any halos. Process (r, s) of the grid
// holds C's block of the matrix rows of grid column s and the matrix columns of grid row r.
//
// How: for each panel of `width` matrix columns of A (and rows of B; cut shorter where a part
// ends), the process holding it in each grid column copies its A panel and broadcasts it down
// the grid column, the holder in each grid row broadcasts its B panel along the grid row, and
// every process calls local_product once with the two panels and its block of C:
// SummaPanels::a is m x k, b is k x n (column-major, contiguous), c is C's block. local_product
// runs on the calling thread and may open `#pragma omp parallel` (the Runtime pinned the team).
//
// Funneled and collective (collectives.hpp): the thread that made the Runtime, outside run() and
// outside parallel regions; every process makes the same Summa (making it makes two Groups, a
// collective) and the same calls. Errors, the same on every process before anything moves
// (CollectiveError): processes that pass different shapes, grids or widths (naming rank 0's and
// the differing rank's), shapes that do not make a product or arrays not cut over one grid
// (naming the three), a width < 1, c being a or b; std::logic_error from another thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "compas/port/dist_array.hpp"
#include "compas/runtime/collectives.hpp"
#include "compas/runtime/group.hpp"
#include "compas/runtime/range.hpp"

namespace compas {

// One step of C += A B on this process: C(m x n) += A(m x k) B(k x n), column-major, each matrix
// `ld` elements from one column to the next.
template <class T>
struct SummaPanels {
  index m = 0, n = 0, k = 0;
  const T* a = nullptr;
  index lda = 0;
  const T* b = nullptr;
  index ldb = 0;
  T* c = nullptr;
  index ldc = 0;
};

namespace detail {

// The grid's row and column groups of this process, made after the checks (port/src/summa.cpp).
struct SummaGroups {
  Group rows, cols;  // this process's grid row (group rank: grid column) and grid column
};
// The three arrays as the checks see them: each one's global domain (columns x rows of its matrix).
struct SummaArrays {
  DistBase *a, *b, *c;
  Range2 da, db, dc;
};
SummaGroups summa_groups(const SummaArrays& x, index width, std::size_t elem_bytes);

}  // namespace detail

template <class T>
class Summa {
 public:
  // Collective: checks the three arrays (see the top) and makes the groups. The plan refers to
  // the arrays: keep them alive and in place (swap is fine).
  Summa(DistArray<T, 2>& a, DistArray<T, 2>& b, DistArray<T, 2>& c, index width)
      : a_(&a),
        b_(&b),
        c_(&c),
        width_(width),
        g_(detail::summa_groups({&a, &b, &c, a.domain(), b.domain(), c.domain()}, width,
                                sizeof(T))) {}

  // One C += A B: local_product(const SummaPanels<T>&) once per panel, on every process.
  template <class F>
  void operator()(F&& local_product) {
    const Range mrows = c_->cols(), mcols = c_->rows(), kdom = a_->domain().rows;
    const ProcessGrid grid = c_->process_grid();
    const index m = mrows.size(), n = mcols.size();
    ap_.resize(static_cast<std::size_t>(m * width_));
    bp_.resize(static_cast<std::size_t>(width_ * n));
    for (index k = kdom.lo; k < kdom.hi;) {
      const index pr = part_holding(kdom, grid.rows, k), pc = part_holding(kdom, grid.cols, k);
      const index w = std::min(
          {width_, block_of(kdom, grid.rows, pr).hi - k, block_of(kdom, grid.cols, pc).hi - k});
      if (g_.cols.process() == pr)
        for (index l = 0; l < w; ++l) std::copy_n(&(*a_)(k + l, mrows.lo), m, &ap_[l * m]);
      if (g_.rows.process() == pc)
        for (index j = 0; j < n; ++j) std::copy_n(&(*b_)(mcols.lo + j, k), w, &bp_[j * w]);
      broadcast(g_.cols, std::span<T>(ap_.data(), m * w), static_cast<int>(pr));
      broadcast(g_.rows, std::span<T>(bp_.data(), w * n), static_cast<int>(pc));
      local_product(SummaPanels<T>{m, n, w, ap_.data(), m, bp_.data(), w,
                                   &(*c_)(mcols.lo, mrows.lo), c_->pitch()});
      k += w;
    }
  }

 private:
  DistArray<T, 2>*a_, *b_, *c_;
  index width_;
  detail::SummaGroups g_;
  std::vector<T> ap_, bp_;  // this step's panels of A (m x w) and B (w x n)
};

// One-shot: a Summa made and used once (it makes and destroys two Groups: in a loop, keep one).
template <class T, class F>
void summa(DistArray<T, 2>& a, DistArray<T, 2>& b, DistArray<T, 2>& c, index width,
           F&& local_product) {
  Summa<T>(a, b, c, width)(std::forward<F>(local_product));
}

}  // namespace compas
