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

#include <cstdint>
#include <utility>
#include <vector>

#include "compas/threads/team.hpp"

namespace compas::kernels::cg {

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

// ---- decomposition, work model ------------------------------------------------------------

// Rows [lo, hi) of part `index` of `parts` (processes, or threads of a process): whole chunks,
// counts differing by at most one chunk.
std::pair<std::int64_t, std::int64_t> row_block(std::int64_t na, int parts, int index);

// How the panel sums of a row or a dot product are added (the header comment,
// "Reproducibility"): the panel tree's order, or left to right. `running` needs every panel (the
// rows layout).
enum class SumOrder { tree, running };

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

// The product's loop: automatic takes AVX2 where the CPU has it; generic is the portable loop.
// Both give the same bits (tests run both).
enum class Product { automatic, generic };

// ---- process grids -------------------------------------------------------------------------

// rows: row blocks (row_block), p allgathered; grid: C x C processes as NPB's MPI CG;
// automatic: grid where it sends fewer bytes per process (from P = 16 on, P = C x C with C a
// power of two and at most the class's panel count), rows otherwise.
enum class Decomposition { automatic, rows, grid };
struct Grid {
  int rows = 1, columns = 1;  // columns == 1: the rows decomposition
};
// Convenience for one process: builds the whole matrix and runs the benchmark on `team`.
Result run(threads::Team& team, const ClassParams& cp, SumOrder order = SumOrder::running);

// Verification of a zeta for class cp: |zeta - zeta_verify| / zeta_verify <= kEpsilon.
bool verify(const ClassParams& cp, double zeta, double* error = nullptr);

}  // namespace compas::kernels::cg
