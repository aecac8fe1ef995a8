// gemm_local: ISA choice, cache blocking, the packed workspace and the blocked loops over a team
// (see gemm_local.hpp for the scheme).
#include "compas/kernels/gemm_local.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>

#include "compas/base/env.hpp"
#include "compas/base/isa.hpp"
#include "compas/base/pages.hpp"
#include "compas/threads/wait.hpp"
#include "gemm_local_kernels.hpp"

namespace compas::kernels::gemm {

namespace {

bool cpu_has_avx2() {
  return base::cpu_runs(base::Isa::avx2) && detail::have_avx2_kernels();
}

bool cpu_has_avx512() {
  return base::cpu_runs(base::Isa::avx512) && detail::have_avx512_kernels();
}

const detail::KernelSet& kernels_for(Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return detail::avx512_kernels();
    case Isa::avx2:
      return detail::avx2_kernels();
    default:
      return detail::generic_kernels();
  }
}

std::size_t round_up(std::size_t x, std::size_t unit) {
  return (x + unit - 1) / unit * unit;
}
std::size_t round_down(std::size_t x, std::size_t unit) {
  return x / unit * unit;
}
std::size_t div_up(std::size_t x, std::size_t d) {
  return (x + d - 1) / d;
}

}  // namespace

std::optional<Isa> parse_isa(std::string_view name) {
  if (name == "auto") return std::nullopt;
  if (name == "generic") return Isa::generic;
  if (name == "avx2") return Isa::avx2;
  if (name == "avx512") return Isa::avx512;
  throw std::invalid_argument("gemm: unknown ISA '" + std::string(name) +
                              "' (allowed: auto, generic, avx2, avx512)");
}

bool isa_supported(Isa isa) {
  switch (isa) {
    case Isa::generic:
      return true;
    case Isa::sse2:
      return false;  // no kernel of its own: the generic one is compiled for the baseline
    case Isa::avx2:
      return cpu_has_avx2();
    case Isa::avx512:
      return cpu_has_avx512();
  }
  return false;
}

Isa resolve_isa(std::optional<Isa> isa) {
  if (!isa) {
    const auto& var = base::vars::gemm_isa;
    if (const auto i = base::env_choice(var)) {
      const std::string& name = var.choices[*i];
      isa = parse_isa(name);
      if (isa && !isa_supported(*isa))
        base::env_reject(var.name, name, "this CPU cannot run it; " + var.allowed());
    }
  }
  if (!isa) {
    if (cpu_has_avx512()) return Isa::avx512;
    if (cpu_has_avx2()) return Isa::avx2;
    return Isa::generic;
  }
  if (!isa_supported(*isa))
    throw std::invalid_argument(std::string("gemm: ISA ") + to_string(*isa) +
                                " is not supported by this CPU");
  return *isa;
}

std::string isa_used() {
  return to_string(resolve_isa());
}

Blocking choose_blocking(const threads::Topology& topo, std::optional<Isa> isa) {
  Blocking b;
  b.isa = resolve_isa(isa);
  const detail::KernelSet& ks = kernels_for(b.isa);
  b.mr = ks.mr;
  b.nr = ks.nr;

  // Per-thread share of each level (a cache shared by several PUs is shared by their threads).
  auto share = [&](int level, std::uint64_t fallback) -> std::uint64_t {
    for (const threads::CacheLevel& c : topo.caches())
      if (c.level == level && c.type != "instruction" && c.size_bytes > 0)
        return c.size_bytes / static_cast<std::uint64_t>(std::max(1, c.shared_by));
    return fallback;
  };
  const std::uint64_t l1 = share(1, 32 << 10), l2 = share(2, 256 << 10);
  const std::size_t d = sizeof(double);

  // kc: the A micro-panel (mr x kc), reused from L1 across a whole B block, in a third of L1;
  // the B micro-panels stream through the rest from L2. Deeper steps mean fewer passes over C
  // (each depth step reads and writes the unit's C block once), which is what limits two threads
  // sharing the memory bus; measured on a 48 KiB-L1 AVX-512 core, kc = 256 beat 144 (both panels
  // in L1) by 3-8% with two threads and tied with one, and beat 384.
  b.kc = round_down(static_cast<std::size_t>(l1 / 3) / (b.mr * d), 8);
  b.kc = std::clamp<std::size_t>(b.kc, 64, 512);
  // nc: the packed B block (kc x nc) in half of this thread's L2.
  b.nc = round_down(static_cast<std::size_t>(l2 / 2) / (b.kc * d), b.nr);
  b.nc = std::clamp<std::size_t>(b.nc, b.nr, 4096);
  // mc, a_block_bytes: the shared A block (mc x k) is read once per unit and depth step, at a low
  // rate, so it need not stay in any cache; a large block means B is packed once per unit and
  // depth step only. The budget bounds memory, the row cap keeps the flags few.
  b.mc = round_down(4096, b.mr);
  b.a_block_bytes = std::size_t{64} << 20;
  return b;
}

Blocking choose_blocking(std::optional<Isa> isa) {
  static const threads::Topology topo = threads::Topology::host();
  return choose_blocking(topo, isa);
}

// ---- workspace --------------------------------------------------------------------------------

namespace detail {

// An aligned allocation that only grows: 4 KiB aligned, or 2 MiB aligned with transparent huge
// pages asked for once it is that large (the packed blocks are walked linearly; TLB misses add up).
struct Buffer {
  double* data = nullptr;
  std::size_t bytes = 0;
  base::AlignedBytes mem;

  void ensure(std::size_t doubles) {
    const std::size_t need = doubles * sizeof(double);
    if (need <= bytes) return;
    mem = base::huge_aligned_alloc(need, &bytes);  // the old buffer goes once the new one is there
    data = static_cast<double*>(mem.get());
  }
};

// The next unit of an A block to hand out, alone on its cache line.
struct alignas(64) UnitCounter {
  std::atomic<std::size_t> next{0};
};

}  // namespace detail

struct Workspace::State {
  detail::Buffer a;  // the shared A block: micro-panel strips of mr x k, one after the other
  // One flag per (micro-panel, depth step) chunk of the A block: 2e while a thread packs it in
  // epoch e, 2e + 1 once packed. Every A block a call uses is a new epoch, so flags never need
  // clearing.
  std::unique_ptr<threads::WaitWord[]> flags;
  std::size_t nflags = 0;
  std::uint32_t epoch = 0;
  std::vector<std::unique_ptr<detail::Buffer>> b;  // one B block per thread
  detail::UnitCounter units[2];                    // alternate over A blocks
};

Workspace::Workspace() : Workspace(choose_blocking()) {}
Workspace::Workspace(const Blocking& blocking)
    : blocking_(blocking), state_(std::make_unique<State>()) {
  if (!isa_supported(blocking_.isa))
    throw std::invalid_argument(std::string("gemm: Workspace needs a supported ISA (got ") +
                                to_string(blocking_.isa) + ")");
  const detail::KernelSet& ks = kernels_for(blocking_.isa);
  if (blocking_.mr != ks.mr || blocking_.nr != ks.nr)
    throw std::invalid_argument("gemm: micro-tile " + std::to_string(blocking_.mr) + " x " +
                                std::to_string(blocking_.nr) + " does not match the " +
                                to_string(blocking_.isa) + " kernel's " + std::to_string(ks.mr) +
                                " x " + std::to_string(ks.nr));
  if (blocking_.kc == 0 || blocking_.mc == 0 || blocking_.nc == 0)
    throw std::invalid_argument("gemm: kc, mc and nc must be positive");
  blocking_.mc = round_up(blocking_.mc, blocking_.mr);
  blocking_.nc = round_up(blocking_.nc, blocking_.nr);
}
Workspace::~Workspace() = default;
Workspace::Workspace(Workspace&&) noexcept = default;
Workspace& Workspace::operator=(Workspace&&) noexcept = default;

std::size_t Workspace::bytes() const {
  std::size_t total = state_->a.bytes + state_->nflags * sizeof(threads::WaitWord);
  for (const auto& b : state_->b)
    if (b) total += b->bytes;
  return total;
}

// ---- the blocked product -----------------------------------------------------------------------

namespace {

struct Sync {
  threads::ThreadCtx* t;
  int thread() const { return t ? t->thread() : 0; }
  int threads() const { return t ? t->threads() : 1; }
  void barrier() const {
    if (t) t->barrier();
  }
};

// How the columns of C are cut into blocks: as few as nc allows, but with more than one thread at
// least two per thread where the columns allow it, and a multiple of the thread count, so that
// the blocks spread evenly and a delayed thread leaves work to the others. Block widths are whole
// cache lines (8 doubles; the edge kernels cost what their width needs, so blocks need not be
// whole micro-tiles), and when every row of C starts at the same offset within a line, the
// boundaries are shifted onto line boundaries so that no two threads write one line of C.
struct ColumnPlan {
  std::size_t width;   // multiple of 8
  std::size_t shift;   // block j starts at j * width - shift (the first at 0), the last ends at n
  std::size_t blocks;  // the last is at most width + 7 wide
  std::size_t n;
  std::size_t begin(std::size_t j) const {
    return j == 0 ? 0 : j == blocks ? n : j * width - shift;
  }
};

ColumnPlan plan_columns(std::size_t n, int threads, std::size_t nc, std::size_t nr, const double* C,
                        std::size_t ldc) {
  const std::size_t T = static_cast<std::size_t>(threads);
  const std::size_t panels = div_up(n, nr);
  std::size_t blocks = div_up(n, nc);
  if (T > 1) blocks = std::min(panels, round_up(std::max(blocks, 2 * T), T));
  const std::size_t width = std::max(nr, round_up(div_up(n, blocks), 8));
  const auto address = reinterpret_cast<std::uintptr_t>(C);
  const std::size_t shift =
      (T > 1 && ldc % 8 == 0 && address % sizeof(double) == 0) ? (address / sizeof(double)) % 8 : 0;
  return {width, shift, div_up(n, width), n};
}

// Rows of an A block of mb rows per unit: all of them, unless there are too few column blocks to
// give every thread two units.
std::size_t plan_rows(std::size_t mb, std::size_t column_blocks, int threads, std::size_t mr) {
  const std::size_t want = 2 * static_cast<std::size_t>(threads);
  if (threads == 1 || column_blocks >= want) return round_up(mb, mr);
  const std::size_t chunks = std::min(div_up(mb, mr), div_up(want, column_blocks));
  return round_up(div_up(mb, chunks), mr);
}

void check_args(std::size_t m, std::size_t n, std::size_t k, std::size_t lda, std::size_t ldb,
                std::size_t ldc, const double* A, const double* B, const double* C) {
  auto fail = [](const char* what, std::size_t ld, std::size_t need) {
    throw std::invalid_argument(std::string("gemm: ") + what + " = " + std::to_string(ld) +
                                " is smaller than " + std::to_string(need));
  };
  if (m && k && lda < k) fail("lda", lda, k);
  if (k && n && ldb < n) fail("ldb", ldb, n);
  if (m && n && ldc < n) fail("ldc", ldc, n);
  if ((m && n && C == nullptr) || (m && n && k && (A == nullptr || B == nullptr)))
    throw std::invalid_argument("gemm: null matrix");
}

// The shared A block of one call: chunk (q, p) is micro-panel q (rows ic + q mr ...) over depth
// step p, packed at most once per epoch by whichever thread needs it first.
struct ABlock {
  const detail::KernelSet& ks;
  const double* A;
  std::size_t lda, m, k, kc, mr;
  double* data;
  threads::WaitWord* flags;
  std::size_t steps;  // depth steps per micro-panel (flags per strip)
  threads::Backoff backoff;
  // Per A block:
  std::size_t ic = 0, panels = 0;
  std::uint32_t claimed = 0, ready = 0;

  const double* chunk(std::size_t q, std::size_t p) const {
    return data + q * mr * k + p * kc * mr;
  }

  bool try_claim(threads::WaitWord& f) const {
    std::uint32_t v = f.value.load(std::memory_order_relaxed);
    while (!threads::reached(v, claimed))
      if (f.value.compare_exchange_weak(v, claimed, std::memory_order_acquire,
                                        std::memory_order_relaxed))
        return true;
    return false;
  }

  void pack(std::size_t q, std::size_t p) const {
    const std::size_t row = ic + q * mr, pc = p * kc;
    ks.pack_a(std::min(mr, m - row), std::min(kc, k - pc), A + row * lda + pc, lda,
              data + q * mr * k + pc * mr);
    flags[q * steps + p].publish(ready, backoff);
  }

  // Returns chunk (q, p), packed.
  const double* get(std::size_t q, std::size_t p) const {
    threads::WaitWord& f = flags[q * steps + p];
    if (f.value.load(std::memory_order_acquire) == ready) return chunk(q, p);
    if (try_claim(f)) {
      pack(q, p);
      return chunk(q, p);
    }
    // Another thread is packing it: pack the chunks after it meanwhile, then wait.
    constexpr std::size_t kAhead = 4;
    for (std::size_t q2 = q + 1; q2 < panels && q2 <= q + kAhead; ++q2) {
      if (f.value.load(std::memory_order_acquire) == ready) break;
      if (try_claim(flags[q2 * steps + p])) pack(q2, p);
    }
    threads::wait_until_reached(f, ready, backoff);
    return chunk(q, p);
  }
};

void run(const Sync& s, std::size_t m, std::size_t n, std::size_t k, const double* A,
         std::size_t lda, const double* B, std::size_t ldb, double* C, std::size_t ldc,
         bool accumulate, Workspace& ws) {
  check_args(m, n, k, lda, ldb, ldc, A, B, C);
  if (m == 0 || n == 0) return;
  const int tid = s.thread(), T = s.threads();

  if (k == 0) {
    if (!accumulate) {
      auto [r0, r1] = threads::block_range(m, T, tid);
      for (std::size_t i = r0; i < r1; ++i) std::fill(C + i * ldc, C + i * ldc + n, 0.0);
    }
    s.barrier();
    return;
  }

  const Blocking& bl = ws.blocking();
  Workspace::State& st = ws.state();
  const detail::KernelSet& ks = kernels_for(bl.isa);
  const std::size_t mr = bl.mr, nr = bl.nr;
  const std::size_t kc = std::min(bl.kc, k), steps = div_up(k, kc);
  const std::size_t budget_rows = round_down(bl.a_block_bytes / (k * sizeof(double)), mr);
  const std::size_t mc = std::min({round_up(m, mr), bl.mc, std::max(mr, budget_rows)});
  const std::size_t nblocks = div_up(m, mc);
  const ColumnPlan cols = plan_columns(n, T, bl.nc, nr, C, ldc);

  // Thread 0 sizes every buffer and takes the epochs of this call's A blocks; the others learn
  // whether that worked, and the first epoch, from one broadcast.
  struct Start {
    bool ok;
    std::uint32_t epoch;
  } start{true, 0};
  if (tid == 0) {
    try {
      st.a.ensure(mc * k);
      const std::size_t nflags = div_up(mc, mr) * steps;
      if (st.nflags < nflags) {
        st.flags.reset();
        st.nflags = 0;
        st.flags = std::make_unique<threads::WaitWord[]>(nflags);
        st.nflags = nflags;
      }
      if (st.b.size() < static_cast<std::size_t>(T)) st.b.resize(T);
      for (auto& b : st.b) {
        if (!b) b = std::make_unique<detail::Buffer>();
        b->ensure(round_up(cols.width + 8, nr) * kc);
      }
    } catch (const std::bad_alloc&) {
      start.ok = false;
    }
    // Flags hold 2e / 2e + 1: restart the epochs long before they wrap.
    if (st.epoch + nblocks >= (1u << 30)) {
      for (std::size_t i = 0; i < st.nflags; ++i)
        st.flags[i].value.store(0, std::memory_order_relaxed);
      st.epoch = 0;
    }
    start.epoch = st.epoch + 1;
    st.epoch += static_cast<std::uint32_t>(nblocks);
    st.units[0].next.store(0, std::memory_order_relaxed);
    st.units[1].next.store(0, std::memory_order_relaxed);
  }
  if (s.t) start = s.t->broadcast(start);
  if (!start.ok) throw std::bad_alloc();

  double* const bbuf = st.b[tid]->data;
  ABlock ab{ks,
            A,
            lda,
            m,
            k,
            kc,
            mr,
            st.a.data,
            st.flags.get(),
            steps,
            s.t ? s.t->team().backoff() : threads::Backoff{}};

  for (std::size_t blk = 0; blk < nblocks; ++blk) {
    if (blk > 0) {
      // Every thread is done with the previous block before its chunks are packed again; its
      // counter then serves the block after this one.
      s.barrier();
      if (tid == 0) st.units[(blk - 1) & 1u].next.store(0, std::memory_order_relaxed);
    }
    const std::uint32_t e = start.epoch + static_cast<std::uint32_t>(blk);
    ab.ic = blk * mc;
    const std::size_t mb = std::min(mc, m - ab.ic);
    ab.panels = div_up(mb, mr);
    ab.claimed = 2 * e;
    ab.ready = 2 * e + 1;
    std::atomic<std::size_t>& next_unit = st.units[blk & 1u].next;

    const std::size_t height = plan_rows(mb, cols.blocks, T, mr);
    const std::size_t row_chunks = div_up(mb, height);
    const std::size_t units = cols.blocks * row_chunks;
    for (std::size_t u = 0;; ++u) {
      if (T > 1) u = next_unit.fetch_add(1, std::memory_order_relaxed);
      if (u >= units) break;
      const std::size_t j = u / row_chunks;
      const std::size_t jc = cols.begin(j), nb = cols.begin(j + 1) - jc;
      const std::size_t rlo = ab.ic + (u % row_chunks) * height;
      const std::size_t rhi = std::min(ab.ic + mb, rlo + height);
      for (std::size_t p = 0; p < steps; ++p) {
        const std::size_t pc = p * kc, kb = std::min(kc, k - pc);
        const bool overwrite = p == 0 && !accumulate;
        ks.pack_b(kb, nb, B + pc * ldb + jc, ldb, bbuf);
        for (std::size_t ir = rlo; ir < rhi; ir += mr) {
          const std::size_t rows = std::min(mr, rhi - ir);
          const double* a = ab.get((ir - ab.ic) / mr, p);
          double* crow = C + ir * ldc + jc;
          for (std::size_t jr = 0; jr < nb; jr += nr) {
            const std::size_t w = std::min(nr, nb - jr);
            const double* b = bbuf + jr * kb;
            if (rows == mr && w == nr)
              ks.full(kb, a, b, crow + jr, ldc, overwrite);
            else
              ks.edge(rows, w, kb, a, b, crow + jr, ldc, overwrite);
          }
        }
      }
    }
  }
  s.barrier();
}

}  // namespace

void multiply(threads::ThreadCtx& t, std::size_t m, std::size_t n, std::size_t k, const double* A,
              std::size_t lda, const double* B, std::size_t ldb, double* C, std::size_t ldc,
              bool accumulate, Workspace& ws) {
  run(Sync{&t}, m, n, k, A, lda, B, ldb, C, ldc, accumulate, ws);
}

void multiply(std::size_t m, std::size_t n, std::size_t k, const double* A, std::size_t lda,
              const double* B, std::size_t ldb, double* C, std::size_t ldc, bool accumulate,
              Workspace& ws) {
  run(Sync{nullptr}, m, n, k, A, lda, B, ldb, C, ldc, accumulate, ws);
}

}  // namespace compas::kernels::gemm
