#include "compas/kernels/sort.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>

#include "compas/base/hash.hpp"
#include "compas/base/pages.hpp"
#include "compas/base/size.hpp"
#include "compas/perf/region.hpp"
#include "sort_local.hpp"

namespace compas::kernels::sort {

// ---- inputs ----------------------------------------------------------------------------------

std::string to_string(Dist d) {
  switch (d) {
    case Dist::uniform:
      return "uniform";
    case Dist::npb:
      return "npb";
    case Dist::equal:
      return "equal";
    case Dist::sorted:
      return "sorted";
    case Dist::reverse:
      return "reverse";
    case Dist::high:
      return "high";
  }
  return "?";
}

const std::vector<Dist>& all_dists() {
  static const std::vector<Dist> all = {Dist::uniform, Dist::npb,     Dist::equal,
                                        Dist::sorted,  Dist::reverse, Dist::high};
  return all;
}

Dist parse_dist(const std::string& name) {
  std::string allowed;
  for (Dist d : all_dists()) {
    if (name == to_string(d)) return d;
    if (!allowed.empty()) allowed += " | ";
    allowed += to_string(d);
  }
  std::string msg = "--dist '";
  msg += name;
  msg += "': one of ";
  msg += allowed;
  throw std::invalid_argument(msg);
}

std::uint64_t parse_keys(const std::string& text) {
  return base::parse_size(text, base::SizeSyntax::count, "--keys");
}

namespace {

using base::splitmix64_mix;
constexpr std::uint64_t kGolden = base::kSplitmixGamma;

// NPB's randlc: x <- a x mod 2^46, exact in 64-bit integers because 2^46 divides 2^64.
constexpr std::uint64_t kMask46 = (std::uint64_t{1} << 46) - 1;
constexpr std::uint64_t kNpbMultiplier = 1220703125;  // 5^13

std::uint64_t pow_mod46(std::uint64_t a, std::uint64_t e) {
  std::uint64_t r = 1;
  while (e) {
    if (e & 1) r = (r * a) & kMask46;
    a = (a * a) & kMask46;
    e >>= 1;
  }
  return r;
}

__extension__ typedef unsigned __int128 u128;

}  // namespace

void generate(Dist d, std::uint64_t n, std::uint64_t lo, std::span<std::uint32_t> out,
              std::uint64_t seed) {
  const std::size_t m = out.size();
  std::uint32_t* o = out.data();
  switch (d) {
    case Dist::uniform:
      for (std::size_t j = 0; j < m; ++j)
        o[j] = static_cast<std::uint32_t>(splitmix64_mix(seed + (lo + j + 1) * kGolden) >> 32);
      break;
    case Dist::npb: {
      // Key i is NPB IS's k * (r1 + r2 + r3 + r4), k = MAX_KEY / 4 = 2^30, r = x / 2^46 for the
      // draws 4i+1 .. 4i+4 of randlc from the seed: exactly the integer (x1+x2+x3+x4) >> 16.
      std::uint64_t x = ((seed & kMask46) * pow_mod46(kNpbMultiplier, 4 * lo)) & kMask46;
      for (std::size_t j = 0; j < m; ++j) {
        std::uint64_t s = 0;
        for (int r = 0; r < 4; ++r) {
          x = (x * kNpbMultiplier) & kMask46;
          s += x;
        }
        o[j] = static_cast<std::uint32_t>(s >> 16);
      }
      break;
    }
    case Dist::equal: {
      const auto k = static_cast<std::uint32_t>(splitmix64_mix(seed) >> 32);
      std::fill(o, o + m, k);
      break;
    }
    case Dist::sorted:
    case Dist::reverse:
      for (std::size_t j = 0; j < m; ++j) {
        const auto k = static_cast<std::uint32_t>((static_cast<u128>(lo + j) << 32) / n);
        o[j] = d == Dist::sorted ? k : ~k;
      }
      break;
    case Dist::high: {
      const std::uint32_t low = static_cast<std::uint32_t>(splitmix64_mix(seed) >> 40);  // 24 bits
      for (std::size_t j = 0; j < m; ++j)
        o[j] = static_cast<std::uint32_t>(splitmix64_mix(seed + (lo + j + 1) * kGolden) >> 56)
                   << 24 |
               low;
      break;
    }
  }
}

// ---- verification ------------------------------------------------------------------------------

std::uint64_t key_hash(std::uint32_t key) {
  return splitmix64_mix((static_cast<std::uint64_t>(key) + 1) * kGolden);
}

Fingerprint fingerprint(std::span<const std::uint32_t> keys) {
  Fingerprint f;
  f.count = keys.size();
  for (std::uint32_t k : keys) {
    const std::uint64_t h = key_hash(k);
    f.sum += h;
    f.xor_ ^= h;
  }
  return f;
}

std::size_t first_unsorted(std::span<const std::uint32_t> keys) {
  for (std::size_t i = 1; i < keys.size(); ++i)
    if (keys[i] < keys[i - 1]) return i;
  return keys.size();
}

// ---- buffers -----------------------------------------------------------------------------------

KeyBuffer::KeyBuffer(std::size_t n) : n_(n) {
  if (n > SIZE_MAX / sizeof(std::uint32_t)) throw std::bad_alloc();
  // Freed with std::free (~KeyBuffer), as huge_aligned_alloc's memory is.
  p_ = static_cast<std::uint32_t*>(
      base::huge_aligned_alloc(n * sizeof(std::uint32_t), &bytes_).release());
}
KeyBuffer::~KeyBuffer() {
  std::free(p_);
}
KeyBuffer::KeyBuffer(KeyBuffer&& o) noexcept
    : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)), bytes_(o.bytes_) {}
KeyBuffer& KeyBuffer::operator=(KeyBuffer&& o) noexcept {
  if (this != &o) {
    std::free(p_);
    p_ = std::exchange(o.p_, nullptr);
    n_ = std::exchange(o.n_, 0);
    bytes_ = o.bytes_;
  }
  return *this;
}

// ---- the local sort
// ------------------------------------------------------------------------------

std::string to_string(Method m) {
  switch (m) {
    case Method::automatic:
      return "auto";
    case Method::lsd:
      return "lsd";
    case Method::buckets:
      return "buckets";
  }
  return "?";
}

Method parse_method(const std::string& name) {
  for (Method m : {Method::automatic, Method::lsd, Method::buckets})
    if (name == to_string(m)) return m;
  throw std::invalid_argument("--method '" + name + "': one of auto | lsd | buckets");
}

void check(const Options& o) {
  if (o.digit_bits < 1 || o.digit_bits > 16)
    throw std::invalid_argument("sort: digit width " + std::to_string(o.digit_bits) +
                                " bits: allowed 1..16 (8 or 11 are the useful ones)");
  if (o.bucket_bytes < 1024 || o.bucket_bytes > (std::size_t{1} << 30))
    throw std::invalid_argument("sort: bucket cache of " + std::to_string(o.bucket_bytes) +
                                " bytes: allowed 1024 .. 2^30");
  if (o.begin_bit < 0 || o.end_bit > 32 || o.begin_bit > o.end_bit) {
    std::string msg = "sort: bit range [";
    msg += std::to_string(o.begin_bit);
    msg += ", ";
    msg += std::to_string(o.end_bit);
    msg += "): must lie in [0, 32) with begin <= end";
    throw std::invalid_argument(msg);
  }
}

std::size_t cache_bytes(const threads::Topology& topo) {
  std::uint64_t total = 0;
  for (const auto& c : topo.caches())
    total = std::max<std::uint64_t>(
        total, c.size_bytes * static_cast<std::uint64_t>(std::max(c.count, 1)));
  return total ? static_cast<std::size_t>(total) : std::size_t{32} << 20;
}

std::size_t bucket_cache_bytes(const threads::Topology& topo) {
  for (const auto& c : topo.caches())
    if (c.level == 2 && c.type != "instruction" && c.size_bytes > 0)
      return static_cast<std::size_t>(c.size_bytes /
                                      static_cast<std::uint64_t>(std::max(c.shared_by, 1)));
  return std::size_t{1} << 20;
}

namespace {

using detail::beyond_last_level;
using detail::Clock;
using detail::count_digit;
using detail::fixed_stores;
using detail::kLine;
using detail::mib;
using detail::PerThread;
using detail::scatter;

std::string lsd_stores_reason(const Options& o, std::size_t bytes, std::size_t to_run,
                              bool timed_here, const WorkspaceImpl& w) {
  if (o.stores != Stores::automatic) return fixed_stores(o.stores);
#ifndef COMPAS_SORT_HAVE_SSE2
  return "cached: no streaming stores on this CPU";
#endif
  if (bytes > o.cache_bytes) return beyond_last_level(bytes, o.cache_bytes);
  if (bytes <= o.calibrate_bytes)
    return "cached: the keys (" + mib(bytes) + ") fit the caches below the last level (" +
           mib(o.calibrate_bytes) + ")";
  if (!timed_here)
    return "cached: too few passes (" + std::to_string(to_run) + ") to time both kinds";
  return w.lsd_trials.reason("the first two passes of the first two sorts of this size");
}

// This thread's counts and scatter state in the workspace (thread 0 makes room for the team's
// first).
PerThread& thread_state(threads::ThreadCtx& t, WorkspaceImpl& w) {
  const int nt = t.threads(), me = t.thread();
  {
    COMPAS_REGION(t, "synchronize");
    if (me == 0 && static_cast<int>(w.threads.size()) < nt) w.threads.resize(nt);
    t.barrier();
  }
  auto& slot = w.threads[me];
  if (!slot) slot = std::make_unique<PerThread>();
  return *slot;
}

// Exclusive scan in (digit, thread) order of pass p's counts: this thread's first position for
// each of the nd digits (from `base`, the destination's alignment) into mine's start and pos.
void scan_counts(const WorkspaceImpl& w, PerThread& mine, std::size_t p, std::size_t digits,
                 std::size_t nd, int nt, int me, std::size_t base) {
  for (std::size_t d = 0; d < nd; ++d) {
    std::size_t before = 0, total = 0;
    for (int u = 0; u < nt; ++u) {
      const std::size_t c = w.threads[u]->hist[p * digits + d];
      if (u < me) before += c;
      total += c;
    }
    mine.start[d] = mine.pos[d] = base + before;
    mine.start32[d] = mine.pos32[d] = static_cast<std::uint32_t>(base + before);
    base += total;
  }
}

// The stores of the LSD passes, and their calibration.
struct LsdStores {
  bool direct = false;
  std::size_t bytes = 0;   // of the keys
  std::size_t to_run = 0;  // passes not skipped
  bool stream = false, calibrating = false, timed_trials = false;
  std::size_t size_key = 0;
  int trial0 = 0;  // the first of this sort's two trials (store_trials.hpp)
};

// The LSD sort on one thread of the team: what its phases share.
struct Lsd {
  threads::ThreadCtx& t;
  WorkspaceImpl& w;
  PerThread& mine;
  const Options& o;
  const std::size_t n, passes, digits, lo, hi;  // [lo, hi): this thread's block
  const int nt, me;

  unsigned shift_of(std::size_t p) const {
    return static_cast<unsigned>(o.begin_bit + static_cast<int>(p) * o.digit_bits);
  }
  std::uint32_t mask_of(std::size_t p) const {
    const unsigned bits = std::min<unsigned>(o.digit_bits, o.end_bit - shift_of(p));
    return bits >= 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << bits) - 1;
  }
  void count_first_read(const std::uint32_t* keys);
  std::vector<char> passes_to_skip() const;
  LsdStores choose_stores(const std::vector<char>& skip) const;
  std::span<std::uint32_t> run_passes(std::span<std::uint32_t> keys, std::span<std::uint32_t> tmp,
                                      const std::vector<char>& skip, LsdStores& st, int& ran,
                                      int& skipped);
  void record_stats(Stats& stats, const LsdStores& st, int ran, int skipped,
                    int bucket_reads) const;
};

void Lsd::count_first_read(const std::uint32_t* keys) {
  COMPAS_REGION(t, "compute");
  mine.size(passes, digits);
  // One read counts every pass's digit.
  const std::uint32_t* src = keys + lo;
  const std::size_t m = hi - lo;
  if (passes == 4 && o.digit_bits == 8 && o.begin_bit == 0) {
    std::uint32_t* h = mine.hist.data();
    for (std::size_t i = 0; i < m; ++i) {
      const std::uint32_t k = src[i];
      ++h[k & 0xff];
      ++h[256 + ((k >> 8) & 0xff)];
      ++h[512 + ((k >> 16) & 0xff)];
      ++h[768 + (k >> 24)];
    }
  } else {
    for (std::size_t p = 0; p < passes; ++p)
      count_digit(src, m, shift_of(p), mask_of(p), mine.hist.data() + p * digits);
  }
}

// The passes whose digit is the same in every key (from every thread's counts).
std::vector<char> Lsd::passes_to_skip() const {
  std::vector<char> skip(passes, 0);
  for (std::size_t p = 0; p < passes; ++p) {
    const std::uint32_t mask = mask_of(p);
    for (std::size_t d = 0; d <= mask; ++d) {
      std::size_t total = 0;
      for (int u = 0; u < nt; ++u) total += w.threads[u]->hist[p * digits + d];
      if (total == n) skip[p] = 1;
      if (total) break;  // the first digit present: all keys, or not
    }
  }
  return skip;
}

// Stores: automatic streams past the last level (cache_bytes) and stays cached below the level
// under it (calibrate_bytes); in between it depends on the machine (and virtual machines report
// last levels that are not there), so the first two sorts of this size time their first two
// passes (StoreTrials), and their later passes and later sorts of the size keep the faster.
LsdStores Lsd::choose_stores(const std::vector<char>& skip) const {
  LsdStores s;
  s.direct = o.stores == Stores::direct;
  s.bytes = n * sizeof(std::uint32_t);
  s.to_run = passes - static_cast<std::size_t>(std::count(skip.begin(), skip.end(), char{1}));
  s.stream =
      o.stores == Stores::streaming || (o.stores == Stores::automatic && s.bytes > o.cache_bytes);
  s.size_key = static_cast<std::size_t>(std::bit_width(n));
#ifdef COMPAS_SORT_HAVE_SSE2
  if (o.stores == Stores::automatic && s.bytes <= o.cache_bytes && s.bytes > o.calibrate_bytes) {
    const bool known = w.lsd_trials.holds(s.size_key, nt);
    s.trial0 = known ? w.lsd_trials.count() : 0;
    s.calibrating = s.trial0 < StoreTrials::kTrials && s.to_run >= 3;  // one pass at least gains
    s.stream = s.trial0 >= 2 && w.lsd_trials.stream();
    s.timed_trials = s.calibrating || s.trial0 >= 2;
  }
#else
  s.stream = false;
#endif
  return s;
}

// The passes not skipped, alternating between keys and tmp; returns the buffer that holds the
// result. Calibrating, thread 0 times the first two, after which every thread keeps the faster
// stores (st.stream).
std::span<std::uint32_t> Lsd::run_passes(std::span<std::uint32_t> keys,
                                         std::span<std::uint32_t> tmp,
                                         const std::vector<char>& skip, LsdStores& st, int& ran,
                                         int& skipped) {
  Clock::time_point began;  // thread 0: start of a calibration pass
  std::span<std::uint32_t> src = keys, dst = tmp;
  bool streaming_used = false;  // by this pass
  bool counted = true;          // hist holds the counts of the current source (the first read)
  for (std::size_t p = 0; p < passes; ++p) {
    if (skip[p]) {
      ++skipped;
      continue;
    }
    const unsigned shift = shift_of(p);
    const std::uint32_t mask = mask_of(p);
    const std::size_t nd = std::size_t{mask} + 1;
    std::uint32_t* h = mine.hist.data() + p * digits;
    if (!counted) {
      {
        COMPAS_REGION(t, "compute");
        std::fill(h, h + nd, 0u);
        count_digit(src.data() + lo, hi - lo, shift, mask, h);
      }
      COMPAS_REGION(t, "synchronize");
      t.barrier();
    }
    // One thread's block is the whole array, whose digit counts the first read already has;
    // with several threads, each counts its new block before the next pass.
    counted = nt == 1;
    {
      COMPAS_REGION(t, "compute");
      // Exclusive scan in (digit, thread) order: this thread's first position for each digit.
      const std::size_t align =
          st.direct
              ? 0
              : (reinterpret_cast<std::uintptr_t>(dst.data()) / sizeof(std::uint32_t)) % kLine;
      scan_counts(w, mine, p, digits, nd, nt, me, align);
      const std::uint32_t* s = src.data() + lo;
      if (st.calibrating && ran < 2) {
        streaming_used = StoreTrials::streams_at(st.trial0 + ran);
        if (me == 0) began = Clock::now();
      } else {
        streaming_used = st.stream && !st.direct;
      }
      scatter(s, hi - lo, dst.data(), align, shift, mask, mine, nd, st.direct, streaming_used, n);
    }
    {
      COMPAS_REGION(t, "synchronize");
      t.barrier();
      if (st.calibrating && ran < 2) {
        if (me == 0) {  // the others read the trials after the barrier below
          w.lsd_trials.use_for(st.size_key, nt);
          w.lsd_trials.record(std::chrono::duration<double>(Clock::now() - began).count());
        }
        if (ran == 1) {
          t.barrier();
          st.stream = w.lsd_trials.stream();
        }
      }
    }
    std::swap(src, dst);
    ++ran;
  }
  return src;
}

void Lsd::record_stats(Stats& stats, const LsdStores& st, int ran, int skipped,
                       int bucket_reads) const {
  stats.passes = ran;
  stats.skipped = skipped;
  stats.streaming = st.stream && !st.direct && ran > 0;
  stats.calibrated = st.calibrating;
  stats.stores_reason = lsd_stores_reason(o, st.bytes, st.to_run, st.timed_trials, w);
  const double nb = static_cast<double>(n) * sizeof(std::uint32_t);
  stats.bytes = nb * (bucket_reads + 1 + 2 * ran + (nt > 1 ? std::max(ran - 1, 0) : 0));
}

}  // namespace

Workspace::Workspace() : impl_(std::make_unique<Impl>()) {}
Workspace::~Workspace() = default;

std::span<std::uint32_t> sort(threads::ThreadCtx& t, std::span<std::uint32_t> keys,
                              std::span<std::uint32_t> tmp, Workspace& ws, const Options& o,
                              Stats* stats) {
  check(o);
  if (tmp.size() < keys.size())
    throw std::invalid_argument("sort: the other buffer holds " + std::to_string(tmp.size()) +
                                " keys, fewer than the " + std::to_string(keys.size()) +
                                " to sort");
  const std::size_t n = keys.size();
  const int width = o.end_bit - o.begin_bit;
  const std::size_t passes =
      width == 0 ? 0 : static_cast<std::size_t>((width + o.digit_bits - 1) / o.digit_bits);
  const std::size_t digits = std::size_t{1} << o.digit_bits;
  WorkspaceImpl& w = ws.impl();
  const int nt = t.threads(), me = t.thread();
  if (stats && t.is_leader()) *stats = Stats{};
  if (n == 0 || passes == 0) return keys;
  const auto [lo, hi] = t.block(n);
  if (n / static_cast<std::size_t>(nt) >= std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("sort: more than 2^32 - 1 keys per thread");

  PerThread& mine = thread_state(t, w);
  const bool buckets =
      width > o.digit_bits && (o.method == Method::buckets ||
                               (o.method == Method::automatic && o.stores != Stores::direct &&
                                n * sizeof(std::uint32_t) > o.calibrate_bytes));
  int bucket_reads = 0;  // reads of a bucket sort that fell back to lsd
  if (buckets)
    if (auto r =
            detail::sort_in_buckets(t, keys, tmp.first(n), w, mine, o, stats, lo, hi, bucket_reads))
      return *r;
  Lsd lsd{t, w, mine, o, n, passes, digits, lo, hi, nt, me};
  lsd.count_first_read(keys.data());
  {
    COMPAS_REGION(t, "synchronize");
    t.barrier();
  }
  // Every thread reads the same counts, so every thread takes the same decisions.
  const std::vector<char> skip = lsd.passes_to_skip();
  LsdStores st = lsd.choose_stores(skip);
  int ran = 0, skipped = 0;
  const std::span<std::uint32_t> src = lsd.run_passes(keys, tmp.first(n), skip, st, ran, skipped);
  if (stats && me == 0) lsd.record_stats(*stats, st, ran, skipped, bucket_reads);
  return src;
}

Stats sort(threads::Team& team, std::vector<std::uint32_t>& keys, const Options& o) {
  check(o);
  std::vector<std::uint32_t> tmp(keys.size());
  Workspace ws;
  Stats st;
  std::span<std::uint32_t> out;
  team.run([&](threads::ThreadCtx& t) {
    auto r = sort(t, std::span<std::uint32_t>(keys), std::span<std::uint32_t>(tmp), ws, o, &st);
    if (t.is_leader()) out = r;
  });
  if (out.data() != keys.data()) std::copy(out.begin(), out.end(), keys.begin());
  return st;
}

}  // namespace compas::kernels::sort
