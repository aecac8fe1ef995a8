// CG's internals, for kernels/src and the tests and benchmarks that check them (their include
// path has kernels/src; programs see compas/kernels/cg.hpp only): NPB's random numbers and matrix,
// chunks and panels, layouts and exchanges, the solver of one process, process grids and the
// serial reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "compas/kernels/cg.hpp"
#include "compas/threads/team.hpp"

namespace compas::kernels::cg {

// ---- NPB random numbers --------------------------------------------------------------------

// x_{k+1} = a x_k mod 2^46, returned as x_{k+1} / 2^46 in (0, 1). Done in double arithmetic with
// a and x split in 23-bit halves (NPB's randlc): every intermediate is an integer below 2^53, so
// the results are exact and the same on every IEEE machine. x and a must be integers in
// (0, 2^46) held in doubles.
double randlc(double* x, double a);
// y[0..n) = the next n values of randlc(x, a); x is advanced n steps.
void vranlc(std::int64_t n, double* x, double a, double* y);

inline constexpr double kSeed = 314159265.0;         // NPB CG's tran
inline constexpr double kMultiplier = 1220703125.0;  // 5^13, NPB's amult

// ---- the matrix ----------------------------------------------------------------------------

// Rows [row_lo, row_hi) of the n x n matrix in compressed sparse rows, index base 0: row
// row_lo + i has columns colidx[rowstr[i] .. rowstr[i + 1]) in increasing order and their values.
struct Csr {
  std::int64_t n = 0;
  std::int64_t row_lo = 0, row_hi = 0;
  std::vector<std::int64_t> rowstr;  // rows() + 1 entries, rowstr[0] = 0
  std::vector<std::int32_t> colidx;
  std::vector<double> values;

  std::int64_t rows() const { return row_hi - row_lo; }
  std::int64_t nnz() const { return static_cast<std::int64_t>(values.size()); }
  // Matrix bytes (values, column indices, row starts).
  double bytes() const;
};

// The rows [row_lo, row_hi) of NPB's matrix for `cp` (the whole random sequence is generated;
// duplicates are summed in generation order as NPB's sparse does, so every value is bitwise the
// one NPB computes and does not depend on the range asked for). std::invalid_argument for a range
// outside [0, na].
Csr make_matrix(const ClassParams& cp, std::int64_t row_lo, std::int64_t row_hi);
Csr make_matrix(const ClassParams& cp);  // all rows

// ---- decomposition -------------------------------------------------------------------------

inline constexpr std::int64_t kChunkRows = 64;
// Widest column panel the SpMV sweeps at a time (4096 doubles = 32 KiB of p). The na columns
// form panel_count(na) panels of whole chunks, as even as chunks allow (panel_columns).
inline constexpr std::int64_t kPanelColumns = 4096;

inline std::int64_t chunk_count(std::int64_t na) {
  return (na + kChunkRows - 1) / kChunkRows;
}
// Where a process's share lies. The matrix it is given holds its product rows (Csr::row_lo,
// row_hi) and, of those, the columns of panels [panel_lo, panel_hi), a node of the panel tree
// (all panels for rows; column block j for a grid). Its vectors x, z, r, q (and its part of p)
// are the rows [vector_lo, vector_hi) (whole chunks): its product rows for rows, column block j
// for a grid, where `reduces_product` is set: the product over its columns is only a part of the
// rows' sums, which Exchange::reduce_product completes.
struct Layout {
  std::int64_t vector_lo = 0, vector_hi = 0;
  std::int64_t panel_lo = 0, panel_hi = 0;
  bool reduces_product = false;
  SumOrder sum_order = SumOrder::tree;  // rows_layout's default is running
};
// The rows layout of a matrix of rows [a.row_lo, a.row_hi) and every column; `tree` gives the
// bits of a grid.
Layout rows_layout(const Csr& a, SumOrder order = SumOrder::running);

// How the solver gets what other threads and processes computed. Every method is collective over
// every thread of every process of the job, called in the same order everywhere.
class Exchange {
 public:
  virtual ~Exchange() = default;
  // p has na entries. On entry, each thread of this process has written its own vector rows of
  // p, which together are this process's rows [vector_lo, vector_hi). On return, the entries of
  // the columns of this process's panels are valid on every thread, and no thread writes p again
  // before every thread has returned.
  virtual void assemble_vector(threads::ThreadCtx& t, std::span<double> p) = 0;
  // partials holds k values per chunk of the whole matrix (chunk-major: chunk c's values at
  // [c k, c k + k)). On entry, each thread has written those of its own chunks; on return those
  // of every chunk of this process's panels are valid on every thread. The solver alternates
  // between two arrays, so one array is written again only after every thread of every process
  // has finished with its previous use.
  virtual void assemble_partials(threads::ThreadCtx& t, std::span<double> partials,
                                 std::size_t k) = 0;
  // Every thread of every process has arrived: before the timed part, and at the end of run(),
  // after which no process reads another's arrays (they may be freed).
  virtual void synchronize(threads::ThreadCtx& t) = 0;
  // (Layouts with reduces_product.) w holds this process's sums over its panels for its product
  // rows (index 0 = Csr::row_lo); on return `out` (the vector rows, index 0 = vector_lo) holds
  // the sums over every panel. Every thread passes the same spans; w may be overwritten.
  virtual void reduce_product(threads::ThreadCtx& t, std::span<double> w, std::span<double> out);
  // values: this process's tree sums over its panels (the same on every thread); on return the
  // tree sums over every panel, the same everywhere. By default they already are.
  virtual void combine_sums(threads::ThreadCtx& t, std::span<double> values);
};

// One process: the data is already shared, so every step is a team barrier.
class TeamExchange final : public Exchange {
 public:
  void assemble_vector(threads::ThreadCtx& t, std::span<double>) override { t.barrier(); }
  void assemble_partials(threads::ThreadCtx& t, std::span<double>, std::size_t) override {
    t.barrier();
  }
  void synchronize(threads::ThreadCtx& t) override { t.barrier(); }
};

// ---- work model (the public part: compas/kernels/cg.hpp) ----------------------------------

IterationModel inner_iteration_model(std::int64_t na, std::int64_t rows, std::int64_t nnz,
                                     double matrix_bytes = -1);
inline IterationModel inner_iteration_model(const Csr& a) {
  return inner_iteration_model(a.n, a.rows(), a.nnz());
}
inline std::int64_t panel_count(std::int64_t na) {
  return (na + kPanelColumns - 1) / kPanelColumns;
}
// Columns [first, last) of panel j (0 <= j <= panel_count: panel_count gives {na, na}), and the
// panel of column `col` (in [0, na)).
std::pair<std::int64_t, std::int64_t> panel_columns(std::int64_t na, std::int64_t j);
std::int64_t panel_of(std::int64_t na, std::int64_t col);

// ---- the solver ------------------------------------------------------------------------------

// The solver of one process over its rows `a` (a.n = na; a.row_lo and a.row_hi chunk boundaries
// or na, as row_block gives). Construct outside the team; every thread of the team then calls
// run(t) (and run may be called again for another repetition).
class Solver {
 public:
  // The rows layout (rows_layout(a): panel sums added left to right).
  Solver(const ClassParams& cp, const Csr& a, Exchange& exchange,
         Product product = Product::automatic);
  // std::invalid_argument for a layout the matrix does not fit (check_layout), or the running
  // order over part of the panels.
  Solver(const ClassParams& cp, const Csr& a, Exchange& exchange, const Layout& layout,
         Product product = Product::automatic);
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  // NPB's outer loop: one untimed iteration, x reset to ones, then niter timed iterations (in
  // region "solve"). `before_timed`, when given, runs on every thread between the two (a job
  // starts its region totals and CPU clock there, so that they cover what `seconds` covers).
  // Collective over the team (and the job); the same Result on every thread.
  Result run(threads::ThreadCtx& t,
             const std::function<void(threads::ThreadCtx&)>& before_timed = nullptr);

  // This process's vector rows of z after the last run (index 0 is row vector_lo).
  std::span<const double> z() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- process grids -----------------------------------------------------------------------

// std::invalid_argument, naming P and what is allowed, for a grid that P cannot form. `automatic`
// takes rows when the running sum order is asked for (a grid adds in the tree's order only).
Grid choose_grid(const ClassParams& cp, int processes, Decomposition d,
                 std::optional<SumOrder> order = std::nullopt);
// Rows (and columns) of block k of a grid with `columns` process columns: node k of depth
// log2(columns) of the panel tree, as rows.
std::pair<std::int64_t, std::int64_t> grid_block(std::int64_t na, int columns, int k);
// The layout of process `rank` (= i C + j) of grid g (columns > 1).
Layout grid_layout(std::int64_t na, Grid g, int rank);
// Keeps only a's entries in columns [lo, hi) (rows stay).
void keep_columns(Csr& a, std::int64_t lo, std::int64_t hi);

// NPB's serial algorithm on the whole matrix, one thread, one running sum per dot product in row
// order (the order of NPB's serial code): the reference the parallel solver and class T are
// checked against. seconds and mops are those of the timed part.
Result serial_reference(const ClassParams& cp, const Csr& a);

}  // namespace compas::kernels::cg
