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
// Decomposition: rows. A process holds the rows [row_lo, row_hi) of the matrix (make_matrix for
// that range generates the whole random sequence and keeps its rows, as NPB's MPI version does)
// and the same rows of x, z, r, q; the vector p is held whole, because the product A p reads any
// column. The rows of a process are split among its threads. Everything the solver needs from
// other threads or processes goes through an `Exchange`: "every process has written its block of
// this array; make the whole array valid everywhere", used for p (and for z before the residual)
// and for the partial sums of the dot products. `TeamExchange` is the single-process one (a team
// barrier); a distributed job supplies one that also moves the blocks between processes.
//
// Reproducibility: rows are grouped in chunks of kChunkRows (a constant), and every thread and
// process boundary is a chunk boundary (row_block). A dot product is the sum over chunks, in chunk
// order, of per-chunk sums taken in row order; products, SpMV rows and vector updates are the same
// expressions whoever computes them. An SpMV row is summed panel by panel over the column panels
// [j kPanelColumns, (j + 1) kPanelColumns) (fixed, global): the row's sum is ((0 + s_0) + s_1) +
// ..., s_j the sum of its products with columns in panel j, in the row's column order. (The solver
// sweeps its rows once per panel, so the panel's part of the vector, 32 KiB, stays in the first
// level cache while the matrix streams past: the gather no longer waits on the L2. It stores each
// panel in slices of 8 rows summed side by side, SELL-8 with the rows of each chunk sorted by
// length, so that the loop is not one short, unpredictable trip per row and panel.) Results (zeta,
// rnorm, every vector) are therefore bitwise identical for any number of threads, and for any
// number of processes whose row blocks come from row_block(). They differ in the last bits from
// NPB's single running sum (serial_reference), well inside the verification tolerance.
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
#include <memory>
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
// Width of the column panels the SpMV sweeps one at a time (4096 doubles = 32 KiB of p).
inline constexpr std::int64_t kPanelColumns = 4096;

inline std::int64_t chunk_count(std::int64_t na) {
  return (na + kChunkRows - 1) / kChunkRows;
}
// Rows [lo, hi) of part `index` of `parts` (processes, or threads of a process): whole chunks,
// counts differing by at most one chunk.
std::pair<std::int64_t, std::int64_t> row_block(std::int64_t na, int parts, int index);

// How the solver gets what other threads and processes computed. Every method is collective over
// every thread of every process of the job, called in the same order everywhere.
class Exchange {
 public:
  virtual ~Exchange() = default;
  // p has na entries. On entry, each thread of this process has written its own rows of p, which
  // together are this process's rows [row_lo, row_hi). On return, all na entries are valid on
  // every thread, and no thread writes p again before every thread has returned.
  virtual void assemble_vector(threads::ThreadCtx& t, std::span<double> p) = 0;
  // partials holds k values per chunk of the whole matrix (chunk-major: chunk c's values at
  // [c k, c k + k)). On entry, each thread has written those of its own chunks; on return all
  // of them are valid on every thread. The solver alternates between two arrays, so one array is
  // written again only after every thread of every process has finished with its previous use.
  virtual void assemble_partials(threads::ThreadCtx& t, std::span<double> partials,
                                 std::size_t k) = 0;
  // Every thread of every process has arrived: before the timed part, and at the end of run(),
  // after which no process reads another's arrays (they may be freed).
  virtual void synchronize(threads::ThreadCtx& t) = 0;
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
  Solver(const ClassParams& cp, const Csr& a, Exchange& exchange,
         Product product = Product::automatic);
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  // NPB's outer loop: one untimed iteration, x reset to ones, then niter timed iterations.
  // Collective over the team (and the job); the same Result on every thread.
  Result run(threads::ThreadCtx& t);

  // This process's rows of z after the last run (index 0 is row a.row_lo).
  std::span<const double> z() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Convenience for one process: builds the whole matrix and runs the benchmark on `team`.
Result run(threads::Team& team, const ClassParams& cp);

// NPB's serial algorithm on the whole matrix, one thread, one running sum per dot product in row
// order (the order of NPB's serial code): the reference the parallel solver and class T are
// checked against. seconds and mops are those of the timed part.
Result serial_reference(const ClassParams& cp, const Csr& a);

// Verification of a zeta for class cp: |zeta - zeta_verify| / zeta_verify <= kEpsilon.
bool verify(const ClassParams& cp, double zeta, double* error = nullptr);

}  // namespace compas::kernels::cg
