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
#include "compas/base/size.hpp"
#include "compas/perf/region.hpp"
#include "store_trials.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define COMPAS_SORT_HAVE_SSE2 1
#endif

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
  constexpr std::size_t kAlign = 4096;
  bytes_ =
      std::max<std::size_t>(kAlign, (n * sizeof(std::uint32_t) + kAlign - 1) / kAlign * kAlign);
  p_ = static_cast<std::uint32_t*>(std::aligned_alloc(kAlign, bytes_));
  if (!p_) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (bytes_ >= (std::size_t{2} << 20)) madvise(p_, bytes_, MADV_HUGEPAGE);
#endif
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

std::string to_string(Stores s) {
  switch (s) {
    case Stores::automatic:
      return "auto";
    case Stores::cached:
      return "cached";
    case Stores::streaming:
      return "streaming";
    case Stores::direct:
      return "direct";
  }
  return "?";
}

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

using Clock = std::chrono::steady_clock;
constexpr unsigned kLine = 16;  // keys per cache line (64 bytes)

// One thread's counts and scatter state, on its own cache lines.
struct alignas(64) PerThread {
  std::vector<std::uint32_t> hist;  // [pass][digit] counts of this thread's block
  std::vector<std::size_t> pos;     // next position of each digit (shifted by the alignment)
  std::vector<std::size_t> start;   // first position of each digit in this thread's share
  std::vector<std::uint32_t> pos32, start32;  // the same, narrower, when the keys allow it
  std::vector<std::size_t> bucket_begin;      // buckets: where each bucket starts (and the end)
  std::vector<std::uint32_t> inner;           // buckets: [pass][digit] counts of one bucket
  double outside = 0;  // buckets: keys of this thread's buckets too big for the cache, x passes
  std::uint32_t* wc = nullptr;  // [digit][kLine] write-combining lines, 64-byte aligned
  std::size_t wc_keys = 0;
  ~PerThread() { std::free(wc); }
  void size(std::size_t passes, std::size_t digits) {
    hist.assign(passes * digits, 0);
    pos.resize(digits);
    start.resize(digits);
    pos32.resize(digits);
    start32.resize(digits);
    if (wc_keys < digits * kLine) {
      std::free(wc);
      wc = static_cast<std::uint32_t*>(std::aligned_alloc(64, digits * kLine * 4));
      if (!wc) throw std::bad_alloc();
      wc_keys = digits * kLine;
    }
  }
};

// One whole line of the write-combining buffer to the destination.
template <bool kStream>
inline void write_line(std::uint32_t* dst, const std::uint32_t* line) {
#ifdef COMPAS_SORT_HAVE_SSE2
  if constexpr (kStream) {
    auto* d = reinterpret_cast<__m128i*>(dst);
    const auto* s = reinterpret_cast<const __m128i*>(line);
    _mm_stream_si128(d + 0, _mm_load_si128(s + 0));
    _mm_stream_si128(d + 1, _mm_load_si128(s + 1));
    _mm_stream_si128(d + 2, _mm_load_si128(s + 2));
    _mm_stream_si128(d + 3, _mm_load_si128(s + 3));
    return;
  }
#endif
  std::memcpy(dst, line, kLine * sizeof(std::uint32_t));
}

// Scatter of src[0, n) by the digit (k >> shift) & mask. Positions are kept shifted by `align`
// (the destination's offset in keys from the cache line it starts in), so that position & 15 is
// the key's slot in its destination line and a line of the buffer is full exactly when its
// destination line is. A full line whose every slot lies in this thread's share of the digit
// goes out whole; the first line of a share (which may start mid-line, beside another thread's
// or digit's keys) and the last are written key by key.
// Positions are 32-bit when the keys allow it (half the state to keep in L1, measurably faster).
template <bool kStream, class Pos>
void scatter_wc(const std::uint32_t* src, std::size_t n, std::uint32_t* dst, std::size_t align,
                unsigned shift, std::uint32_t mask, Pos* pos, const Pos* start, std::uint32_t* wc,
                std::size_t digits) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t k = src[i];
    const std::uint32_t d = (k >> shift) & mask;
    Pos v = pos[d];
    std::uint32_t* line = wc + std::size_t{d} * kLine;
    line[v & (kLine - 1)] = k;
    pos[d] = ++v;
    if (__builtin_expect((v & (kLine - 1)) == 0, 0)) {
      const Pos base = v - kLine;
      if (base >= start[d]) {
        write_line<kStream>(dst + (base - align), line);
      } else {
        for (Pos x = start[d]; x < v; ++x) dst[x - align] = line[x & (kLine - 1)];
      }
    }
  }
  for (std::size_t d = 0; d < digits; ++d) {
    const Pos v = pos[d];
    const Pos from = std::max<Pos>(start[d], v & ~Pos{kLine - 1});
    const std::uint32_t* line = wc + d * kLine;
    for (Pos x = from; x < v; ++x) dst[x - align] = line[x & (kLine - 1)];
  }
#ifdef COMPAS_SORT_HAVE_SSE2
  if constexpr (kStream) _mm_sfence();  // the lines are visible before the barrier releases
#endif
}

void scatter_direct(const std::uint32_t* src, std::size_t n, std::uint32_t* dst, unsigned shift,
                    std::uint32_t mask, std::size_t* pos) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t k = src[i];
    dst[pos[(k >> shift) & mask]++] = k;
  }
}

// One thread's scatter of src[0, m) into dst (of n keys) with its positions: straight to place,
// or through its write-combining lines with streaming or cached stores, 32-bit positions where n
// allows them.
void scatter(const std::uint32_t* src, std::size_t m, std::uint32_t* dst, std::size_t align,
             unsigned shift, std::uint32_t mask, PerThread& me, std::size_t digits, bool direct,
             bool stream, std::size_t n) {
  const bool narrow = n + kLine < std::numeric_limits<std::uint32_t>::max();
  if (direct)
    scatter_direct(src, m, dst, shift, mask, me.pos.data());
  else if (stream && narrow)
    scatter_wc<true>(src, m, dst, align, shift, mask, me.pos32.data(), me.start32.data(), me.wc,
                     digits);
  else if (stream)
    scatter_wc<true>(src, m, dst, align, shift, mask, me.pos.data(), me.start.data(), me.wc,
                     digits);
  else if (narrow)
    scatter_wc<false>(src, m, dst, align, shift, mask, me.pos32.data(), me.start32.data(), me.wc,
                      digits);
  else
    scatter_wc<false>(src, m, dst, align, shift, mask, me.pos.data(), me.start.data(), me.wc,
                      digits);
}

// Counts of one digit over src[0, n) into hist (added).
void count_digit(const std::uint32_t* src, std::size_t n, unsigned shift, std::uint32_t mask,
                 std::uint32_t* hist) {
  for (std::size_t i = 0; i < n; ++i) ++hist[(src[i] >> shift) & mask];
}

}  // namespace

namespace {

// ---- why the stores (Stats::stores_reason) ---------------------------------------------------

std::string kind(bool stream) {
  return stream ? "streaming" : "cached";
}

std::string mib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

std::string fixed_stores(Stores s) {
  return to_string(s) + ": --stores " + to_string(s);
}

std::string beyond_last_level(std::size_t bytes, std::size_t last_level) {
  return "streaming: the keys (" + mib(bytes) + ") exceed the last-level caches (" +
         mib(last_level) + ")";
}

}  // namespace

struct Workspace::Impl {
  std::vector<std::unique_ptr<PerThread>> threads;
  // Automatic stores between Options::calibrate_bytes and Options::cache_bytes (store_trials.hpp):
  // the LSD sort times its first two passes of the first two sorts of a size (the same power of
  // two: a distributed sort's share varies a little) on a team, the bucket sort the scatters of
  // the first four sorts; later ones keep the faster (thread 0 writes them, between barriers).
  StoreTrials lsd_trials, bucket_trials;
  std::atomic<std::size_t> next_bucket{0};  // buckets: the next one a thread takes
};

namespace {

std::string lsd_stores_reason(const Options& o, std::size_t bytes, std::size_t to_run,
                              bool timed_here, const Workspace::Impl& w) {
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

constexpr int kMaxTopBits = 12;    // 4096 write-combining lines: 256 KiB, a quarter of an L2
constexpr int kMaxWideBits = 14;   // widened for keys in a narrow range: 16384 lines, few used
constexpr int kMaxInnerBits = 12;  // digits inside a bucket (counts that stay in the L1)

// Insertion sort by the bits of `mask`, stable (for buckets of a few keys).
void insertion_sort(std::uint32_t* a, std::size_t n, std::uint32_t mask) {
  for (std::size_t i = 1; i < n; ++i) {
    const std::uint32_t k = a[i];
    std::size_t j = i;
    for (; j > 0 && (a[j - 1] & mask) > (k & mask); --j) a[j] = a[j - 1];
    a[j] = k;
  }
}

// LSD passes over the bits [begin, begin + bits * passes) capped at `end`, of one bucket that
// sits in the cache: one read counts every pass, a pass whose digit is the same for every key is
// skipped, the scatter stores each key straight to its place (the destination is in the cache
// too). Returns the buffer holding the result: cur or other.
std::uint32_t* sort_bucket(std::uint32_t* cur, std::uint32_t* other, std::size_t n, int begin,
                           int end, int bits, int passes, std::vector<std::uint32_t>& hist) {
  const std::size_t digits = std::size_t{1} << bits;
  std::fill(hist.begin(), hist.begin() + static_cast<std::ptrdiff_t>(digits * passes), 0u);
  auto shift_of = [&](int q) { return static_cast<unsigned>(begin + q * bits); };
  auto mask_of = [&](int q) {
    const int b = std::min(bits, end - begin - q * bits);
    return (std::uint32_t{1} << b) - 1;
  };
  std::uint32_t* h = hist.data();
  if (passes == 2) {
    const unsigned s1 = shift_of(1);
    const std::uint32_t m0 = mask_of(0), m1 = mask_of(1);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t k = cur[i];
      ++h[(k >> begin) & m0];
      ++h[digits + ((k >> s1) & m1)];
    }
  } else {
    for (int q = 0; q < passes; ++q)
      count_digit(cur, n, shift_of(q), mask_of(q), h + static_cast<std::size_t>(q) * digits);
  }
  for (int q = 0; q < passes; ++q) {
    std::uint32_t* c = h + static_cast<std::size_t>(q) * digits;
    const unsigned shift = shift_of(q);
    const std::uint32_t mask = mask_of(q);
    std::uint32_t sum = 0;
    bool one_digit = false;
    for (std::size_t d = 0; d <= mask; ++d) {
      const std::uint32_t x = c[d];
      if (x == n) one_digit = true;
      c[d] = sum;
      sum += x;
    }
    if (one_digit) continue;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t k = cur[i];
      other[c[(k >> shift) & mask]++] = k;
    }
    std::swap(cur, other);
  }
  return cur;
}

}  // namespace

// Method::buckets (sort.hpp). Returns nothing, with the keys untouched, when a bucket would not
// fit the cache (every thread decides the same from the shared counts); the caller then runs lsd.
// `reads` counts the reads of the whole array that counted a top digit (for the byte model).
static std::optional<std::span<std::uint32_t>> sort_in_buckets(
    threads::ThreadCtx& t, std::span<std::uint32_t> keys, std::span<std::uint32_t> tmp,
    Workspace::Impl& w, PerThread& mine, const Options& o, Stats* stats, std::size_t lo,
    std::size_t hi, int& reads) {
  const std::size_t n = keys.size();
  const int nt = t.nthreads(), me = t.tid();
  // The top digit: the average bucket's keys an eighth of the cache (bucket and other half a
  // quarter). When every key lies in a few neighbouring buckets (a process's share in a
  // distributed sort, keys that vary only in their low bits), it is counted again (at most twice
  // more): if the used buckets share leading bits, those bits are the same in every key and the
  // sort by the bits below them is the same sort, so the digit moves below them; if not (a range
  // that straddles a power of two), the digit widens until the used buckets are about as many as
  // planned (up to kMaxWideBits; only the used write-combining lines are touched).
  const std::size_t target = std::max<std::size_t>(16, o.bucket_bytes / 32);
  int end = o.end_bit, top = 0, inner = 0, inner_bits = 0, widen = 0;
  unsigned top_shift = 0;
  std::uint32_t top_mask = 0;
  std::size_t nb = 0;
  for (int round = 0;; ++round) {
    const int width = end - o.begin_bit;
    top = 1;
    while (top < kMaxTopBits && (n >> top) > target) ++top;
    top = std::min({top + widen, kMaxWideBits, width - 1});
    top_shift = static_cast<unsigned>(end - top);
    top_mask = (std::uint32_t{1} << top) - 1;
    nb = std::size_t{1} << top;
    const int rest = width - top;
    const int inner_digit = std::min(o.digit_bits, kMaxInnerBits);
    inner = (rest + inner_digit - 1) / inner_digit;
    inner_bits = (rest + inner - 1) / inner;
    {
      COMPAS_REGION(t, "compute");
      mine.size(1, nb);
      count_digit(keys.data() + lo, hi - lo, top_shift, top_mask, mine.hist.data());
    }
    ++reads;
    {
      COMPAS_REGION(t, "synchronize");
      t.barrier();
    }
    std::size_t first = nb, last = 0;
    for (std::size_t d = 0; d < nb; ++d) {
      std::size_t total = 0;
      for (int u = 0; u < nt; ++u) total += w.threads[u]->hist[d];
      if (total) {
        first = std::min(first, d);
        last = d;
      }
    }
    if (round == 2 || first == nb) break;
    const int same = top - std::bit_width(first ^ last);
    const std::size_t used = last - first + 1;
    const int room = std::min(kMaxWideBits, width - 1) - top;  // widening left
    if (same > 0 && end - same - o.begin_bit > o.digit_bits) {
      end -= same;
    } else if (used * 4 <= (nb >> widen) && room > 0) {  // under a quarter of those planned
      widen += std::min(room, static_cast<int>(std::bit_width((nb >> widen) / used)) - 1);
    } else {
      break;
    }
    COMPAS_REGION(t, "synchronize");
    t.barrier();  // everybody has read the counts before they are taken again
  }
  mine.bucket_begin.resize(nb + 1);
  mine.inner.resize(static_cast<std::size_t>(inner) << inner_bits);
  const int width = end - o.begin_bit;
  const bool direct = o.stores == Stores::direct;
  const std::size_t align =
      direct ? 0 : (reinterpret_cast<std::uintptr_t>(tmp.data()) / sizeof(std::uint32_t)) % kLine;
  std::size_t biggest = 0;
  {
    COMPAS_REGION(t, "compute");
    std::size_t base = 0;
    for (std::size_t d = 0; d < nb; ++d) {
      std::size_t before = 0, total = 0;
      for (int u = 0; u < nt; ++u) {
        const std::size_t c = w.threads[u]->hist[d];
        if (u < me) before += c;
        total += c;
      }
      mine.bucket_begin[d] = base;
      mine.start[d] = mine.pos[d] = align + base + before;
      mine.start32[d] = mine.pos32[d] = static_cast<std::uint32_t>(align + base + before);
      base += total;
      biggest = std::max(biggest, total);
    }
    mine.bucket_begin[nb] = base;
  }
  // A bucket and its other half should fit the cache. A bucket that does not is still sorted by
  // the thread that takes it (its passes then go to memory), unless it would hold more than half
  // of one thread's share of the keys: then the team's lsd sorts everything instead.
  const std::size_t limit = o.bucket_bytes / (2 * sizeof(std::uint32_t));
  if (biggest > limit && biggest > target && biggest * 2 * static_cast<std::size_t>(nt) > n) {
    COMPAS_REGION(t, "synchronize");
    t.barrier();  // nobody resizes the counts the others still read
    return std::nullopt;
  }
  // Stores: streaming past the last-level cache (cache_bytes); below it the scattered keys may
  // still be in the cache when their bucket is sorted, which only a measurement tells (a virtual
  // machine's reported last level may not be there): the first four sorts of the size scatter
  // cached, streaming, streaming, cached (store_trials.hpp), and later ones keep the faster.
  bool stream = false, calibrating = false;
  const auto size_key = static_cast<std::size_t>(std::bit_width(n));
  const bool known = w.bucket_trials.holds(size_key, nt);
  const int trial = known ? w.bucket_trials.count() : 0;
  if (direct || o.stores == Stores::cached) {
    stream = false;
  } else if (o.stores == Stores::streaming || n * sizeof(std::uint32_t) > o.cache_bytes) {
    stream = true;
  } else if (trial < StoreTrials::kTrials) {
    calibrating = true;
    stream = StoreTrials::streams_at(trial);
  } else {
    stream = w.bucket_trials.stream();
  }
  const Clock::time_point began = Clock::now();  // thread 0's is used
  {
    COMPAS_REGION(t, "compute");
    const std::uint32_t* s = keys.data() + lo;
    scatter(s, hi - lo, tmp.data(), align, top_shift, top_mask, mine, nb, direct, stream, n);
  }
  {
    COMPAS_REGION(t, "synchronize");
    if (me == 0) w.next_bucket.store(0, std::memory_order_relaxed);
    t.barrier();
  }
  // The scatter wrote tmp; `inner` passes alternate from there, so the result is in keys after
  // an odd number and in tmp after an even one; a bucket that skipped passes is copied there.
  std::uint32_t* const result = inner % 2 ? keys.data() : tmp.data();
  const std::uint32_t bits_mask = width >= 32 ? ~std::uint32_t{0}
                                              : ((std::uint32_t{1} << width) - 1)
                                                    << static_cast<unsigned>(o.begin_bit);
  mine.outside = 0;
  {
    COMPAS_REGION(t, "compute");
    for (;;) {
      const std::size_t b = w.next_bucket.fetch_add(1, std::memory_order_relaxed);
      if (b >= nb) break;
      const std::size_t off = mine.bucket_begin[b], cnt = mine.bucket_begin[b + 1] - off;
      if (cnt == 0) continue;
      std::uint32_t* got = tmp.data() + off;
      if (cnt <= 32)
        insertion_sort(got, cnt, bits_mask);
      else
        got = sort_bucket(got, keys.data() + off, cnt, o.begin_bit, end - top, inner_bits, inner,
                          mine.inner);
      if (cnt > limit) mine.outside += static_cast<double>(cnt) * inner;
      if (got != result + off) std::memcpy(result + off, got, cnt * sizeof(std::uint32_t));
    }
  }
  {
    COMPAS_REGION(t, "synchronize");
    t.barrier();
  }
  if (calibrating && me == 0) {  // read by every thread after the next sort's first barrier
    w.bucket_trials.use_for(size_key, nt);
    w.bucket_trials.record(std::chrono::duration<double>(Clock::now() - began).count());
  }
  if (stats && me == 0) {
    stats->method = Method::buckets;
    stats->top_bits = top;
    stats->passes = 1 + inner;
    stats->skipped = 0;
    stats->streaming = stream;
    stats->calibrated = calibrating;
    stats->stores_reason =
        direct || o.stores != Stores::automatic ? fixed_stores(o.stores)
        : n * sizeof(std::uint32_t) > o.cache_bytes
            ? beyond_last_level(n * sizeof(std::uint32_t), o.cache_bytes)
        : calibrating ? kind(stream) + ": trial " + std::to_string(trial + 1) + " of " +
                            std::to_string(StoreTrials::kTrials) +
                            " on sorts of this size (they scatter cached, streaming, streaming, "
                            "cached; later ones keep the faster)"
                      : w.bucket_trials.reason("the scatters of the first four sorts of this size");
    // The counting reads, the scatter's read and write, each bucket's read and final write; and
    // the passes of buckets too big for the cache (a count read, then a read and a write each;
    // counted as 8 bytes a key per pass).
    double outside = 0;
    for (int u = 0; u < nt; ++u) outside += w.threads[u]->outside;
    stats->bytes = static_cast<double>(n) * sizeof(std::uint32_t) * (reads + 4) +
                   outside * 2 * sizeof(std::uint32_t);
  }
  return std::span<std::uint32_t>(result, n);
}

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
  Workspace::Impl& w = ws.impl();
  const int nt = t.nthreads(), me = t.tid();
  if (stats && t.is_leader()) *stats = Stats{};
  if (n == 0 || passes == 0) return keys;
  const auto [lo, hi] = t.block(n);
  if (n / static_cast<std::size_t>(nt) >= std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("sort: more than 2^32 - 1 keys per thread");
  auto shift_of = [&](std::size_t p) {
    return static_cast<unsigned>(o.begin_bit + static_cast<int>(p) * o.digit_bits);
  };
  auto mask_of = [&](std::size_t p) {
    const unsigned bits = std::min<unsigned>(o.digit_bits, o.end_bit - shift_of(p));
    return bits >= 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << bits) - 1;
  };

  {
    COMPAS_REGION(t, "synchronize");
    if (me == 0 && static_cast<int>(w.threads.size()) < nt) w.threads.resize(nt);
    t.barrier();
  }
  PerThread* mine = nullptr;
  {
    auto& slot = w.threads[me];
    if (!slot) slot = std::make_unique<PerThread>();
    mine = slot.get();
  }
  const bool buckets =
      width > o.digit_bits && (o.method == Method::buckets ||
                               (o.method == Method::automatic && o.stores != Stores::direct &&
                                n * sizeof(std::uint32_t) > o.calibrate_bytes));
  int bucket_reads = 0;  // reads of a bucket sort that fell back to lsd
  if (buckets)
    if (auto r = sort_in_buckets(t, keys, tmp.first(n), w, *mine, o, stats, lo, hi, bucket_reads))
      return *r;
  {
    COMPAS_REGION(t, "compute");
    mine->size(passes, digits);
    // One read counts every pass's digit.
    const std::uint32_t* src = keys.data() + lo;
    const std::size_t m = hi - lo;
    if (passes == 4 && o.digit_bits == 8 && o.begin_bit == 0) {
      std::uint32_t* h = mine->hist.data();
      for (std::size_t i = 0; i < m; ++i) {
        const std::uint32_t k = src[i];
        ++h[k & 0xff];
        ++h[256 + ((k >> 8) & 0xff)];
        ++h[512 + ((k >> 16) & 0xff)];
        ++h[768 + (k >> 24)];
      }
    } else {
      for (std::size_t p = 0; p < passes; ++p)
        count_digit(src, m, shift_of(p), mask_of(p), mine->hist.data() + p * digits);
    }
  }
  {
    COMPAS_REGION(t, "synchronize");
    t.barrier();
  }
  // Every thread reads the same counts, so every thread takes the same decisions.
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
  // Stores: automatic streams past the last level (cache_bytes) and stays cached below the level
  // under it (calibrate_bytes); in between it depends on the machine (and virtual machines report
  // last levels that are not there), so the first two sorts of this size time their first two
  // passes (StoreTrials), and their later passes and later sorts of the size keep the faster.
  const bool direct = o.stores == Stores::direct;
  const std::size_t bytes = n * sizeof(std::uint32_t);
  const std::size_t to_run =
      passes - static_cast<std::size_t>(std::count(skip.begin(), skip.end(), char{1}));
  bool stream =
      o.stores == Stores::streaming || (o.stores == Stores::automatic && bytes > o.cache_bytes);
  bool calibrating = false, timed_trials = false;
  const auto size_key = static_cast<std::size_t>(std::bit_width(n));
  int trial0 = 0;  // the first of this sort's two trials (store_trials.hpp)
#ifdef COMPAS_SORT_HAVE_SSE2
  if (o.stores == Stores::automatic && bytes <= o.cache_bytes && bytes > o.calibrate_bytes) {
    const bool known = w.lsd_trials.holds(size_key, nt);
    trial0 = known ? w.lsd_trials.count() : 0;
    calibrating = trial0 < StoreTrials::kTrials && to_run >= 3;  // one pass at least gains
    stream = trial0 >= 2 && w.lsd_trials.stream();
    timed_trials = calibrating || trial0 >= 2;
  }
#else
  stream = false;
#endif
  Clock::time_point began;  // thread 0: start of a calibration pass

  std::span<std::uint32_t> src = keys, dst = tmp.first(n);
  int ran = 0, skipped = 0;
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
    std::uint32_t* h = mine->hist.data() + p * digits;
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
          direct ? 0
                 : (reinterpret_cast<std::uintptr_t>(dst.data()) / sizeof(std::uint32_t)) % kLine;
      std::size_t base = align;
      for (std::size_t d = 0; d < nd; ++d) {
        std::size_t before = 0, total = 0;
        for (int u = 0; u < nt; ++u) {
          const std::size_t c = w.threads[u]->hist[p * digits + d];
          if (u < me) before += c;
          total += c;
        }
        mine->start[d] = mine->pos[d] = base + before;
        mine->start32[d] = mine->pos32[d] = static_cast<std::uint32_t>(base + before);
        base += total;
      }
      const std::uint32_t* s = src.data() + lo;
      if (calibrating && ran < 2) {
        streaming_used = StoreTrials::streams_at(trial0 + ran);
        if (me == 0) began = Clock::now();
      } else {
        streaming_used = stream && !direct;
      }
      scatter(s, hi - lo, dst.data(), align, shift, mask, *mine, nd, direct, streaming_used, n);
    }
    {
      COMPAS_REGION(t, "synchronize");
      t.barrier();
      if (calibrating && ran < 2) {
        if (me == 0) {  // the others read the trials after the barrier below
          w.lsd_trials.use_for(size_key, nt);
          w.lsd_trials.record(std::chrono::duration<double>(Clock::now() - began).count());
        }
        if (ran == 1) {
          t.barrier();
          stream = w.lsd_trials.stream();
        }
      }
    }
    std::swap(src, dst);
    ++ran;
  }
  if (stats && me == 0) {
    stats->passes = ran;
    stats->skipped = skipped;
    stats->streaming = stream && !direct && ran > 0;
    stats->calibrated = calibrating;
    stats->stores_reason = lsd_stores_reason(o, bytes, to_run, timed_trials, w);
    const double nb = static_cast<double>(n) * sizeof(std::uint32_t);
    stats->bytes = nb * (bucket_reads + 1 + 2 * ran + (nt > 1 ? std::max(ran - 1, 0) : 0));
  }
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
