// Radix sort of 32-bit unsigned keys on one team (the local half of the sort kernel; sort_job.hpp
// spreads it over the processes of a job).
//
// LSD radix sort: the key is cut into digits of `digit_bits` (8: four passes, 11: three passes
// over 32 bits), least significant first. One read of the array counts every digit of every pass
// at once (per-thread histograms); a pass whose digit is the same in every key moves nothing and
// is skipped (all-equal keys, keys that differ only in their high bits). A pass that runs: each
// thread counts the digit over its block of the source (the first pass reuses the first read, and
// so does every pass of a single thread), the offsets come from an exclusive scan of the counts in
// (digit, thread) order, and each thread scatters its block to the destination in order, so the
// sort is stable. The scatter goes through
// software write-combining buffers: one cache line per digit per thread, written to the
// destination a whole line at a time, with streaming (non-temporal) stores when the array is
// larger than the last-level cache, so the destination lines are never read for ownership. The
// passes alternate between the two buffers; the result is in whichever the last pass wrote.
//
// Byte model (what the passes move, for GB/s): the first read (4 B per key), then per pass that
// runs 8 B per key for the scatter (read, write) and, with several threads, 4 B per key for the
// count of every pass after the first that runs (one thread's counts are the first read's).
// Method::buckets (below) moves 20 B per key: the first read, the scatter's read and write, and
// each bucket's read and final write; its passes inside a bucket stay in the cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compas/base/stores.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/topology.hpp"

namespace compas::kernels::detail {
struct SortInternals;  // the sort's own access to what Workspace hides (kernels/src/sort_local.hpp)
}  // namespace compas::kernels::detail

namespace compas::kernels::sort {

// ---- inputs ----------------------------------------------------------------------------------

// Key distributions of the benchmark.
//   uniform  every bit random
//   npb      NPB IS's keys: the sum of four draws of NPB's randlc (seed 314159265, multiplier
//            5^13), scaled to 32 bits (MAX_KEY = 2^32): a bell-shaped distribution with many
//            repeated keys near the middle
//   equal    every key the same
//   sorted   already in ascending order (evenly spread over 32 bits)
//   reverse  descending order
//   high     only the top 8 bits vary; the low 24 are the same in every key
enum class Dist { uniform, npb, equal, sorted, reverse, high };
std::string to_string(Dist d);
// Throws std::invalid_argument naming the value and the allowed names.
Dist parse_dist(const std::string& name);
const std::vector<Dist>& all_dists();

// A key count (base::SizeSyntax::count): digits, optionally followed by K, M or G (2^10, 2^20,
// 2^30; either case): "4M", "64K", "1000". Throws std::invalid_argument naming the text for zero,
// signs, fractions, other suffixes, garbage and overflow.
std::uint64_t parse_keys(const std::string& text);

constexpr std::uint64_t kDefaultSeed = 314159265;

// Keys [lo, lo + out.size()) of the sequence of n keys of distribution `d`. Key i depends only on
// (d, n, i, seed), so any split of the sequence over processes and threads generates the same
// keys.
void generate(Dist d, std::uint64_t n, std::uint64_t lo, std::span<std::uint32_t> out,
              std::uint64_t seed = kDefaultSeed);

// ---- verification ------------------------------------------------------------------------------

// An order-independent fingerprint of a multiset of keys: the count, and the wrapping sum and the
// xor of a 64-bit hash (a strong mixer) of each key. Two multisets that differ in one key differ
// in sum and xor unless the hashes collide.
struct Fingerprint {
  std::uint64_t count = 0, sum = 0, xor_ = 0;
  Fingerprint& operator+=(const Fingerprint& o) {
    count += o.count;
    sum += o.sum;
    xor_ ^= o.xor_;
    return *this;
  }
  friend Fingerprint operator+(Fingerprint a, const Fingerprint& b) { return a += b; }
  friend bool operator==(const Fingerprint&, const Fingerprint&) = default;
};
std::uint64_t key_hash(std::uint32_t key);
Fingerprint fingerprint(std::span<const std::uint32_t> keys);
// Index of the first key smaller than the one before it; keys.size() when sorted.
std::size_t first_unsorted(std::span<const std::uint32_t> keys);

// ---- the local sort
// ------------------------------------------------------------------------------

// automatic: streaming past Options::cache_bytes, cached up to Options::calibrate_bytes; in
// between, the first sort of a size times both kinds and keeps the faster. cached / streaming:
// write-combining buffers flushed with ordinary / non-temporal stores. direct: no buffers, every
// key stored straight to its place (for comparison). to_string and parse_stores: base/stores.hpp.
using Stores = base::Stores;

// How the passes are arranged.
//   lsd      every pass over the whole array, least significant digit first (above)
//   buckets  one pass on the most significant digit scatters the keys into buckets that fit a
//            hardware thread's share of the L2 (Options::bucket_bytes), then each bucket is
//            LSD-sorted on the rest of the bits while it sits there; the threads take buckets
//            one at a time
//   automatic  buckets when the array exceeds the caches below the last level
//            (Options::calibrate_bytes) and the bits span more than one digit, else lsd
// Buckets read and write the array in memory twice (the scatter, and each bucket once) where lsd
// does it once per pass: 64M uniform keys sort 1.7x faster on one core here. Keys in a narrow
// range may be counted again (at most twice) to choose the digit. A bucket larger than
// Options::bucket_bytes / 8 keys (half the cache in bytes) is sorted out of the cache by the thread
// that takes it; one over half of a thread's share of the keys sends the whole sort to lsd.
// Automatic stores: streaming past cache_bytes; below it the first two bucket sorts of a size
// (the same power of two) try cached and streaming scatters, later ones keep the faster.
enum class Method { automatic, lsd, buckets };
std::string to_string(Method m);
// Throws std::invalid_argument naming the value and the allowed names.
Method parse_method(const std::string& name);

struct Options {
  int digit_bits = 11;  // bits per pass, 1..16 (11: 3 passes over 32 bits, 8: 4 passes)
  // Sort by the bits [begin_bit, end_bit) of the key only (stably: keys equal there keep their
  // order).
  int begin_bit = 0, end_bit = 32;
  Stores stores = Stores::automatic;
  std::size_t cache_bytes = std::size_t{32} << 20;  // automatic: the last-level cache
  // automatic: the caches below the last level (threads::nt_threshold; the jobs fill it in)
  std::size_t calibrate_bytes = std::size_t{32} << 20;
  Method method = Method::automatic;
  // buckets: the cache a bucket and its other half share (bucket_cache_bytes; the jobs fill it
  // in), 1024 .. 2^30. The top digit is chosen so that the average bucket's keys take 1/8 of it.
  std::size_t bucket_bytes = std::size_t{1} << 20;
};
// Throws std::invalid_argument naming a bad digit width or bit range.
void check(const Options& o);
// The largest data or unified cache of the topology, times its instances (what automatic stores
// compare the array against); 32 MiB when the topology shows no cache.
std::size_t cache_bytes(const threads::Topology& topo);
// One hardware thread's share of its level-2 cache (two threads of a core both sort buckets);
// 1 MiB when the topology shows none.
std::size_t bucket_cache_bytes(const threads::Topology& topo);

// What a sort did, for the byte model and the report.
struct Stats {
  int passes = 0;               // passes that moved the keys
  int skipped = 0;              // passes skipped because every key has the same digit there
  bool streaming = false;       // the scatter used non-temporal stores (after calibration, if any)
  bool calibrated = false;      // automatic stores: this sort was a trial (lsd: its first pass
                                // cached, its second not; buckets: the whole sort, one kind)
  double bytes = 0;             // the byte model: bytes the passes read and wrote
  Method method = Method::lsd;  // what ran (automatic resolved; buckets that fell back: lsd)
  int top_bits = 0;             // buckets: the width of the top digit (2^top_bits buckets)
  // Why these stores: the flag that fixed them, the cache rule with the sizes it compared, or
  // the timing that chose them.
  std::string stores_reason;
};

// Per-thread histograms and write-combining buffers, reused from one sort to the next.
class Workspace {
 public:
  Workspace();
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

 private:
  friend struct kernels::detail::SortInternals;
  struct Impl;  // kernels/src (sort_local.hpp)
  friend std::span<std::uint32_t> sort(threads::ThreadCtx& t, std::span<std::uint32_t> keys,
                                       std::span<std::uint32_t> tmp, Workspace& ws,
                                       const Options& o, Stats* stats);
  Impl& impl() { return *impl_; }
  std::unique_ptr<Impl> impl_;
};

// Collective over a team: every thread calls it with the same arguments. Sorts `keys` (stably by
// the bits of Options) using `tmp`, at least as long, as the other buffer; returns the one that
// holds the result (a prefix of `tmp` or `keys` itself). Each thread's share is its block_range
// of the keys. Regions "compute" (counting, scattering) and "synchronize" (team barriers) are
// recorded when a profile is active. Throws std::invalid_argument (check(o), tmp too short) on
// every thread before anything is touched.
std::span<std::uint32_t> sort(threads::ThreadCtx& t, std::span<std::uint32_t> keys,
                              std::span<std::uint32_t> tmp, Workspace& ws, const Options& o = {},
                              Stats* stats = nullptr);

// Convenience: sorts `keys` on the team; the result is in `keys`.
Stats sort(threads::Team& team, std::vector<std::uint32_t>& keys, const Options& o = {});

// A buffer of keys aligned to 4 KiB, with transparent huge pages requested where the system gives
// them on request (madvise); the memory is not initialized.
class KeyBuffer {
 public:
  KeyBuffer() = default;
  explicit KeyBuffer(std::size_t n);
  ~KeyBuffer();
  KeyBuffer(KeyBuffer&& o) noexcept;
  KeyBuffer& operator=(KeyBuffer&& o) noexcept;
  std::uint32_t* data() { return p_; }
  const std::uint32_t* data() const { return p_; }
  std::size_t size() const { return n_; }
  std::span<std::uint32_t> span() { return {p_, n_}; }

 private:
  std::uint32_t* p_ = nullptr;
  std::size_t n_ = 0, bytes_ = 0;
};

}  // namespace compas::kernels::sort
