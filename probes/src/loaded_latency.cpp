// Loaded latency: a pointer chase on the team's first thread while the others stream with an
// injection delay. See compas/probes/loaded_latency.hpp.
#include "compas/probes/loaded_latency.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <thread>

#include "compas/base/pages.hpp"
#include "compas/base/statistics.hpp"
#include "compas/perf/timer.hpp"
#include "compas/probes/cache_probe.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/wait.hpp"
#include "loaded_latency_kernels.hpp"

namespace compas::probes {

namespace {

using base::kHugePage;
using base::kLine;
using base::round_up;
// Traffic works in chunks of this many bytes per array, with the injection delay between two
// chunks: small enough that the load it offers is smooth at the chaser's time scale (a chunk
// takes ~0.15 us from memory at full speed), large enough that a chunk's fixed cost is small.
constexpr std::size_t kChunkBytes = 4096;
// Without a delay there is nothing to smooth: longer calls keep the per-call cost (about 10% of
// the read bandwidth at 4 KiB) out of the heaviest point.
constexpr std::size_t kSpanBytes = 64 << 10;
// The written array of `rw` starts this far past a 4 KiB boundary from the read one, so that
// loads and stores of one chunk do not alias on 4 KiB offsets.
constexpr std::size_t kArrayShift = 5 * kLine;
constexpr std::size_t kMinBytes = 64 << 10;
constexpr std::uint64_t kChaseBlock = 4096;  // dependent loads between two clock reads
constexpr std::uint64_t kExactSpinNs = 200;  // the end of a delay: no pauses (see spin_ticks)

// Anonymous memory, 2 MiB aligned, transparent huge pages asked for; untouched until first use.
class Mapping {
 public:
  Mapping(std::size_t bytes, bool huge) : map_(bytes, huge, "loaded latency") {}
  char* data() const { return map_.data(); }
  std::size_t bytes() const { return map_.bytes(); }

 private:
  base::HugePageMapping map_;
};

// Bytes of [p, p + bytes) backed by huge pages (AnonHugePages in /proc/self/smaps).
std::uint64_t huge_bytes(const void* p, std::size_t bytes) {
  std::ifstream in("/proc/self/smaps");
  const auto lo = reinterpret_cast<std::uintptr_t>(p), hi = lo + bytes;
  std::string line;
  bool inside = false;
  std::uint64_t total = 0;
  while (std::getline(in, line)) {
    unsigned long long a = 0, b = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &a, &b) == 2)
      inside = a < hi && b > lo;
    else if (inside && line.rfind("AnonHugePages:", 0) == 0)
      total += std::strtoull(line.c_str() + 14, nullptr, 10) * 1024;
  }
  return std::min<std::uint64_t>(total, bytes);
}

double cpu_ns_of(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// ---- the chase --------------------------------------------------------------------------------

struct alignas(kLine) Line {
  std::uint64_t w[kLine / 8];
};

// One dependent load per step, 16 per iteration, as the cache probe's chase: the idle point must
// measure what `compas cache` measures.
[[gnu::noinline]] const Line* chase(const Line* p, std::uint64_t steps) {
  for (std::uint64_t s = 0; s < steps; s += 16) {
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) p = reinterpret_cast<const Line*>(p->w[0]);
  }
  return p;
}

// Where the traffic's sums and the chase's last line go, so that neither can be optimized away;
// atomic because every traffic thread writes it.
std::atomic<std::uint64_t> g_sink{0};

// ---- the traffic ------------------------------------------------------------------------------

// One traffic thread's arrays: `a` is read (read, rw) or written (stream), `b` written (rw).
struct TrafficArrays {
  double* a = nullptr;
  double* b = nullptr;
  std::size_t n = 0;  // doubles per array, a whole number of chunks
};

// The arrays of `mix` inside one thread's block of `bytes`.
TrafficArrays arrays_in(char* block, std::size_t bytes, TrafficMix mix) {
  constexpr std::size_t chunk = kChunkBytes / 8;
  TrafficArrays t;
  t.a = reinterpret_cast<double*>(block);
  if (traffic_arrays(mix) == 1) {
    t.n = bytes / 8 / chunk * chunk;
    return t;
  }
  const std::size_t room = bytes - kChunkBytes - kArrayShift;  // for b's offset
  t.n = room / 16 / chunk * chunk;
  t.b = reinterpret_cast<double*>(block + round_up(t.n * 8, kChunkBytes) + kArrayShift);
  return t;
}

using loaded_latency_kernels::copy_chunk;
using loaded_latency_kernels::read_chunk;
using loaded_latency_kernels::ReadSums;
using loaded_latency_kernels::store_chunk;

// `len` elements of every array of `mix` from element `at`; returns the bytes counted (read +
// written).
std::uint64_t chunk(TrafficMix mix, base::Isa isa, const TrafficArrays& t, std::size_t at,
                    std::size_t len, ReadSums& acc) {
  switch (mix) {
    case TrafficMix::read:
      read_chunk(isa, acc, t.a + at, len);
      return 8 * len;
    case TrafficMix::rw:
      copy_chunk(isa, t.b + at, t.a + at, len);
      return 16 * len;
    case TrafficMix::stream:
      store_chunk(isa, t.a + at, len);
      return 8 * len;
  }
  return 0;
}

std::uint64_t ticks_of(std::uint64_t ns) {
  return static_cast<std::uint64_t>(static_cast<double>(ns) * perf::tsc().ghz + 0.5);
}

// Busy waiting on the TSC. A pause costs 26 ns on an AMD EPYC guest (about 40 on recent Intel
// cores) and would round short delays up to its multiples, so the last `exact` ticks spin on the
// TSC alone; before that, pauses leave more of a shared core to its other thread.
void spin_ticks(std::uint64_t ticks, std::uint64_t exact) {
  const std::uint64_t end = perf::read_tsc() + ticks;
  for (std::uint64_t t = perf::read_tsc(); t < end; t = perf::read_tsc())
    if (end - t > exact) threads::cpu_relax();
}

// Chunks over the arrays, wrapping around, with `delay_ticks` of busy waiting after each, until
// `stop()`. `counted` carries the running total of bytes for whoever samples it.
template <class Stop>
void traffic_loop(TrafficMix mix, base::Isa isa, const TrafficArrays& t, std::uint64_t delay_ticks,
                  std::atomic<std::uint64_t>& counted, Stop&& stop) {
  const std::size_t len = (delay_ticks ? kChunkBytes : kSpanBytes) / 8;
  const std::uint64_t exact_ticks = ticks_of(kExactSpinNs);
  std::uint64_t bytes = counted.load(std::memory_order_relaxed);
  ReadSums acc;
  std::size_t at = 0;
  while (!stop()) {
    const std::size_t m = std::min(len, t.n - at);
    bytes += chunk(mix, isa, t, at, m, acc);
    counted.store(bytes, std::memory_order_relaxed);
    at = at + m == t.n ? 0 : at + m;
    if (delay_ticks) spin_ticks(delay_ticks, exact_ticks);
  }
  loaded_latency_kernels::fence_streams();  // the streaming stores are done before reporting
  double sum = 0;
  for (double v : acc.v) sum += v;
  g_sink.store(std::bit_cast<std::uint64_t>(sum), std::memory_order_relaxed);
}

// ---- one point, on the chaser ------------------------------------------------------------------

struct alignas(64) TrafficSlot {
  std::atomic<std::uint64_t> bytes{0};
};

// What the chaser watches during a repeat: the traffic's byte counters and, when the traffic is
// busy (not idle), its threads' CPU clocks.
struct Watch {
  const std::vector<TrafficSlot>& slots;
  const std::vector<clockid_t>& clocks;
  bool busy = false;

  std::uint64_t bytes() const {
    std::uint64_t sum = 0;
    for (const auto& s : slots) sum += s.bytes.load(std::memory_order_relaxed);
    return sum;
  }
  std::vector<double> cpu_ns() const {
    std::vector<double> out;
    if (busy)
      for (clockid_t c : clocks) out.push_back(cpu_ns_of(c));
    return out;
  }
};

struct Repeat {
  double wall_ns = 0, cpu_ns = 0;
  double traffic_cpu_ns = 0;  // the least CPU time any busy traffic thread had; wall when idle
  std::uint64_t loads = 0, traffic_bytes = 0;
  // Share of the repeat that the chaser and every busy traffic thread ran.
  double ran() const { return std::min(cpu_ns, traffic_cpu_ns) / wall_ns; }
  bool clean() const { return ran() >= 0.98; }
  // Wall time with the chaser's descheduled part taken out (for a repeat that was never clean).
  double latency_ns() const { return std::min(wall_ns, cpu_ns) / static_cast<double>(loads); }
  double gbs() const { return static_cast<double>(traffic_bytes) / wall_ns; }
};

// Chases for at least min_ns, the traffic's bytes and CPU time sampled around it.
Repeat timed_chase(const Line*& p, double min_ns, const Watch& w) {
  Repeat r;
  const auto tc0 = w.cpu_ns();
  const double c0 = cpu_ns_of(CLOCK_THREAD_CPUTIME_ID);
  const std::uint64_t b0 = w.bytes(), t0 = perf::now_ns();
  std::uint64_t t1 = t0;
  do {
    p = chase(p, kChaseBlock);
    r.loads += kChaseBlock;
    t1 = perf::now_ns();
  } while (static_cast<double>(t1 - t0) < min_ns);
  r.traffic_bytes = w.bytes() - b0;
  r.cpu_ns = cpu_ns_of(CLOCK_THREAD_CPUTIME_ID) - c0;
  const auto tc1 = w.cpu_ns();
  r.wall_ns = static_cast<double>(std::max<std::uint64_t>(t1 - t0, 1));
  r.traffic_cpu_ns = r.wall_ns;
  for (std::size_t k = 0; k < tc0.size(); ++k)
    r.traffic_cpu_ns = std::min(r.traffic_cpu_ns, tc1[k] - tc0[k]);
  return r;
}

// `repeats` repeats that the scheduler left alone: a repeat during which the chaser or a busy
// traffic thread lost its cpu is run again, up to 3x the repeats asked for; then the least
// disturbed fill in.
std::vector<Repeat> clean_repeats(const Line*& p, int repeats, double min_ns, const Watch& w,
                                  int* disturbed) {
  std::vector<Repeat> clean, other;
  for (int a = 0; a < 3 * repeats && static_cast<int>(clean.size()) < repeats; ++a) {
    const Repeat r = timed_chase(p, min_ns, w);
    (r.clean() ? clean : other).push_back(r);
  }
  std::sort(other.begin(), other.end(),
            [](const Repeat& x, const Repeat& y) { return x.ran() > y.ran(); });
  *disturbed = 0;
  for (std::size_t i = 0; static_cast<int>(clean.size()) < repeats && i < other.size(); ++i) {
    clean.push_back(other[i]);
    ++*disturbed;
  }
  return clean;
}

LoadedLatencyPoint summarize(const std::vector<Repeat>& runs) {
  LoadedLatencyPoint pt;
  for (const auto& r : runs) {
    pt.latency_samples_ns.push_back(r.latency_ns());
    pt.bandwidth_samples_gbs.push_back(r.gbs());
    pt.loads += r.loads;
  }
  const auto& lat = pt.latency_samples_ns;
  const auto& bw = pt.bandwidth_samples_gbs;
  const auto l = base::spread(lat), b = base::spread(bw);
  pt.latency_ns = l.median;
  pt.latency_min_ns = l.min;
  pt.latency_max_ns = l.max;
  pt.bandwidth_gbs = b.median;
  pt.bandwidth_min_gbs = b.min;
  pt.bandwidth_max_gbs = b.max;
  return pt;
}

// ---- the sweep ---------------------------------------------------------------------------------

// Options with every default filled in and checked.
struct Plan {
  std::vector<int> cpus;  // chaser first
  std::size_t chase_bytes = 0, traffic_bytes = 0;
  base::Isa isa = base::Isa::generic;
  int traffic_threads() const { return static_cast<int>(cpus.size()) - 1; }
};

// One point of the sweep: a mix at a delay, or idle.
struct Step {
  TrafficMix mix;
  std::optional<std::uint64_t> delay_ns;
};

std::vector<Step> steps_of(const LoadedLatencyOptions& o) {
  std::vector<Step> steps;
  for (auto mix : o.mixes) {
    steps.push_back({mix, std::nullopt});
    for (auto d : o.delays_ns) steps.push_back({mix, d});
  }
  return steps;
}

// What the team shares during the sweep.
struct Shared {
  std::vector<TrafficSlot> slots;  // one per traffic thread
  std::vector<clockid_t> clocks;   // each traffic thread's CPU clock
  alignas(64) std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<Mapping>> blocks;  // one per traffic thread
  std::size_t block_bytes = 0;                   // used of each block
  std::unique_ptr<Mapping> chase;
  const Line* chase_at = nullptr;
  std::vector<LoadedLatencyPoint> points;
};

// Sets the stop flag however the chaser leaves a point, so an exception there cannot leave the
// traffic threads streaming forever while the team waits for them.
struct StopOnExit {
  std::atomic<bool>& stop;
  ~StopOnExit() { stop.store(true, std::memory_order_relaxed); }
};

void chaser_point(Shared& sh, const Step& s, const LoadedLatencyOptions& o, const Plan& plan) {
  StopOnExit guard{sh.stop};
  const double min_ns = o.repeat_ms * 1e6;
  const Watch watch{sh.slots, sh.clocks, s.delay_ns.has_value()};
  timed_chase(sh.chase_at, min_ns, watch);  // warm-up: the traffic reaches its pace
  int disturbed = 0;
  const auto runs = clean_repeats(sh.chase_at, o.repeats, min_ns, watch, &disturbed);
  LoadedLatencyPoint pt = summarize(runs);
  pt.mix = s.mix;
  pt.delay_ns = s.delay_ns;
  pt.traffic_threads = plan.traffic_threads();
  pt.disturbed_repeats = disturbed;
  sh.points.push_back(std::move(pt));
}

void traffic_point(Shared& sh, const Step& s, int k, base::Isa isa) {
  auto stopped = [&] { return sh.stop.load(std::memory_order_relaxed); };
  if (!s.delay_ns) {
    // Idle sleeps rather than spins: where two cpus share a core a spinning neighbour alone
    // slowed the chase by 10-20% (AMD EPYC guest), and idle must be what `compas cache` sees.
    while (!stopped()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return;
  }
  const Mapping& m = *sh.blocks[static_cast<std::size_t>(k)];
  traffic_loop(s.mix, isa, arrays_in(m.data(), sh.block_bytes, s.mix), ticks_of(*s.delay_ns),
               sh.slots[static_cast<std::size_t>(k)].bytes, stopped);
}

// First touch: the chase buffer by the chaser, each traffic block by its thread (its node).
void prepare(Shared& sh, threads::ThreadCtx& c, const LoadedLatencyOptions& o, const Plan& plan) {
  if (c.is_leader()) {
    std::memset(sh.chase->data(), 0, plan.chase_bytes);
    loaded_latency::link_chase(sh.chase->data(), plan.chase_bytes / kLine, o.seed);
    sh.chase_at = reinterpret_cast<const Line*>(sh.chase->data());
  } else {
    const auto k = static_cast<std::size_t>(c.thread() - 1);
    std::memset(sh.blocks[k]->data(), 0, sh.block_bytes);
    if (pthread_getcpuclockid(pthread_self(), &sh.clocks[k]) != 0)
      throw std::runtime_error("loaded latency: no CPU clock for traffic thread " +
                               std::to_string(k));
  }
}

void sweep(threads::Team& team, Shared& sh, const LoadedLatencyOptions& o, const Plan& plan) {
  const auto steps = steps_of(o);
  team.run([&](threads::ThreadCtx& c) {
    prepare(sh, c, o, plan);
    for (const Step& s : steps) {
      c.barrier();
      if (c.is_leader())
        chaser_point(sh, s, o, plan);
      else
        traffic_point(sh, s, c.thread() - 1, plan.isa);
      c.barrier();
      // Nobody reads the flag again before the next step's first barrier.
      if (c.is_leader()) sh.stop.store(false, std::memory_order_relaxed);
    }
  });
}

// ---- checks -----------------------------------------------------------------------------------

// `need` says who needs `min_bytes`.
void check_size(std::size_t bytes, std::size_t min_bytes, const std::string& need) {
  const std::string value = "--size '" + format_size(bytes) + "' (" + std::to_string(bytes) + " B)";
  if (bytes < min_bytes)
    throw std::invalid_argument(value + ": too small; " + need + " at least " +
                                format_size(min_bytes));
  if (bytes / kLine > (std::uint64_t{1} << 32))
    throw std::invalid_argument(value + ": too large; at most 256 GiB (2^32 lines)");
}

Plan plan_of(const threads::Topology& topo, const LoadedLatencyOptions& o) {
  if (topo.is_synthetic())
    throw std::invalid_argument("loaded latency needs the host topology, not '" +
                                topo.description() + "'");
  if (o.mixes.empty()) throw std::invalid_argument("--mix: no traffic mix given");
  if (o.repeats < 1 || o.repeats > 1000)
    throw std::invalid_argument("--repeats " + std::to_string(o.repeats) + ": allowed are 1..1000");
  if (!(o.repeat_ms > 0) || o.repeat_ms > 60000) {
    char ms[32];
    std::snprintf(ms, sizeof ms, "%g", o.repeat_ms);
    throw std::invalid_argument(std::string("--min-repeat-ms ") + ms + ": allowed are (0, 60000]");
  }
  for (auto d : o.delays_ns)
    if (d > kMaxDelayNs)
      throw std::invalid_argument("--delays: " + std::to_string(d) + " ns is above " +
                                  std::to_string(kMaxDelayNs));
  Plan p;
  const base::MemoryBound limit = base::memory_limit(base::Mapping::private_memory);
  const std::uint64_t phys = limit.bytes == UINT64_MAX ? 0 : limit.bytes;
  std::size_t chase = o.chase_bytes;
  if (chase == 0) {  // the default, at most a quarter of memory for each buffer
    chase = default_chase_bytes(topo);
    if (phys > 0) chase = std::min<std::size_t>(chase, phys / 4 / kHugePage * kHugePage);
  }
  p.chase_bytes = chase / kLine * kLine;
  check_size(p.chase_bytes, kMinBytes, "the chase needs");
  p.cpus = loaded_latency_cpus(topo, o.traffic_on, o.traffic_threads);
  p.traffic_bytes = o.traffic_bytes ? o.traffic_bytes : p.chase_bytes;
  const std::size_t min_traffic = std::max(
      kMinBytes, static_cast<std::size_t>(p.traffic_threads()) * 2 * (2 * kChunkBytes + kLine));
  check_size(p.traffic_bytes, min_traffic,
             std::to_string(p.traffic_threads()) + " traffic threads need two " +
                 format_size(kChunkBytes) + " chunks per array each:");
  if (phys > 0 && p.chase_bytes + p.traffic_bytes > phys / 2)
    throw std::invalid_argument(
        "--size '" + format_size(p.chase_bytes) + "': the chase buffer and " + "the traffic (" +
        format_size(p.traffic_bytes) + ") together exceed half of what this host can give (" +
        base::bytes_text(phys) + ", " + limit.what + ")");
  p.isa = o.isa ? *o.isa : best_membw_isa();
  if (!base::cpu_runs(p.isa))
    throw std::invalid_argument(std::string("isa '") + to_string(p.isa) +
                                "': not supported by this CPU");
  return p;
}

LatencyPoint pooled_idle(const std::vector<LoadedLatencyPoint>& points) {
  std::vector<double> all;
  for (const auto& p : points)
    if (!p.delay_ns)
      all.insert(all.end(), p.latency_samples_ns.begin(), p.latency_samples_ns.end());
  LatencyPoint idle;
  if (all.empty()) return idle;
  const auto s = base::spread(std::move(all));
  idle.latency_ns = s.median;
  idle.latency_min_ns = s.min;
  idle.latency_max_ns = s.max;
  return idle;
}

LatencyKnee knee_of(TrafficMix mix, const LatencyPoint& idle,
                    const std::vector<LoadedLatencyPoint>& points) {
  std::vector<LatencyPoint> curve;
  for (const auto& p : points)
    if (p.mix == mix && p.delay_ns)
      curve.push_back({p.bandwidth_gbs, p.latency_ns, p.latency_min_ns, p.latency_max_ns});
  return find_latency_knee(idle, curve);
}

}  // namespace

// ---- exposed for tests ------------------------------------------------------------------------

namespace loaded_latency {

void link_chase(void* base, std::size_t lines, std::uint64_t seed) {
  auto* line = static_cast<Line*>(base);
  const std::vector<std::uint32_t> next = sattolo_cycle(lines, seed);
  for (std::size_t i = 0; i < lines; ++i)
    line[i].w[0] = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&line[next[i]]));
}

double traffic_alone_gbs(TrafficMix mix, std::uint64_t delay_ns, std::size_t bytes, double ms,
                         base::Isa isa) {
  if (!base::cpu_runs(isa))
    throw std::invalid_argument(std::string("isa '") + to_string(isa) +
                                "': not supported by this CPU");
  if (bytes < 2 * (2 * kChunkBytes + kLine))
    throw std::invalid_argument("traffic_alone_gbs: " + format_size(bytes) + " is too small");
  Mapping m(bytes, true);
  std::memset(m.data(), 0, m.bytes());
  std::atomic<std::uint64_t> counted{0};
  const std::uint64_t t0 = perf::read_tsc(),
                      end = t0 + ticks_of(static_cast<std::uint64_t>(ms * 1e6));
  const std::uint64_t n0 = perf::now_ns();
  traffic_loop(mix, isa, arrays_in(m.data(), bytes, mix), ticks_of(delay_ns), counted,
               [&] { return perf::read_tsc() >= end; });
  return static_cast<double>(counted.load()) / static_cast<double>(perf::now_ns() - n0);
}

}  // namespace loaded_latency

// ---- the probe --------------------------------------------------------------------------------

namespace {

// The buffers, allocated here and first touched by the threads that use them.
void allocate(Shared& sh, const Plan& plan, bool huge_pages) {
  const auto traffic = static_cast<std::size_t>(plan.traffic_threads());
  sh.slots = std::vector<TrafficSlot>(traffic);
  sh.clocks.resize(traffic);
  sh.chase = std::make_unique<Mapping>(plan.chase_bytes, huge_pages);
  sh.block_bytes = plan.traffic_bytes / traffic;
  for (std::size_t k = 0; k < traffic; ++k)
    sh.blocks.push_back(std::make_unique<Mapping>(sh.block_bytes, huge_pages));
}

LoadedLatencyResult result_of(Shared& sh, const Plan& plan, const LoadedLatencyOptions& o) {
  LoadedLatencyResult res;
  res.mixes = o.mixes;
  res.delays_ns = o.delays_ns;
  res.chaser_cpu = plan.cpus.front();
  res.traffic_cpus.assign(plan.cpus.begin() + 1, plan.cpus.end());
  res.traffic_on = o.traffic_on;
  res.chase_bytes = plan.chase_bytes;
  res.traffic_bytes = sh.block_bytes * static_cast<std::size_t>(plan.traffic_threads());
  res.chunk_bytes = kChunkBytes;
  res.span_bytes = kSpanBytes;
  res.isa = plan.isa;
  res.tsc_ghz = perf::tsc().ghz;
  res.hugepage_bytes = huge_bytes(sh.chase->data(), plan.chase_bytes);
  res.points = std::move(sh.points);
  res.idle = pooled_idle(res.points);
  for (auto mix : res.mixes) res.knees.push_back(knee_of(mix, res.idle, res.points));
  return res;
}

}  // namespace

LoadedLatencyResult run_loaded_latency(const threads::Topology& topo,
                                       const LoadedLatencyOptions& options) {
  const std::uint64_t t_start = perf::now_ns();
  LoadedLatencyOptions o = options;
  std::sort(o.delays_ns.begin(), o.delays_ns.end(), std::greater<>());  // light to heavy
  o.delays_ns.erase(std::unique(o.delays_ns.begin(), o.delays_ns.end()), o.delays_ns.end());
  const Plan plan = plan_of(topo, o);
  (void)perf::tsc();  // calibrated now, not inside a traffic thread's first point

  Shared sh;
  allocate(sh, plan, o.huge_pages);
  threads::TeamOptions to;
  to.threads = static_cast<int>(plan.cpus.size());
  to.bind.policy = threads::BindPolicy::list;
  to.bind.cpus = plan.cpus;
  threads::Team team(topo, to);
  sweep(team, sh, o, plan);
  g_sink.store(reinterpret_cast<std::uintptr_t>(sh.chase_at), std::memory_order_relaxed);

  LoadedLatencyResult res = result_of(sh, plan, o);
  res.seconds = static_cast<double>(perf::now_ns() - t_start) * 1e-9;
  return res;
}

}  // namespace compas::probes
