// Cache probe (COMPaS Fig. 12): time per load against working-set size, for a randomized
// pointer chase (latency: one dependent load per step over a single random cycle of 64-byte
// lines) and a streaming read (sequential 8-byte loads). The chase curve rises in steps where
// the working set outgrows a cache; the knees are found on it and set beside hwloc's cache sizes.
//
// Knee definition: the chase curve is read as plateaus joined by climbs. A plateau ends at the
// last size whose latency is within `rise_tol` of its level; a climb counts when it reaches a new
// plateau at least `min_ratio` times higher (one knee per climb, however many sizes it spans).
// The knee is where the climb crosses halfway between the two levels (their geometric mean,
// log-log interpolation), reported as the measured size closest to that crossing: it sits near
// the capacity, where misses become common, while the first departure from the plateau comes
// earlier (replacement policy, TLB reach); that one is kept too (plateau_end_bytes).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compas/perf/counters.hpp"
#include "compas/perf/region.hpp"
#include "compas/threads/topology.hpp"

namespace compas::probes {

// Sizes are parsed and printed with parse_size() and format_size() of membw.hpp.

struct CacheRecord {
  std::uint64_t size_bytes = 0;
  std::string pattern;  // "chase" | "stream"
  double ns_per_load = 0;
  double cycles_per_load = 0;  // TSC cycles (constant-rate time-stamp counter), not core cycles
  double min_ns_per_load = 0;
  double max_ns_per_load = 0;
  double bandwidth_gbs = 0;  // stream only: bytes read per ns
  std::uint64_t loads = 0;   // loads in one timed repeat
  int repeats = 0;
  // Repeats during which the thread lost its cpu even after retries; their descheduled time
  // (wall minus thread CPU time) is taken out.
  int disturbed_repeats = 0;
  // When counters were requested: this size's timed repeats (retries included) as one region,
  // "chase 64 KiB" or "stream 64 KiB", with the counters read and the derived metrics (for the
  // stream, bandwidth_gbs from the bytes it read).
  std::optional<perf::RegionSummary> region;
};

struct CacheProbeOptions {
  std::uint64_t min_bytes = 4ull << 10;
  std::uint64_t max_bytes = 1ull << 30;
  int steps_per_octave = 4;  // sizes 2^k * (1 + i/steps): 4 -> 32K, 40K, 48K, 56K, 64K, ...
  int cpu = -1;              // OS index of the PU to pin the measuring thread to; -1: the first
  // The buffer's pages on this NUMA node (logical index), bound before the first touch; empty:
  // where the first touch puts them (the measuring thread's node).
  std::optional<int> memory_numa;
  int repeats = 7;       // timed repeats per size and pattern; the median is reported
  double repeat_ms = 2;  // time budget of one timed repeat (it runs at least this long)
  std::uint64_t seed = 0x5eed;
  // Called after each size is measured (chase and stream), e.g. to print a table row.
  std::function<void(const CacheRecord& chase, const CacheRecord& stream)> progress;
  // Counters (choose_events). When something was requested, the measuring thread runs as a
  // one-thread team with a Profile, and every timed repeat is a region ("chase", "stream");
  // calibration and the shuffle are not counted. Default: nothing requested, nothing read.
  perf::EventChoice events{};
};

// A cache of the machine as a knee may be matched against it.
struct CacheTarget {
  int level = 0;
  std::string type;                  // "data" | "unified"
  std::uint64_t size_bytes = 0;      // one instance, as hwloc reports it
  int cores_sharing = 1;             // cores sharing one instance
  std::uint64_t per_core_bytes = 0;  // size_bytes / cores_sharing: what a knee is matched to
  std::string name() const;          // "L1d", "L2", "L3"
};

struct CacheKnee {
  std::uint64_t size_bytes = 0;           // measured size closest to the halfway crossing
  std::uint64_t plateau_end_bytes = 0;    // last size still on the lower plateau
  std::uint64_t plateau_start_bytes = 0;  // first size on the upper plateau
  double ns_before = 0;                   // lower plateau level (median of its last points)
  double ns_after = 0;                    // upper plateau level (median of its first points)
  // The hwloc cache matched to this knee (level 0 when none is left within kKneeMatchOctaves);
  // see match_knees.
  CacheTarget cache;
  double octaves_from_cache = 0;  // log2(size_bytes / cache.per_core_bytes)
  // An unmatched knee: the closest cache not matched to another knee (level 0 when none), and
  // how far. The knee is then an effective size of its own (a TLB's reach, a shared cache's
  // share, a cache hwloc does not list), not that cache.
  CacheTarget nearest;
  double octaves_from_nearest = 0;
};

// How far (in octaves, |log2(knee / per-core size)|) a knee may lie from the cache it is paired
// with.
constexpr double kKneeMatchOctaves = 1.0;

struct KneeOptions {
  double min_ratio = 1.5;   // a climb counts when the new plateau is this much higher
  double rise_tol = 1.15;   // a point above plateau * rise_tol leaves the plateau
  double flat_step = 1.08;  // a climb ends where the next two points rise less than this
};

struct CacheProbeResult {
  std::vector<std::uint64_t> sizes;
  std::vector<CacheRecord> records;  // per size: the chase record, then the stream record
  std::vector<CacheKnee> knees;
  std::vector<CacheTarget> caches;  // hwloc's data/unified caches, by level
  int cpu = 0;
  double tsc_ghz = 0;
  bool tsc_invariant = false;
  std::uint64_t max_bytes_requested = 0;  // differs from sizes.back() when capped to memory
  std::uint64_t buffer_bytes = 0;
  bool hugepage_advised = false;     // madvise(MADV_HUGEPAGE) on the buffer succeeded
  std::uint64_t hugepage_bytes = 0;  // of the buffer, backed by transparent huge pages
  double seconds = 0;
  // When counters were requested: "chase" and "stream" over all sizes.
  std::vector<perf::RegionSummary> regions;
  std::vector<std::string> counter_errors;  // why the event set could not be made, if so
};

// Working-set sizes: min, then the points 2^k * (1 + i/steps) strictly between, then max;
// multiples of 64 bytes, strictly increasing, all within [min, max]. Throws
// std::invalid_argument naming --min/--max/--steps-per-octave on a bad range.
std::vector<std::uint64_t> cache_probe_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                             int steps_per_octave);

// Sattolo's algorithm: next[i] = the successor of node i in one random cycle through all
// next.size() nodes (a uniformly random cyclic permutation).
void sattolo_cycle(std::span<std::uint32_t> next, std::uint64_t seed);
std::vector<std::uint32_t> sattolo_cycle(std::size_t n, std::uint64_t seed);

// hwloc's data and unified caches, with each one's per-core share.
std::vector<CacheTarget> cache_targets(const threads::Topology& topo);

// Knees on a latency curve (sizes strictly increasing, ns > 0, same length); see the
// definition at the top. Pure: no matching, `cache` is left empty.
std::vector<CacheKnee> detect_knees(const std::vector<std::uint64_t>& sizes,
                                    const std::vector<double>& ns, const KneeOptions& opt = {});

// Matches knees and caches one to one, closest pairs (by |log2(knee / per-core size)|) first,
// only pairs within kKneeMatchOctaves; sets each matched knee's cache and distance in octaves. A
// knee left over keeps level 0 and gets its nearest unmatched cache.
void match_knees(std::vector<CacheKnee>& knees, const std::vector<CacheTarget>& caches);

// Runs the probe on a thread pinned to opt.cpu (the caller's own binding is left alone).
// Needs the host topology. The largest size is capped to half the available memory.
// Throws std::invalid_argument for bad options (naming the flag).
CacheProbeResult run_cache_probe(const threads::Topology& topo, const CacheProbeOptions& opt);

}  // namespace compas::probes
