// GEMM on a job of P processes x T threads: C = A * B, n x n doubles, by SUMMA over a 2-D grid
// of processes (COMPaS section 5.2), the local products by gemm::multiply (gemm_local.hpp) on
// each process's team.
//
// Distribution: Runtime::process_grid() gives PR x PC (PR <= PC). Process (r, c) owns the block
// C[I_r, J_c] (rows in PR blocks, columns in PC blocks, the first blocks one larger when n does
// not divide), A[I_r, K_c] (A's columns in PC blocks) and B[L_r, J_c] (B's rows in PR blocks).
// A and B are generated from their global indices (a_value, b_value), so every P x T multiplies
// the same matrices.
//
// The k dimension is cut at both partitions' boundaries and then into panels of at most 512.
// Step s multiplies panel s: C[I_r, J_c] += A[I_r, panel] * B[panel, J_c]. The owner of the A
// panel in each process row puts it into the others' panel window with put_signal (one-sided; no
// message buffer, no copy at the receiver); the owner of the B panel in each process column does
// the same down its column. Each process has two slots per matrix (double buffering): thread 0
// posts panel s + 1 (put_signal_nb) before the team multiplies panel s, so the transfer overlaps
// the multiply. A slot is written again only after its receiver has released it (a signal back
// to the writer once the multiply that read it is done).
//
// When P is prime the grid is 1 x P and the algorithm is a 1-D ring: B never moves, and each A
// block travels around the ring; at step s process c multiplies the block of process c - s and
// forwards it to c + 1 (posted before the multiply) while the next one arrives from c - 1.
//
// Regions (per thread): "compute" (the local multiplies), "communicate" (waiting for panels and
// releases, posting puts: the transfer time that was not hidden), "synchronize" (job barriers
// between multiplications and at the end: imbalance between processes).
//
// Verification without gathering C (Freivalds): for a vector x with entries in [0.5, 1.5) from a
// hash, d = C x - A (B x) is computed from the distributed blocks (two vector allreduces) together
// with s = |A| (|B| |x|) + |C| |x|. Rounding alone bounds |d_i| <= (4n + 2P + 8) u s_i (u = 2^-53:
// each of C, B x, A (B x) and C x is a sum of at most n products, plus the sums over processes);
// error = max_i |d_i| / s_i must not exceed that. A wrong element C_ij changes d_i by at least
// half its error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compas/kernels/gemm_local.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas::kernels::detail {
struct TestHooks;  // compas/kernels/test_hooks.hpp: for tests, not part of the interface
}  // namespace compas::kernels::detail

namespace compas::kernels::gemm {

// The generated matrices: elements in [-1, 1) from a hash of (row, column).
double a_value(std::uint64_t row, std::uint64_t col);
double b_value(std::uint64_t row, std::uint64_t col);

struct JobParams {
  std::size_t n = 1800;
  int iters = 3;                            // multiplications timed (the result is the median)
  const detail::TestHooks* test = nullptr;  // faults tests inject (none when null)
  // Keep this process's block of C in the result (tests gather it).
  bool keep_c = false;
};

struct JobResult {
  std::size_t n = 0;
  int grid_rows = 1, grid_cols = 1;  // PR x PC
  bool ring = false;                 // 1-D ring (P prime) rather than 2-D SUMMA
  std::string isa;                   // the local multiply's micro-kernel
  int iters = 0;
  int steps = 0;                     // panels per multiplication
  double seconds = 0;                // one multiplication, slowest process, median over iters
  double seconds_min = 0;            // the fastest iteration
  std::vector<double> iter_seconds;  // every iteration (slowest process)
  double cpu_seconds = 0;            // all processes over the timed iterations
  double flops = 0;                  // 2 n^3
  double gflops = 0;                 // flops / seconds / 1e9
  double panel_bytes = 0;            // bytes put between processes per multiplication (job)
  bool verified = false;
  double error = 0, tolerance = 0;  // Freivalds: max_i |d_i| / s_i and its bound
  std::string verification;
  // With keep_c: this process's block C[row0 .. row0 + rows, col0 .. col0 + cols), row-major.
  std::size_t row0 = 0, rows = 0, col0 = 0, cols = 0;
  std::vector<double> c;
};

// std::invalid_argument naming the value for n < 1 or iters < 1.
// `processes_here`: the job's processes on this host (0: all of them), whose memory this host must
// give together; too much throws std::invalid_argument naming the size and the host's limit
// (base::memory_limit), before anything is allocated.
void check(const JobParams& p, int processes, int processes_here = 0);

// Collective: every process calls it (outside Runtime::run); runs on the runtime's team.
JobResult run(Runtime& rt, const JobParams& p);

}  // namespace compas::kernels::gemm
