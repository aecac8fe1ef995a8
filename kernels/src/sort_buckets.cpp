// Method::buckets of the local sort (sort.hpp): one scatter on a top digit into buckets that fit
// the cache, then LSD passes inside each bucket.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "compas/perf/region.hpp"
#include "sort_local.hpp"

namespace compas::kernels::sort::detail {

namespace {

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

// The top digit of a bucket sort, and the digits inside a bucket.
struct TopDigit {
  int end;                // the bits sorted: [begin_bit, end)
  int top;                // the top digit's width: 2^top buckets
  int inner, inner_bits;  // passes inside a bucket, and their digit width
  unsigned top_shift;     // the top digit is (k >> top_shift) & top_mask
  std::uint32_t top_mask;
  std::size_t nb;  // buckets
};

// The top digit, counted over this thread's keys [lo, hi) into mine.hist (each round adds one
// read of the array to `reads`). The average bucket's keys an eighth of the cache (bucket and other
// half a quarter). When every key lies in a few neighbouring buckets (a process's share in a
// distributed sort, keys that vary only in their low bits), it is counted again (at most twice
// more): if the used buckets share leading bits, those bits are the same in every key and the
// sort by the bits below them is the same sort, so the digit moves below them; if not (a range
// that straddles a power of two), the digit widens until the used buckets are about as many as
// planned (up to kMaxWideBits; only the used write-combining lines are touched).
TopDigit choose_top_digit(threads::ThreadCtx& t, std::span<std::uint32_t> keys, WorkspaceImpl& w,
                          PerThread& mine, const Options& o, std::size_t lo, std::size_t hi,
                          std::size_t target, int& reads) {
  const std::size_t n = keys.size();
  const int nt = t.threads();
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
  return {end, top, inner, inner_bits, top_shift, top_mask, nb};
}

// Where each bucket starts (mine.bucket_begin) and this thread's first position in each (start
// and pos, shifted by `align`), from every thread's counts; returns the biggest bucket.
std::size_t bucket_offsets(threads::ThreadCtx& t, WorkspaceImpl& w, PerThread& mine, std::size_t nb,
                           std::size_t align) {
  const int nt = t.threads(), me = t.thread();
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
  return biggest;
}

// The scatter's stores, and whether this sort is one of the trials.
struct BucketStores {
  bool stream = false, calibrating = false;
  std::size_t size_key = 0;
  int trial = 0;
};

// Stores: streaming past the last-level cache (cache_bytes); below it the scattered keys may
// still be in the cache when their bucket is sorted, which only a measurement tells (a virtual
// machine's reported last level may not be there): the first four sorts of the size scatter
// cached, streaming, streaming, cached (store_trials.hpp), and later ones keep the faster.
BucketStores bucket_stores(const WorkspaceImpl& w, const Options& o, std::size_t n, int nt,
                           bool direct) {
  BucketStores s;
  s.size_key = static_cast<std::size_t>(std::bit_width(n));
  const bool known = w.bucket_trials.holds(s.size_key, nt);
  s.trial = known ? w.bucket_trials.count() : 0;
  if (direct || o.stores == Stores::cached) {
    s.stream = false;
  } else if (o.stores == Stores::streaming || n * sizeof(std::uint32_t) > o.cache_bytes) {
    s.stream = true;
  } else if (s.trial < StoreTrials::kTrials) {
    s.calibrating = true;
    s.stream = StoreTrials::streams_at(s.trial);
  } else {
    s.stream = w.bucket_trials.stream();
  }
  return s;
}

// The threads take buckets of tmp one at a time and sort each into `result` (keys or tmp, the
// buffer `d.inner` passes end in); mine.outside counts the keys of buckets over `limit`, x passes.
void sort_buckets(threads::ThreadCtx& t, std::span<std::uint32_t> keys,
                  std::span<std::uint32_t> tmp, WorkspaceImpl& w, PerThread& mine, const Options& o,
                  const TopDigit& d, std::uint32_t* const result, std::uint32_t bits_mask,
                  std::size_t limit) {
  const std::size_t nb = d.nb;
  const int end = d.end, top = d.top, inner = d.inner, inner_bits = d.inner_bits;
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
}

// What the bucket sort did (thread 0, after the last barrier).
void bucket_stats(Stats& st, const WorkspaceImpl& w, const Options& o, std::size_t n, int nt,
                  const TopDigit& d, const BucketStores& s, bool direct, int reads) {
  st.method = Method::buckets;
  st.top_bits = d.top;
  st.passes = 1 + d.inner;
  st.skipped = 0;
  st.streaming = s.stream;
  st.calibrated = s.calibrating;
  st.stores_reason =
      direct || o.stores != Stores::automatic ? fixed_stores(o.stores)
      : n * sizeof(std::uint32_t) > o.cache_bytes
          ? beyond_last_level(n * sizeof(std::uint32_t), o.cache_bytes)
      : s.calibrating ? kind(s.stream) + ": trial " + std::to_string(s.trial + 1) + " of " +
                            std::to_string(StoreTrials::kTrials) +
                            " on sorts of this size (they scatter cached, streaming, streaming, "
                            "cached; later ones keep the faster)"
                      : w.bucket_trials.reason("the scatters of the first four sorts of this size");
  // The counting reads, the scatter's read and write, each bucket's read and final write; and
  // the passes of buckets too big for the cache (a count read, then a read and a write each;
  // counted as 8 bytes a key per pass).
  double outside = 0;
  for (int u = 0; u < nt; ++u) outside += w.threads[u]->outside;
  st.bytes = static_cast<double>(n) * sizeof(std::uint32_t) * (reads + 4) +
             outside * 2 * sizeof(std::uint32_t);
}

}  // namespace

std::optional<std::span<std::uint32_t>> sort_in_buckets(
    threads::ThreadCtx& t, std::span<std::uint32_t> keys, std::span<std::uint32_t> tmp,
    WorkspaceImpl& w, PerThread& mine, const Options& o, Stats* stats, std::size_t lo,
    std::size_t hi, int& reads) {
  const std::size_t n = keys.size();
  const int nt = t.threads(), me = t.thread();
  const std::size_t target = std::max<std::size_t>(16, o.bucket_bytes / 32);
  const TopDigit d = choose_top_digit(t, keys, w, mine, o, lo, hi, target, reads);
  mine.bucket_begin.resize(d.nb + 1);
  mine.inner.resize(static_cast<std::size_t>(d.inner) << d.inner_bits);
  const int width = d.end - o.begin_bit;
  const bool direct = o.stores == Stores::direct;
  const std::size_t align =
      direct ? 0 : (reinterpret_cast<std::uintptr_t>(tmp.data()) / sizeof(std::uint32_t)) % kLine;
  const std::size_t biggest = bucket_offsets(t, w, mine, d.nb, align);
  // A bucket and its other half should fit the cache. A bucket that does not is still sorted by
  // the thread that takes it (its passes then go to memory), unless it would hold more than half
  // of one thread's share of the keys: then the team's lsd sorts everything instead.
  const std::size_t limit = o.bucket_bytes / (2 * sizeof(std::uint32_t));
  if (biggest > limit && biggest > target && biggest * 2 * static_cast<std::size_t>(nt) > n) {
    COMPAS_REGION(t, "synchronize");
    t.barrier();  // nobody resizes the counts the others still read
    return std::nullopt;
  }
  const BucketStores s = bucket_stores(w, o, n, nt, direct);
  const Clock::time_point began = Clock::now();  // thread 0's is used
  {
    COMPAS_REGION(t, "compute");
    const std::uint32_t* src = keys.data() + lo;
    scatter(src, hi - lo, tmp.data(), align, d.top_shift, d.top_mask, mine, d.nb, direct, s.stream,
            n);
  }
  {
    COMPAS_REGION(t, "synchronize");
    if (me == 0) w.next_bucket.store(0, std::memory_order_relaxed);
    t.barrier();
  }
  // The scatter wrote tmp; `inner` passes alternate from there, so the result is in keys after
  // an odd number and in tmp after an even one; a bucket that skipped passes is copied there.
  std::uint32_t* const result = d.inner % 2 ? keys.data() : tmp.data();
  const std::uint32_t bits_mask = width >= 32 ? ~std::uint32_t{0}
                                              : ((std::uint32_t{1} << width) - 1)
                                                    << static_cast<unsigned>(o.begin_bit);
  mine.outside = 0;
  sort_buckets(t, keys, tmp, w, mine, o, d, result, bits_mask, limit);
  {
    COMPAS_REGION(t, "synchronize");
    t.barrier();
  }
  if (s.calibrating && me == 0) {  // read by every thread after the next sort's first barrier
    w.bucket_trials.use_for(s.size_key, nt);
    w.bucket_trials.record(std::chrono::duration<double>(Clock::now() - began).count());
  }
  if (stats && me == 0) bucket_stats(*stats, w, o, n, nt, d, s, direct, reads);
  return std::span<std::uint32_t>(result, n);
}

}  // namespace compas::kernels::sort::detail
