// NAS CG: the conjugate-gradient benchmark of the NAS Parallel Benchmarks 3.x, built exactly as
// the NPB specification builds it so that the official verification values hold.
//
// An inverse power iteration estimates the eigenvalue of a random sparse symmetric positive
// definite matrix A closest to `shift`: each of `niter` outer iterations solves (A - shift I) z = x
// approximately by 25 unpreconditioned CG iterations (conj_grad), then zeta = shift + 1 / (x.z)
// and x = z / ||z||. The matrix is the NPB one: a sum of n outer products of sparse random vectors
// (NPB's makea / sprnvc / vecset / sparse, driven by NPB's linear congruential generator randlc),
// geometrically scaled so that its condition number is about 1 / rcond, with `shift` subtracted
// from the diagonal (NPB stores A - shift I, hence "A" below means that stored matrix).
//
// Decomposition. Rows (any number of processes P): a process holds the rows [row_lo, row_hi) of
// the matrix (make_matrix for that range generates the whole random sequence and keeps its rows,
// as NPB's MPI version does) and the same rows of x, z, r, q; the vector p is held whole, because
// the product A p reads any column: every process sends its rows of p to every other (an
// allgather, about na values per process whatever P is). Grid (P = C x C, C a power of two): as
// NPB's MPI CG, process (i, j) holds the block of rows i and columns j, where block k is the k-th
// node of depth log2 C of the panel tree (below); its vectors are those of column block j (the
// processes of a process column hold the same vectors); its product over its columns is reduced
// along its process row (log2 C steps, halving the rows each time) and each process sends its
// piece of the sums to the process column that holds those rows as vectors (the transpose):
// about 2 na / C values per process. The rows of a process are split among its threads in whole
// chunks. Everything the solver needs from other threads or processes goes through an
// `Exchange`, given the process's `Layout`. `TeamExchange` is the single-process one (team
// barriers); a distributed job supplies one that also moves data between processes.
//
// Reproducibility: rows are grouped in chunks of kChunkRows (a constant), and every thread and
// process boundary is a chunk boundary. Columns are grouped in panels of at most kPanelColumns
// (whole chunks, as even as chunks allow). An SpMV row is a sum of the row's panel sums, each
// summed from 0 in the row's column order; a dot product is a sum of its panel sums, each the sum
// of the panel's chunks' partial sums (themselves in row order) in chunk order. The panel sums
// are added in one of two orders (SumOrder): `tree`, the panels [0, np) as a fixed binary tree (a
// node's first ceil(n / 2) panels, then the rest; left + right at each node), or `running`, left
// to right. A grid adds in the tree's order (its reductions combine the nodes of the same tree,
// cg_tree.hpp); the rows layout adds left to right unless asked for the tree (rows_layout): a
// running sum needs no arrays of waiting left siblings, so one thread keeps its rows in one
// group, and with one thread per process the product is 5 to 8% faster at class B (19 panels)
// than in the tree's order. Products, SpMV rows and vector updates are the same expressions whoever
// computes them, so results (zeta, rnorm, every vector) are bitwise identical, for one order, for
// any number of threads and any number of processes whose row blocks come from row_block(); in the
// tree's order also for any grid. The two orders differ in the last bits, as both do from NPB's
// single running sum (serial_reference), well inside the verification tolerance. (Classes S, W and
// T have one or two panels, where both orders are the panels' order.) The solver sweeps its rows
// once per panel, so the panel's part of the vector, 32 KiB, stays in the first level cache while
// the matrix streams past: the gather no longer waits on the L2. It stores each panel in slices
// of 8 rows summed side by side, SELL-8 with the rows of each chunk sorted by length, so that the
// loop is not one short, unpredictable trip per row and panel.
//
// Classes: the official S, W, A, B, C (verification value of NPB 3.x, relative epsilon 1e-10), and
// T, a tiny class of this project: S's order with W's density and shift (na = 1400, nonzer = 8,
// shift = 12, 15 iterations), 99,456 nonzeros whose values and column indices take 1.19 MB: a
// matrix about the size of a cache, with more nonzeros per row than S, cheap enough for sanitizer
// runs. T has no official zeta. Its verification value is the zeta of serial_reference() (NPB's
// serial algorithm in NPB's summation order, itself checked against the official values of S and
// W) on make_matrix(T), written down with 17 digits; the tests recompute it and check that the
// inverse iteration has converged (the last two zetas agree to 1e-12), so a change of generator or
// solver that moves T shows up there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

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

// ---- classes -------------------------------------------------------------------------------

struct ClassParams {
  char cls = 'S';
  std::int64_t na = 1400;  // order of the matrix
  int nonzer = 7;          // nonzeros per random vector (before vecset adds the diagonal one)
  int niter = 15;          // outer (inverse power) iterations, timed
  double shift = 10;
  double rcond = 0.1;
  double zeta_verify = 0;  // expected zeta after niter iterations
  bool official = true;    // zeta_verify is NPB's (false for T: see the header comment)
};

inline constexpr int kCgIterations = 25;   // NPB's cgitmax: CG iterations per conj_grad
inline constexpr double kEpsilon = 1e-10;  // NPB's relative verification tolerance

// 'S', 'W', 'A', 'B', 'C' or 'T' (either case); std::invalid_argument otherwise.
ClassParams params(char cls);

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
// Rows [lo, hi) of part `index` of `parts` (processes, or threads of a process): whole chunks,
// counts differing by at most one chunk.
std::pair<std::int64_t, std::int64_t> row_block(std::int64_t na, int parts, int index);

// Where a process's share lies. The matrix it is given holds its product rows (Csr::row_lo,
// row_hi) and, of those, the columns of panels [panel_lo, panel_hi), a node of the panel tree
// (all panels for rows; column block j for a grid). Its vectors x, z, r, q (and its part of p)
// are the rows [vector_lo, vector_hi) (whole chunks): its product rows for rows, column block j
// for a grid, where `reduces_product` is set: the product over its columns is only a part of the
// rows' sums, which Exchange::reduce_product completes.
// How the panel sums of a row or a dot product are added (the header comment,
// "Reproducibility"): the panel tree's order, or left to right. `running` needs every panel (the
// rows layout).
enum class SumOrder { tree, running };
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

// ---- work model ----------------------------------------------------------------------------

// One inner CG iteration over `rows` rows holding `nnz` nonzeros of an na-column matrix, as this
// implementation does it: q = A p fused with the partials of p.q; z += alpha p and r -= alpha q
// fused with the partials of r.r; p = r + beta p. Flops: 2 nnz + 10 rows. Bytes (as STREAM counts
// them: read + written, no write-allocate): the matrix, `matrix_bytes` when given (the solver's
// slices: 10 bytes per stored entry, padding included (a value and a 16-bit column offset in
// the panel), and 12 bytes per slice and panel of offsets and row map; Result::model), else plain
// CSR's values 8 nnz, colidx 4 nnz and row pointers 8 (rows + 1); p read once (8 na: every column
// is touched at least once when the whole vector is in cache, the floor under the gather's real
// traffic), q written (8 rows); z, p, r, q read and z, r written (48 rows); r, p read and p written
// (24 rows).
struct IterationModel {
  double flops = 0;
  double matrix_bytes = 0;
  double vector_bytes = 0;
  double bytes() const { return matrix_bytes + vector_bytes; }
  double intensity() const { return bytes() > 0 ? flops / bytes() : 0; }  // flop per byte
};
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

// NPB's operation count of the timed part (what NPB divides by the time for Mop/s):
// 2 niter na (3 + nonzer (nonzer + 1) + 25 (5 + nonzer (nonzer + 1)) + 3).
double npb_flops(const ClassParams& cp);

// ---- the benchmark -------------------------------------------------------------------------

struct Result {
  char cls = 'S';
  int threads = 1;
  double zeta = 0;
  double rnorm = 0;  // ||x - A z|| of the last conj_grad
  double zeta_verify = 0;
  double error = 0;  // |zeta - zeta_verify| / zeta_verify
  bool verified = false;
  double seconds = 0;                // the niter timed iterations, as this thread saw them
  double mops = 0;                   // npb_flops / seconds / 1e6
  std::int64_t nnz = 0;              // this process's
  IterationModel model;              // one inner iteration of this process's rows
  std::vector<double> zeta_history;  // zeta after each timed iteration
};

// The solver of one process over its rows `a` (a.n = na; a.row_lo and a.row_hi chunk boundaries
// or na, as row_block gives). Construct outside the team; every thread of the team then calls
// run(t) (and run may be called again for another repetition).
// The product's loop: automatic takes AVX2 where the CPU has it; generic is the portable loop.
// Both give the same bits (tests run both).
enum class Product { automatic, generic };

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

// ---- process grids -------------------------------------------------------------------------

// rows: row blocks (row_block), p allgathered; grid: C x C processes as NPB's MPI CG;
// automatic: grid where it sends fewer bytes per process (from P = 16 on, P = C x C with C a
// power of two and at most the class's panel count), rows otherwise.
enum class Decomposition { automatic, rows, grid };
struct Grid {
  int rows = 1, columns = 1;  // columns == 1: the rows decomposition
};
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

// Convenience for one process: builds the whole matrix and runs the benchmark on `team`.
Result run(threads::Team& team, const ClassParams& cp, SumOrder order = SumOrder::running);

// NPB's serial algorithm on the whole matrix, one thread, one running sum per dot product in row
// order (the order of NPB's serial code): the reference the parallel solver and class T are
// checked against. seconds and mops are those of the timed part.
Result serial_reference(const ClassParams& cp, const Csr& a);

// Verification of a zeta for class cp: |zeta - zeta_verify| / zeta_verify <= kEpsilon.
bool verify(const ClassParams& cp, double zeta, double* error = nullptr);

}  // namespace compas::kernels::cg
