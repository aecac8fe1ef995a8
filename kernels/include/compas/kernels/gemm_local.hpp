// gemm_local: the node-local part of the GEMM kernel, C = A * B (double, row-major), with the
// blocking and tiling of COMPaS section 5.2 done the GotoBLAS / BLIS way.
//
// Row-major C = A * B is column-major C^T = B^T * A^T, so the roles of BLIS's operands swap: the
// micro-kernel's vectors run along the rows of B and C (contiguous), A's values are broadcast.
// Loops, outermost first:
//
//   ic  over m in steps of mc        one shared A block, mc x k, packed once for the team
//   unit  a block of C's columns     (nc wide or less; handed out by a shared counter)
//    pc  over k in steps of kc       pack B[pc.., unit] (kc x nc) into this thread's buffer (L2)
//     ir  over the unit's rows       one A micro-panel (mr x kc) stays in L1 ...
//      jr  over the B block          ... while the B micro-panels (kc x nr) stream from L2
//       micro-kernel: an mr x nr tile of C in registers, kc rank-1 updates with FMA
//
// Threads: units are taken from a shared counter, several per thread, so the load balances and a
// thread that the OS delays (a shared or oversubscribed machine) leaves its share to the others;
// when there are too few column blocks, units are row chunks of them. Each A micro-panel x kc
// chunk of the shared block is packed by the first thread that needs it (a per-chunk flag: claim,
// pack, publish); a thread that finds its chunk being packed packs the next ones meanwhile, and
// waits with the team's wait policy. So a call has two team barriers (start and end), plus one
// per further A block when m x k exceeds the block budget. Every element of C is computed by one
// thread in the same order whatever the thread count, so results are bitwise reproducible.
// Packed buffers live in a Workspace reused across calls. Edges (any m, n, k, including 0) are
// handled by zero-padded packing and masked or scratch edge tiles.
//
// Micro-kernels: AVX-512 8 x 24 (24 zmm accumulators), AVX2 + FMA 6 x 8 (12 ymm), and a portable
// generic 4 x 8 in plain C++. The best the CPU supports is chosen at run time; COMPAS_GEMM_ISA
// (generic | avx2 | avx512) or an explicit Isa forces one.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "compas/base/isa.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/topology.hpp"

namespace compas::kernels::gemm {

// The micro-kernel's instruction set: base::Isa (generic, avx2 or avx512 here: there is no
// sse2 kernel); std::nullopt chooses one (resolve_isa).
using Isa = base::Isa;

// "auto" (std::nullopt), "generic", "avx2", "avx512"; throws std::invalid_argument naming the
// value otherwise.
std::optional<Isa> parse_isa(std::string_view name);
// Whether this CPU (and OS) can run the ISA's micro-kernel; generic always can, sse2 never.
bool isa_supported(Isa isa);
// What no ISA resolves to: COMPAS_GEMM_ISA when set (std::invalid_argument when it names an
// unknown or unsupported ISA), else the best the CPU supports; a given ISA, checked.
Isa resolve_isa(std::optional<Isa> isa = std::nullopt);
// Name of the ISA a default Workspace uses: "avx512", "avx2" or "generic".
std::string isa_used();

// Register and cache blocking. mr x nr is the micro-tile; kc the depth of one rank-kc update
// (the A micro-panel, mr x kc, stays in L1 while B micro-panels stream past); nc the widest
// B block (kc x nc in about half of one core's L2); mc the most rows of one shared A block, which
// holds mc x k packed and is also kept within a_block_bytes (it is streamed, not cached: each
// unit reads its rows once per depth step).
struct Blocking {
  Isa isa = Isa::generic;
  std::size_t mr = 4, nr = 8;
  std::size_t kc = 256, nc = 256, mc = 4096;
  std::size_t a_block_bytes = std::size_t{64} << 20;
};

// Blocking for the caches of `topo` (sizes per level; defaults when hwloc does not know them)
// and the ISA (resolved as resolve_isa does). Throws std::invalid_argument for an ISA the CPU
// cannot run.
Blocking choose_blocking(const threads::Topology& topo, std::optional<Isa> isa = std::nullopt);
// The same for the host this process runs on (its topology is read once).
Blocking choose_blocking(std::optional<Isa> isa = std::nullopt);

// Packed buffers reused across calls: the team's A block with its per-chunk flags, and one B
// block per thread, each in its own aligned allocation (huge pages asked for when large), and the
// counters that hand out units. One Workspace serves one team (or one thread) at a time; buffers
// grow on demand and are never shrunk.
class Workspace {
 public:
  Workspace();  // choose_blocking() for the host
  // Throws std::invalid_argument when the blocking does not fit its ISA's micro-kernel or the
  // ISA cannot run here.
  explicit Workspace(const Blocking& blocking);
  ~Workspace();
  Workspace(Workspace&&) noexcept;
  Workspace& operator=(Workspace&&) noexcept;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  const Blocking& blocking() const { return blocking_; }
  // Bytes of packing buffers allocated so far.
  std::size_t bytes() const;

  struct State;  // buffers and counters, defined in gemm_local.cpp
  State& state() { return *state_; }

 private:
  Blocking blocking_;
  std::unique_ptr<State> state_;
};

// C[m x n] = A[m x k] * B[k x n] (accumulate: C += A * B), row-major with leading dimensions
// lda >= k, ldb >= n, ldc >= n (elements). Called by every thread of the team with the same
// arguments and the same Workspace; returns on every thread when all of C is written. C must not
// overlap A or B. With accumulate false C is only written (its old contents, NaN included, do not
// matter); with k = 0 that writes zeros. Throws std::invalid_argument (on every thread, before
// anything is touched) for leading dimensions that are too small.
void multiply(threads::ThreadCtx& t, std::size_t m, std::size_t n, std::size_t k, const double* A,
              std::size_t lda, const double* B, std::size_t ldb, double* C, std::size_t ldc,
              bool accumulate, Workspace& ws);
// The same on the calling thread alone.
void multiply(std::size_t m, std::size_t n, std::size_t k, const double* A, std::size_t lda,
              const double* B, std::size_t ldb, double* C, std::size_t ldc, bool accumulate,
              Workspace& ws);

// Floating-point operations of one multiply (2 m n k).
inline double flops(std::size_t m, std::size_t n, std::size_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

}  // namespace compas::kernels::gemm
