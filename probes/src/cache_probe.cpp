#include "compas/probes/cache_probe.hpp"

#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <thread>

#include "compas/base/hash.hpp"
#include "compas/base/pages.hpp"
#include "compas/base/statistics.hpp"
#include "compas/perf/timer.hpp"
#include "compas/probes/membw.hpp"
#include "compas/threads/domain.hpp"
#include "compas/threads/team.hpp"

namespace compas::probes {

namespace {

using base::kLine;
using base::round_up;
constexpr std::uint64_t kMinBytes = 1ull << 10;

// One chase node per cache line; w[0] holds the address of the next node. The stream reads the
// same lines as plain 8-byte words.
struct alignas(kLine) Line {
  std::uint64_t w[kLine / 8];
};

std::uint64_t round_down(std::uint64_t v, std::uint64_t to) {
  return v / to * to;
}

// splitmix64: small, fast, and good enough to shuffle with.
struct Rng {
  base::SplitMix64 next;
  std::uint64_t operator()() { return next(); }
  // Uniform in [0, bound) for bound <= 2^32 (multiply-shift; bias below 2^-32).
  std::uint32_t below(std::uint64_t bound) {
    return static_cast<std::uint32_t>(((*this)() >> 32) * bound >> 32);
  }
};

// --- the measured loops -------------------------------------------------------------------

// One dependent load per step, 16 per iteration so the loop overhead hides in the load latency.
[[gnu::noinline]] const Line* chase(const Line* p, std::uint64_t steps) {
  for (std::uint64_t s = 0; s < steps; s += 16) {
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) p = reinterpret_cast<const Line*>(p->w[0]);
  }
  return p;
}

// Sequential read of every 8-byte word, summed in four independent 16-byte vector accumulators
// (SSE2 on x86-64, generic vectors elsewhere) so the loads, not the adds, set the pace.
[[gnu::noinline]] std::uint64_t stream_sum(const Line* lines, std::size_t n, std::uint64_t passes) {
  typedef std::uint64_t V __attribute__((vector_size(16)));
  V a = {0, 0}, b = a, c = a, d = a;
  for (std::uint64_t pass = 0; pass < passes; ++pass) {
    for (std::size_t i = 0; i < n; ++i) {
      const V* v = reinterpret_cast<const V*>(lines[i].w);
      a += v[0];
      b += v[1];
      c += v[2];
      d += v[3];
    }
    asm volatile("" ::: "memory");  // every pass reads memory again
  }
  const V s = a + b + c + d;
  return s[0] + s[1];
}

volatile std::uint64_t g_sink;

// --- the buffer -----------------------------------------------------------------------------

// 2 MiB-aligned anonymous memory with the transparent-huge-page hint, so TLB misses do not add to
// the latency of large working sets. Every size is a prefix of it.
class Buffer {
 public:
  Buffer(std::uint64_t bytes, const threads::Topology& topo, std::optional<int> numa)
      : map_(bytes, true, "the cache probe's buffer"), data_(map_.data()), bytes_(map_.bytes()) {
    if (numa) threads::bind_memory_to_numa(topo, data_, bytes_, *numa);
    std::memset(data_, 0, bytes_);  // fault every page in now, not while timing
  }

  Line* lines() const { return reinterpret_cast<Line*>(data_); }
  std::uint64_t bytes() const { return bytes_; }
  bool advised() const { return map_.advised(); }

  // Bytes of the buffer backed by huge pages (AnonHugePages in /proc/self/smaps).
  std::uint64_t huge_bytes() const {
    std::ifstream in("/proc/self/smaps");
    const auto lo = reinterpret_cast<std::uintptr_t>(data_), hi = lo + bytes_;
    std::string line;
    bool inside = false;
    std::uint64_t total = 0;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const char c0 = line[0];
      if ((c0 >= '0' && c0 <= '9') || (c0 >= 'a' && c0 <= 'f')) {
        unsigned long long a = 0, b = 0;
        inside = std::sscanf(line.c_str(), "%llx-%llx", &a, &b) == 2 && a < hi && b > lo;
      } else if (inside && line.rfind("AnonHugePages:", 0) == 0) {
        total += std::strtoull(line.c_str() + 14, nullptr, 10) * 1024;
      }
    }
    return std::min<std::uint64_t>(total, bytes_);
  }

 private:
  base::HugePageMapping map_;
  char* data_ = nullptr;
  std::uint64_t bytes_ = 0;
};

// --- timing ---------------------------------------------------------------------------------

struct Timed {
  double ns = 0;      // wall time
  double ticks = 0;   // TSC ticks
  double cpu_ns = 0;  // this thread's CPU time: less than ns when it was descheduled
  bool clean() const { return cpu_ns >= 0.98 * ns; }
  // Wall time with the descheduled part taken out (for a repeat that was never clean).
  double run_ns() const { return std::min(ns, cpu_ns); }
};

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

template <class F>
Timed timed(F&& body) {
  const double c0 = thread_cpu_ns();
  const std::uint64_t n0 = perf::now_ns(), t0 = perf::read_tsc();
  body();
  const std::uint64_t t1 = perf::read_tsc(), n1 = perf::now_ns();
  const double c1 = thread_cpu_ns();
  return {static_cast<double>(n1 - n0), static_cast<double>(t1 - t0), c1 - c0};
}

// Grows `count` until one run lasts cal_ns (this also warms the working set), then returns the
// count one timed repeat needs to last repeat_ns.
template <class Run>
std::uint64_t choose_count(Run&& run, std::uint64_t count, std::uint64_t granule, double cal_ns,
                           double repeat_ns) {
  double t = run(count).run_ns();
  for (int i = 0; i < 24 && t < cal_ns; ++i) {
    const double scale = t > 0 ? std::min(16.0, 1.25 * cal_ns / t) : 16.0;
    count = std::max(count * 2, static_cast<std::uint64_t>(static_cast<double>(count) * scale));
    count = round_up(count, granule);
    t = run(count).run_ns();
  }
  const double want = std::ceil(static_cast<double>(count) * repeat_ns / std::max(t, 1.0));
  return std::max(granule, round_up(static_cast<std::uint64_t>(want), granule));
}

// Where the timed repeats are counted: the measuring thread of a profiled team and the region's
// name; empty when nothing is counted.
struct Counted {
  const threads::ThreadCtx* ctx = nullptr;
  const char* region = nullptr;
};

// Timed repeats that the scheduler left alone: a repeat during which this thread lost the cpu
// (CPU time below 98% of wall time) is run again, up to 3x the repeats asked for and while the
// retries have taken less than retry_ns. When that is not enough, the least disturbed ones fill
// in, with the descheduled time taken out. Each repeat, retries too, is one call of the region
// of `counted`, its counters read outside the timed stretch.
template <class Body>
std::vector<Timed> clean_repeats(Body&& body, int repeats, double retry_ns, int* disturbed,
                                 Counted counted = {}) {
  std::vector<Timed> clean, other;
  double retried_ns = 0;
  for (int a = 0; static_cast<int>(clean.size()) < repeats; ++a) {
    if (a >= repeats && (a >= 3 * repeats || retried_ns >= retry_ns)) break;
    const Timed t = [&] {
      std::optional<perf::Region> region;
      if (counted.ctx) region.emplace(*counted.ctx, counted.region);
      return timed(body);
    }();
    if (a >= repeats) retried_ns += t.ns;
    (t.clean() ? clean : other).push_back(t);
  }
  std::sort(other.begin(), other.end(),
            [](const Timed& x, const Timed& y) { return x.cpu_ns / x.ns > y.cpu_ns / y.ns; });
  *disturbed = 0;
  for (std::size_t i = 0; static_cast<int>(clean.size()) < repeats && i < other.size(); ++i) {
    Timed t = other[i];
    t.ticks *= t.run_ns() / t.ns;
    t.ns = t.run_ns();
    clean.push_back(t);
    ++*disturbed;
  }
  return clean;
}

// Retries of disturbed repeats may take as long again as the repeats asked for, or 50 ms.
double retry_ns(const CacheProbeOptions& opt) {
  return std::max(50e6, opt.repeats * opt.repeat_ms * 1e6);
}

CacheRecord summarize(std::uint64_t size, const char* pattern, const std::vector<Timed>& runs,
                      std::uint64_t loads, int disturbed) {
  std::vector<double> ns, cyc;
  for (const auto& r : runs) {
    ns.push_back(r.ns / static_cast<double>(loads));
    cyc.push_back(r.ticks / static_cast<double>(loads));
  }
  CacheRecord rec;
  rec.size_bytes = size;
  rec.pattern = pattern;
  const auto s = base::spread(ns);
  rec.ns_per_load = s.median;
  rec.cycles_per_load = base::median(cyc);
  rec.min_ns_per_load = s.min;
  rec.max_ns_per_load = s.max;
  rec.loads = loads;
  rec.repeats = static_cast<int>(runs.size());
  rec.disturbed_repeats = disturbed;
  return rec;
}

// Region names: one literal each (regions are told apart by the address of their name).
constexpr const char* kChaseRegion = "chase";
constexpr const char* kStreamRegion = "stream";

CacheRecord measure_chase(Line* lines, std::uint64_t size, std::vector<std::uint32_t>& next,
                          const CacheProbeOptions& opt, double cal_ns, double repeat_ns,
                          const threads::ThreadCtx* ctx) {
  const std::size_t n = size / kLine;
  std::span<std::uint32_t> cycle(next.data(), n);
  sattolo_cycle(cycle, opt.seed ^ (size * 0x9e3779b97f4a7c15ull));
  for (std::size_t i = 0; i < n; ++i)
    lines[i].w[0] = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&lines[cycle[i]]));
  const Line* p = lines;
  const std::uint64_t steps =
      choose_count([&](std::uint64_t s) { return timed([&] { p = chase(p, s); }); }, 1024, 16,
                   cal_ns, repeat_ns);
  int disturbed = 0;
  const auto runs = clean_repeats([&] { p = chase(p, steps); }, opt.repeats, retry_ns(opt),
                                  &disturbed, {ctx, kChaseRegion});
  g_sink = reinterpret_cast<std::uintptr_t>(p);
  return summarize(size, "chase", runs, steps, disturbed);
}

CacheRecord measure_stream(const Line* lines, std::uint64_t size, const CacheProbeOptions& opt,
                           double cal_ns, double repeat_ns, const threads::ThreadCtx* ctx) {
  const std::size_t n = size / kLine;
  std::uint64_t sum = 0;
  const std::uint64_t passes =
      choose_count([&](std::uint64_t k) { return timed([&] { sum += stream_sum(lines, n, k); }); },
                   1, 1, cal_ns, repeat_ns);
  int disturbed = 0;
  const auto runs = clean_repeats([&] { sum += stream_sum(lines, n, passes); }, opt.repeats,
                                  retry_ns(opt), &disturbed, {ctx, kStreamRegion});
  g_sink = sum;
  CacheRecord rec = summarize(size, "stream", runs, passes * (size / 8), disturbed);
  rec.bandwidth_gbs = 8.0 / rec.ns_per_load;  // 8 bytes per load, bytes per ns = GB/s
  return rec;
}

// Bytes of a cache line, for memory traffic estimated from last-level misses.
int llc_line_bytes(const threads::Topology& topo) {
  int line = 0, level = 0;
  for (const auto& c : topo.caches())
    if (c.type != "instruction" && c.line_bytes > 0 && c.level > level)
      line = c.line_bytes, level = c.level;
  return line > 0 ? line : static_cast<int>(kLine);
}

// The region calls of `region` among `samples` (one thread).
std::uint64_t calls_of(const std::vector<perf::RegionSample>& samples, const char* region) {
  std::uint64_t calls = 0;
  for (const auto& s : samples)
    if (s.region == region) calls += s.calls;
  return calls;
}

// `ctx` and `profile`: the one-thread team the probe runs on when counting, else null.
CacheProbeResult probe(const threads::Topology& topo, const CacheProbeOptions& opt,
                       const std::vector<std::uint64_t>& sizes, std::uint64_t requested_max,
                       const threads::ThreadCtx* ctx = nullptr, perf::Profile* profile = nullptr) {
  const std::uint64_t t_start = perf::now_ns();
  CacheProbeResult res;
  res.sizes = sizes;
  res.cpu = opt.cpu;
  res.max_bytes_requested = requested_max;
  res.caches = cache_targets(topo);
  const perf::TscInfo& t = perf::tsc();
  res.tsc_ghz = t.ghz;
  res.tsc_invariant = t.invariant;

  Buffer buf(sizes.back(), topo, opt.memory_numa);
  res.buffer_bytes = buf.bytes();
  res.hugepage_advised = buf.advised();
  res.hugepage_bytes = buf.huge_bytes();
  std::vector<std::uint32_t> next(sizes.back() / kLine);

  const double repeat_ns = opt.repeat_ms * 1e6;
  const double cal_ns = std::min(1e6, repeat_ns / 4);
  std::vector<double> chase_ns;
  const int line = llc_line_bytes(topo);
  double stream_bytes = 0;  // read by the counted stream repeats, all sizes
  for (const std::uint64_t size : sizes) {
    const auto before = profile ? profile->samples() : std::vector<perf::RegionSample>{};
    CacheRecord c = measure_chase(buf.lines(), size, next, opt, cal_ns, repeat_ns, ctx);
    CacheRecord s = measure_stream(buf.lines(), size, opt, cal_ns, repeat_ns, ctx);
    if (profile) {
      // This size's share of the profile: the stream's own bytes are every repeat's loads.
      const auto step = perf::samples_since(profile->samples(), before);
      const double bytes = static_cast<double>(calls_of(step, kStreamRegion) * s.loads * 8);
      stream_bytes += bytes;
      for (auto& r : perf::aggregate(step, line, {{kStreamRegion, perf::WorkModel{0, bytes}}})) {
        CacheRecord& rec = r.region == kChaseRegion ? c : s;
        r.region += " " + format_size(size);
        rec.region = std::move(r);
      }
    }
    chase_ns.push_back(c.ns_per_load);
    if (opt.progress) opt.progress(c, s);
    res.records.push_back(std::move(c));
    res.records.push_back(std::move(s));
  }
  if (profile) {
    res.regions = perf::aggregate(profile->samples(), line,
                                  {{kStreamRegion, perf::WorkModel{0, stream_bytes}}});
    res.counter_errors = profile->thread_errors();
  }
  res.knees = detect_knees(sizes, chase_ns);
  match_knees(res.knees, res.caches);
  res.seconds = static_cast<double>(perf::now_ns() - t_start) * 1e-9;
  return res;
}

}  // namespace

// --- sizes ----------------------------------------------------------------------------------

std::vector<std::uint64_t> cache_probe_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                             int steps_per_octave) {
  if (steps_per_octave < 1 || steps_per_octave > 16)
    throw std::invalid_argument("--steps-per-octave " + std::to_string(steps_per_octave) +
                                ": allowed are 1..16");
  if (min_bytes < kMinBytes)
    throw std::invalid_argument("--min " + format_size(min_bytes) +
                                ": the smallest working set is 1 KiB");
  if (min_bytes > max_bytes)
    throw std::invalid_argument("--min " + format_size(min_bytes) + " is larger than --max " +
                                format_size(max_bytes));
  const std::uint64_t lo = round_up(min_bytes, kLine), hi = round_down(max_bytes, kLine);
  if (lo > hi)
    throw std::invalid_argument("--min " + format_size(min_bytes) + " .. --max " +
                                format_size(max_bytes) +
                                ": no multiple of the 64-byte line in between");
  std::vector<std::uint64_t> sizes = {lo};
  const auto steps = static_cast<std::uint64_t>(steps_per_octave);
  for (std::uint64_t octave = kMinBytes; octave <= hi && octave != 0; octave *= 2)
    for (std::uint64_t i = 0; i < steps; ++i) {
      const std::uint64_t s = round_down(octave + octave * i / steps, kLine);
      if (s > sizes.back() && s < hi) sizes.push_back(s);
    }
  if (hi > sizes.back()) sizes.push_back(hi);
  return sizes;
}

// --- the cycle ------------------------------------------------------------------------------

void sattolo_cycle(std::span<std::uint32_t> next, std::uint64_t seed) {
  const std::size_t n = next.size();
  if (n > (1ull << 32)) throw std::length_error("sattolo_cycle: more than 2^32 nodes");
  std::iota(next.begin(), next.end(), 0u);
  if (n < 2) return;
  // Swap i with a j < i, for i from n-1 down to 1. The j's do not depend on the data, so they
  // are drawn kAhead steps early and their lines prefetched: large arrays shuffle at memory
  // bandwidth instead of one miss at a time.
  constexpr std::size_t kAhead = 16;
  std::uint32_t ahead[kAhead];
  Rng rng{{seed}};
  auto draw = [&](std::size_t i) {
    ahead[i % kAhead] = rng.below(i);
    __builtin_prefetch(&next[ahead[i % kAhead]], 1);
  };
  for (std::size_t k = 0; k < kAhead && k + 2 <= n; ++k) draw(n - 1 - k);
  for (std::size_t i = n - 1; i >= 1; --i) {
    const std::uint32_t j = ahead[i % kAhead];
    if (i > kAhead) draw(i - kAhead);
    std::swap(next[i], next[j]);
  }
}

std::vector<std::uint32_t> sattolo_cycle(std::size_t n, std::uint64_t seed) {
  std::vector<std::uint32_t> next(n);
  sattolo_cycle(std::span<std::uint32_t>(next), seed);
  return next;
}

// --- the probe ------------------------------------------------------------------------------

CacheProbeResult run_cache_probe(const threads::Topology& topo, const CacheProbeOptions& opt) {
  if (topo.is_synthetic())
    throw std::invalid_argument("the cache probe needs the host topology, not '" +
                                topo.description() + "'");
  if (opt.repeats < 1 || opt.repeats > 1000)
    throw std::invalid_argument("--repeats " + std::to_string(opt.repeats) +
                                ": allowed are 1..1000");
  if (!(opt.repeat_ms > 0) || opt.repeat_ms > 60000)
    throw std::invalid_argument("--repeat-ms " + std::to_string(opt.repeat_ms) +
                                ": allowed are (0, 60000]");
  CacheProbeOptions o = opt;
  if (o.cpu < 0) o.cpu = topo.pu_list().at(0).os_index;
  if (topo.find_pu(o.cpu) < 0) {
    std::string allowed;
    for (const auto& p : topo.pu_list()) {
      if (!allowed.empty()) allowed += ',';
      allowed += std::to_string(p.os_index);
    }
    throw std::invalid_argument("--cpu " + std::to_string(o.cpu) +
                                ": not a cpu this process may use (" + allowed + ")");
  }
  auto sizes = cache_probe_sizes(o.min_bytes, o.max_bytes, o.steps_per_octave);
  // Cap the largest working set to half of what this host can give (the memory available, or the
  // memory cgroup's room when smaller; buffer plus the 4 bytes per line the shuffle needs), so the
  // probe measures caches, not swapping.
  const std::uint64_t avail = base::memory_limit(base::Mapping::private_memory).bytes;
  if (avail > 0 && avail != UINT64_MAX) {
    const std::uint64_t limit = round_down(avail / 2 / 17 * 16, 1ull << 20);
    if (sizes.back() > limit) {
      if (limit < sizes.front())
        throw std::invalid_argument("--max " + format_size(o.max_bytes) + ": only " +
                                    format_size(avail) + " of memory is available");
      sizes = cache_probe_sizes(o.min_bytes, limit, o.steps_per_octave);
    }
  }
  CacheProbeResult res;
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      if (!o.events.requested.empty()) {
        // Counting: the measuring thread becomes a one-thread team (pinned to o.cpu by the team)
        // so that its repeats can be regions of a profile.
        threads::TeamOptions to;
        to.threads = 1;
        to.bind.policy = threads::BindPolicy::list;
        to.bind.cpus = {o.cpu};
        threads::Team team(topo, to);
        perf::Profile profile(team, o.events);
        team.run([&](threads::ThreadCtx& c) {
          res = probe(topo, o, sizes, opt.max_bytes, &c, &profile);
        });
        return;
      }
      const auto got = topo.bind_current_thread(o.cpu);
      if (got.size() != 1 || got[0] != o.cpu)
        throw std::runtime_error("could not pin the measuring thread to cpu " +
                                 std::to_string(o.cpu));
      res = probe(topo, o, sizes, opt.max_bytes);
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
  return res;
}

}  // namespace compas::probes
