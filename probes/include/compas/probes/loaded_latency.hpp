// Loaded latency (`compas membw --loaded-latency`): how the latency of a dependent load grows as
// other threads load the memory bus. One thread (the chaser, the team's first) walks a random
// cycle of cache lines over a buffer far larger than the last-level cache, one dependent load per
// step, as the cache probe does; the other threads (traffic) stream over their own buffers in
// 4 KiB chunks with an injection delay (busy waiting) between chunks, from idle (they sleep, so
// that the chase sees what `compas cache` sees) through long delays down to 0 (as fast as they
// can, in 64 KiB calls). Each point pairs the traffic's total bandwidth with the chaser's ns per
// load. Where two cpus share a core, a busy neighbour slows the chase even without memory traffic,
// so the longest delays may sit above idle.
//
// Bytes are counted as membw counts them: read + written, no write-allocate. Traffic mixes:
//   read    loads only                                          64 B per line
//   rw      copy with streaming stores: one line read, one line written (1:1 on the bus)  128 B
//   stream  streaming (non-temporal) stores only                64 B per line
//
// The knee of a curve is the bandwidth at which latency has risen to `factor` (2) times the idle
// latency; see find_latency_knee for when a rise counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compas/probes/membw.hpp"
#include "compas/threads/topology.hpp"

namespace compas::probes {

enum class TrafficMix { read, rw, stream };
std::string to_string(TrafficMix m);  // "read", "rw", "stream"
// Comma list of read, rw, stream, in the order given, duplicates dropped. Throws
// std::invalid_argument naming the list and the item for an empty list, an empty item or an
// unknown name.
std::vector<TrafficMix> parse_traffic_mixes(const std::string& list);
int traffic_arrays(TrafficMix m);  // arrays a traffic thread streams over: 1, 2, 1

// Where the traffic threads run relative to the chaser.
enum class TrafficOn {
  same,   // the chaser's NUMA node (its socket where there is one node)
  other,  // another NUMA node, else another socket
};
std::string to_string(TrafficOn t);                   // "same", "other"
TrafficOn parse_traffic_on(const std::string& text);  // throws std::invalid_argument naming it

// Injection delays in ns, largest first (so a sweep goes from light to heavy traffic). "auto":
// default_delays(); else a comma list of whole ns in 0..kMaxDelayNs, duplicates dropped. Throws
// std::invalid_argument naming the list and the item.
constexpr std::uint64_t kMaxDelayNs = 1000000;
std::vector<std::uint64_t> parse_delays(const std::string& text);
// 50 us down to 0 in 1-2-5 steps: from nearly idle to as fast as the traffic threads can go.
std::vector<std::uint64_t> default_delays();

// max(8 x the last-level cache, 256 MiB): far beyond the caches, so every chase step misses.
std::size_t default_chase_bytes(const threads::Topology& topo);

// The team's cpus (OS indices): the chaser first (the first PU this process may use), then
// `traffic_threads` traffic cpus, one per core, on the chaser's node (same) or on the first other
// node (other); 0 traffic threads means every core there (but the chaser's). Nodes are NUMA
// nodes when there are several, else sockets. Throws std::invalid_argument for `other` on a
// machine with one node, and for more traffic threads than cores there.
std::vector<int> loaded_latency_cpus(const threads::Topology& topo, TrafficOn on,
                                     int traffic_threads);

struct LoadedLatencyOptions {
  std::size_t chase_bytes = 0;    // the chase buffer; 0: default_chase_bytes
  std::size_t traffic_bytes = 0;  // all arrays of all traffic threads; 0: as chase_bytes
  std::vector<TrafficMix> mixes{TrafficMix::read, TrafficMix::rw, TrafficMix::stream};
  std::vector<std::uint64_t> delays_ns = default_delays();  // the idle point is always added
  TrafficOn traffic_on = TrafficOn::same;
  int traffic_threads = 0;       // 0: every core of the chosen node but the chaser's
  int repeats = 5;               // timed chase repeats per point; median, min and max reported
  double repeat_ms = 50;         // one timed repeat chases at least this long
  std::optional<base::Isa> isa;  // traffic kernels; empty: best_membw_isa()
  bool huge_pages = true;        // madvise(MADV_HUGEPAGE) on both buffers
  std::uint64_t seed = 0x5eed;
};

struct LoadedLatencyPoint {
  TrafficMix mix = TrafficMix::read;
  std::optional<std::uint64_t> delay_ns;  // empty: idle (traffic threads do nothing)
  int traffic_threads = 0;
  double bandwidth_gbs = 0;  // traffic, all threads: median over the repeats
  double bandwidth_min_gbs = 0, bandwidth_max_gbs = 0;
  double latency_ns = 0;  // chaser, ns per dependent load: median over the repeats
  double latency_min_ns = 0, latency_max_ns = 0;
  std::vector<double> latency_samples_ns;  // one per repeat, in order
  std::vector<double> bandwidth_samples_gbs;
  std::uint64_t loads = 0;  // dependent loads over the timed repeats
  // Repeats during which the chaser lost its cpu even after retries; their descheduled time
  // (wall minus thread CPU time) is taken out.
  int disturbed_repeats = 0;
};

// One point of a latency-bandwidth curve, as the knee finder sees it.
struct LatencyPoint {
  double bandwidth_gbs = 0;
  double latency_ns = 0;  // median of repeats
  double latency_min_ns = 0, latency_max_ns = 0;
};

struct LatencyKnee {
  bool reached = false;
  double bandwidth_gbs = 0;      // reached: where the curve crosses threshold_ns (interpolated)
  double threshold_ns = 0;       // factor x idle latency
  double max_bandwidth_gbs = 0;  // highest bandwidth among the points
  double latency_at_max_ns = 0;  // latency of that point
  double max_latency_ns = 0;     // highest latency among the points
  // Not reached, but some point's median passed the threshold: within the spread (noise).
  bool within_noise = false;
};

// The knee of a curve: `loaded` in order of increasing offered load (decreasing delay), `idle`
// the curve's start (bandwidth 0). A point is above the threshold (factor x idle median) only
// when its rise is beyond the spread: its median is at least the threshold, its fastest repeat is
// slower than idle's slowest, the rise from idle exceeds the two spreads (max - min) together, and
// the next point (if any) is at least at the threshold too (one stray point is not a knee). The
// knee is interpolated linearly between the first such point and the point before it (idle for
// the first). Pure. Throws std::invalid_argument for factor <= 1 or a point that is not
// 0 < min <= median <= max (finite) or has a negative bandwidth.
LatencyKnee find_latency_knee(const LatencyPoint& idle, const std::vector<LatencyPoint>& loaded,
                              double factor = 2.0);

struct LoadedLatencyResult {
  std::vector<LoadedLatencyPoint> points;  // per mix in the order asked: idle, then delays
  std::vector<TrafficMix> mixes;
  std::vector<std::uint64_t> delays_ns;  // largest first
  int chaser_cpu = 0;
  std::vector<int> traffic_cpus;
  TrafficOn traffic_on = TrafficOn::same;
  std::size_t chase_bytes = 0, traffic_bytes = 0;
  std::size_t chunk_bytes = 0;  // per array between two delays
  std::size_t span_bytes = 0;   // per array and call at delay 0
  base::Isa isa = base::Isa::generic;
  double tsc_ghz = 0;
  std::uint64_t hugepage_bytes = 0;  // of the chase buffer, backed by transparent huge pages
  // Idle latency over every mix's idle point: median of all their repeats, min, max.
  LatencyPoint idle;
  std::vector<LatencyKnee> knees;  // one per mix, in the order of `mixes`
  double seconds = 0;
};

// Runs the sweep: for each mix, the idle point, then every delay, largest first. Needs the host
// topology. Throws std::invalid_argument for bad options (naming the value): no mixes, repeats
// outside 1..1000, repeat_ms outside (0, 60000], sizes too small for the traffic threads' chunks
// or together above half of physical memory, placement (see loaded_latency_cpus).
LoadedLatencyResult run_loaded_latency(const threads::Topology& topo,
                                       const LoadedLatencyOptions& options);

// Exposed for tests.
namespace loaded_latency {
// Links `lines` 64-byte lines at `base` (64-byte aligned) into one random cycle (Sattolo): the
// first 8 bytes of each line hold the address of the next.
void link_chase(void* base, std::size_t lines, std::uint64_t seed);
// The traffic loop alone on the calling thread, over its own buffer of `bytes` (all arrays):
// chunks of `mix` with `delay_ns` of busy waiting between them, for about `ms`. Returns GB/s
// counted as the sweep counts them.
double traffic_alone_gbs(TrafficMix mix, std::uint64_t delay_ns, std::size_t bytes, double ms,
                         base::Isa isa);
}  // namespace loaded_latency

}  // namespace compas::probes
