// Internal to the local sort (sort.hpp): the per-thread state, the counting and scatter loops
// and the stores' reasons, shared by the LSD passes (sort.cpp) and the bucket method
// (sort_buckets.cpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compas/kernels/sort.hpp"
#include "store_trials.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define COMPAS_SORT_HAVE_SSE2 1
#endif

namespace compas::kernels::detail {
// The name of Workspace's implementation, private to it: the sort's sources say WorkspaceImpl.
struct SortInternals {
  using WorkspaceImpl = sort::Workspace::Impl;
};
}  // namespace compas::kernels::detail

namespace compas::kernels::sort {

namespace detail {

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

// The counting and scatter loops have internal linkage in each source that includes them, as they
// had when the local sort was one file: the compiler inlines them into their callers as it did.
namespace {

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

// ---- why the stores (Stats::stores_reason) ---------------------------------------------------

inline std::string kind(bool stream) {
  return stream ? "streaming" : "cached";
}

inline std::string mib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

inline std::string fixed_stores(Stores s) {
  return to_string(s) + ": --stores " + to_string(s);
}

inline std::string beyond_last_level(std::size_t bytes, std::size_t last_level) {
  return "streaming: the keys (" + mib(bytes) + ") exceed the last-level caches (" +
         mib(last_level) + ")";
}

}  // namespace detail

using WorkspaceImpl = kernels::detail::SortInternals::WorkspaceImpl;

struct Workspace::Impl {
  std::vector<std::unique_ptr<detail::PerThread>> threads;
  // Automatic stores between Options::calibrate_bytes and Options::cache_bytes (store_trials.hpp):
  // the LSD sort times its first two passes of the first two sorts of a size (the same power of
  // two: a distributed sort's share varies a little) on a team, the bucket sort the scatters of
  // the first four sorts; later ones keep the faster (thread 0 writes them, between barriers).
  StoreTrials lsd_trials, bucket_trials;
  std::atomic<std::size_t> next_bucket{0};  // buckets: the next one a thread takes
};

namespace detail {

// Method::buckets (sort.hpp). Returns nothing, with the keys untouched, when a bucket would not
// fit the cache (every thread decides the same from the shared counts); the caller then runs lsd.
// `reads` counts the reads of the whole array that counted a top digit (for the byte model).
std::optional<std::span<std::uint32_t>> sort_in_buckets(threads::ThreadCtx& t,
                                                        std::span<std::uint32_t> keys,
                                                        std::span<std::uint32_t> tmp,
                                                        WorkspaceImpl& w, PerThread& mine,
                                                        const Options& o, Stats* stats,
                                                        std::size_t lo, std::size_t hi, int& reads);

}  // namespace detail

}  // namespace compas::kernels::sort
