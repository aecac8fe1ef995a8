// Memory-bandwidth probe: the saturation point, and the driver that runs the kernels
// (membw_kernels.cpp) on pinned teams of growing size. See compas/probes/membw.hpp.
#include "compas/probes/membw.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "compas/base/pages.hpp"
#include "compas/base/statistics.hpp"
#include "compas/perf/timer.hpp"
#include "compas/threads/domain.hpp"
#include "compas/threads/ops.hpp"
#include "compas/threads/team.hpp"
#include "membw_kernels.hpp"

namespace compas::probes {

// ---- saturation point -----------------------------------------------------------------------

std::optional<int> membw_saturation_point(const std::vector<int>& threads,
                                          const std::vector<double>& total_gbs, double min_gain) {
  if (threads.size() != total_gbs.size())
    throw std::invalid_argument("saturation point: " + std::to_string(threads.size()) +
                                " thread counts but " + std::to_string(total_gbs.size()) +
                                " bandwidths");
  // The relative slack keeps a gain of exactly min_gain (11 after 10) from counting as less
  // through rounding.
  for (std::size_t i = 0; i + 1 < threads.size(); ++i)
    if (total_gbs[i + 1] < total_gbs[i] * (1.0 + min_gain) * (1.0 - 1e-12)) return threads[i];
  return std::nullopt;
}

Saturation membw_saturation(const std::vector<int>& threads,
                            const std::vector<BandwidthSpread>& total, double min_gain) {
  if (threads.size() != total.size())
    throw std::invalid_argument("saturation point: " + std::to_string(threads.size()) +
                                " thread counts but " + std::to_string(total.size()) +
                                " bandwidths");
  const double threshold = (1.0 + min_gain) * (1.0 - 1e-12);  // as membw_saturation_point
  Saturation s;
  for (std::size_t i = 0; i + 1 < threads.size(); ++i) {
    const BandwidthSpread &a = total[i], &b = total[i + 1];
    const double widest = b.max / a.min, narrowest = b.min / a.max;
    if (widest < threshold) {
      s.threads = threads[i];
      return s;
    }
    if (narrowest >= threshold) continue;
    s.resolved = false;
    s.from = threads[i];
    s.to = threads[i + 1];
    s.gain = b.median / a.median - 1;
    s.gain_min = narrowest - 1;
    s.gain_max = widest - 1;
    return s;
  }
  return s;
}

std::string Saturation::note() const {
  if (resolved) return "";
  char buf[224];
  std::snprintf(buf, sizeof buf,
                "not resolved: from %d to %d threads the total grows %+.0f%% (%+.0f%% to %+.0f%% "
                "over the repeats), across the 10%% threshold",
                from, to, gain * 100, gain_min * 100, gain_max * 100);
  return buf;
}

// ---- the driver -----------------------------------------------------------------------------

namespace {

using base::kHugePage;
constexpr std::size_t kLine = base::kLine / sizeof(double);  // doubles per cache line
// Arrays of one kernel start this many bytes apart beyond a 2 MiB boundary, so that the
// element i of each array does not map to the same 4 KiB offset (4K aliasing between the
// loads of one array and the stores of another).
constexpr std::size_t kArrayShift = 5 * base::kLine;

// Values the arrays start with: small integers, so every sum and every b + s*c is exact in any
// order and with or without FMA.
inline double pattern_a(std::size_t i) {
  return static_cast<double>(i & 1023);
}
inline double pattern_c(std::size_t i) {
  return static_cast<double>((i >> 10) & 255);
}
constexpr double kScalar = 3.0;
constexpr double kStoreValue = 2.0;

// Start and end of one timed stretch on every thread.
struct Stamps {
  std::vector<std::uint64_t> start, end;  // [thread]
  explicit Stamps(int t) : start(static_cast<std::size_t>(t)), end(static_cast<std::size_t>(t)) {}
  double span_ns() const {
    const auto s = *std::min_element(start.begin(), start.end());
    const auto e = *std::max_element(end.begin(), end.end());
    return static_cast<double>(std::max<std::uint64_t>(e - s, 1));
  }
};

// The kernel variants worth trying: instruction sets x store kinds.
std::vector<std::pair<base::Isa, bool>> candidates(const threads::Topology& topo,
                                                   const threads::Team& team, MembwKernel kernel,
                                                   const MembwOptions& o) {
  std::vector<base::Isa> isas;
  if (o.isa) {
    isas.push_back(*o.isa);
  } else {
    isas.push_back(best_membw_isa());
    if (isas[0] == base::Isa::avx512) isas.push_back(base::Isa::avx2);
  }
  std::vector<std::pair<base::Isa, bool>> out;
  for (auto isa : isas) {
    const bool nt_possible = membw_has_stores(kernel) && isa != base::Isa::generic;
    const bool try_both = nt_possible && o.stores == base::Stores::automatic &&
                          o.size_bytes > threads::nt_threshold(topo, team.placement());
    if (try_both || !nt_possible || o.stores != base::Stores::streaming)
      out.emplace_back(isa, false);
    if (try_both || (nt_possible && o.stores == base::Stores::streaming))
      out.emplace_back(isa, true);
  }
  return out;
}

// The region of a kernel's timed repeats. Regions are told apart by the address of their name,
// so each has one literal.
const char* region_name(MembwKernel k) {
  switch (k) {
    case MembwKernel::load:
      return "membw load";
    case MembwKernel::store:
      return "membw store";
    case MembwKernel::copy:
      return "membw copy";
    case MembwKernel::triad:
      return "membw triad";
  }
  return "membw";
}

// Bytes of a cache line, for memory traffic estimated from last-level misses.
int line_bytes(const threads::Topology& topo) {
  int line = 0, level = 0;
  for (const auto& c : topo.caches())
    if (c.type != "instruction" && c.line_bytes > 0 && c.level > level)
      line = c.line_bytes, level = c.level;
  return line > 0 ? line : 64;
}

// One thread's block of a kernel's arrays, elements [lo, lo + m) of each: load reads a, store
// writes a, copy reads a into b, triad writes a from b and c.
struct Block {
  double* a = nullptr;
  double* b = nullptr;
  double* c = nullptr;
  std::size_t lo = 0, m = 0;
};

// First touch: the block of every array lands on the NUMA node of the thread that calls this.
// Returns what load must sum to.
double first_touch(MembwKernel kernel, const Block& k) {
  double expect = 0;
  switch (kernel) {
    case MembwKernel::load:
      for (std::size_t i = 0; i < k.m; ++i) expect += k.a[i] = pattern_a(k.lo + i);
      break;
    case MembwKernel::store:
      std::memset(k.a, 0, k.m * 8);
      break;
    case MembwKernel::copy:  // c[i] = a[i]: a is arr[0], c is arr[1]
      for (std::size_t i = 0; i < k.m; ++i) k.a[i] = pattern_a(k.lo + i);
      std::memset(k.b, 0, k.m * 8);
      break;
    case MembwKernel::triad:  // a[i] = b[i] + s*c[i]
      std::memset(k.a, 0, k.m * 8);
      for (std::size_t i = 0; i < k.m; ++i)
        k.b[i] = pattern_a(k.lo + i), k.c[i] = pattern_c(k.lo + i);
      break;
  }
  return expect;
}

// One sweep of the kernel over the block; false when load did not sum to `expect`.
bool sweep(MembwKernel kernel, base::Isa isa, bool nt, const Block& k, double expect) {
  switch (kernel) {
    case MembwKernel::load:
      return membw::load(isa, k.a, k.m) == expect;
    case MembwKernel::store:
      membw::store(isa, k.a, k.m, kStoreValue, nt);
      break;
    case MembwKernel::copy:
      membw::copy(isa, k.b, k.a, k.m, nt);
      break;
    case MembwKernel::triad:
      membw::triad(isa, k.a, k.b, k.c, kScalar, k.m, nt);
      break;
  }
  return true;
}

// Whether the block holds what the kernel must have left in memory.
bool holds_result(MembwKernel kernel, const Block& k) {
  bool good = true;
  switch (kernel) {
    case MembwKernel::load:
      break;
    case MembwKernel::store:
      for (std::size_t i = 0; i < k.m; ++i) good &= k.a[i] == kStoreValue;
      break;
    case MembwKernel::copy:
      for (std::size_t i = 0; i < k.m; ++i) good &= k.b[i] == pattern_a(k.lo + i);
      break;
    case MembwKernel::triad:
      for (std::size_t i = 0; i < k.m; ++i)
        good &= k.a[i] == pattern_a(k.lo + i) + kScalar * pattern_c(k.lo + i);
      break;
  }
  return good;
}

constexpr int kCalRounds = 3;

// What the team's threads measured for one kernel.
struct Timings {
  std::vector<Stamps> timed;       // [repeat]
  std::vector<Stamps> cal;         // [round * variants + k]
  std::vector<double> cal_best;    // [variant] best GB/s of its calibration tries
  int passes = 1;                  // sweeps per repeat
  int chosen = 0;                  // index into the variants
  std::vector<int> ok;             // [thread] 1 when its block held the right result
  std::vector<std::size_t> count;  // [thread] elements per array of its block
  Timings(int threads, int repeats, int variants)
      : timed(static_cast<std::size_t>(repeats), Stamps(threads)),
        cal(static_cast<std::size_t>(variants * kCalRounds), Stamps(threads)),
        cal_best(static_cast<std::size_t>(variants), 0.0),
        ok(static_cast<std::size_t>(threads), 1),
        count(static_cast<std::size_t>(threads)) {}
};

// The best try of every variant over the calibration rounds (the order rotated each round, see
// run_team), and the index of the fastest variant.
int best_variant(Timings& tm, double bytes_per_stretch) {
  const int nc = static_cast<int>(tm.cal_best.size());
  for (int r = 0; r < kCalRounds; ++r)
    for (int k = 0; k < nc; ++k) {
      auto& best = tm.cal_best[static_cast<std::size_t>((k + r) % nc)];
      best = std::max(best,
                      bytes_per_stretch / tm.cal[static_cast<std::size_t>(r * nc + k)].span_ns());
    }
  return static_cast<int>(std::max_element(tm.cal_best.begin(), tm.cal_best.end()) -
                          tm.cal_best.begin());
}

// Runs the kernel on the team over the arrays arr[0..arrays) of `lines` cache lines each: first
// touch, a warm-up sweep that sets the sweeps per repeat, the calibration between the variants
// when there are several, the timed repeats, and the check of what the arrays hold.
void run_team(threads::Team& team, MembwKernel kernel, double* const* arr, std::size_t lines,
              const std::vector<std::pair<base::Isa, bool>>& cands, const MembwOptions& o,
              Timings& tm) {
  const int arrays = membw_arrays(kernel);
  const int nc = static_cast<int>(cands.size());
  const std::uint64_t bpe = static_cast<std::uint64_t>(membw_bytes_per_element(kernel));
  Stamps warm(team.threads());
  team.run([&](threads::ThreadCtx& c) {
    const auto [l0, l1] = c.block(lines);
    const std::size_t lo = l0 * kLine, hi = l1 * kLine, m = hi - lo;
    const auto me = static_cast<std::size_t>(c.thread());
    tm.count[me] = m;
    const Block blk{arr[0] + lo, arrays > 1 ? arr[1] + lo : nullptr,
                    arrays > 2 ? arr[2] + lo : nullptr, lo, m};
    const double expect = first_touch(kernel, blk);
    bool good = true;
    // `region`: count this stretch as that region when a profile is active; its counters are
    // read outside the stamps.
    auto timed_run = [&](Stamps& st, int reps, int v, const char* region = nullptr) {
      const auto [isa, nt] = cands[static_cast<std::size_t>(v)];
      c.barrier();
      std::optional<perf::Region> counted;
      if (region) counted.emplace(c, region);
      st.start[me] = perf::now_ns();
      for (int p = 0; p < reps; ++p) good &= sweep(kernel, isa, nt, blk, expect);
      st.end[me] = perf::now_ns();
    };

    // Warm-up sweep, which also sets how many sweeps make one repeat last min_repeat_ms.
    timed_run(warm, 1, 0);
    c.barrier();
    int want = 0;
    if (c.is_leader())
      want = tm.passes =
          static_cast<int>(std::clamp(std::ceil(o.min_repeat_ms * 1e6 / warm.span_ns()), 1.0, 1e6));
    const int reps = c.broadcast(want);

    int variant = 0;
    if (nc > 1) {
      // Every variant kCalRounds times, the order rotated each round so drift hits all alike;
      // the best try of each counts.
      for (int r = 0; r < kCalRounds; ++r)
        for (int k = 0; k < nc; ++k)
          timed_run(tm.cal[static_cast<std::size_t>(r * nc + k)], reps, (k + r) % nc);
      c.barrier();
      if (c.is_leader()) {
        double bytes = 0;
        for (auto q : tm.count) bytes += static_cast<double>(q * bpe);
        tm.chosen = best_variant(tm, bytes * reps);
      }
      variant = c.broadcast(c.is_leader() ? tm.chosen : 0);
    }

    for (int r = 0; r < o.repeats; ++r)
      timed_run(tm.timed[static_cast<std::size_t>(r)], reps, variant, region_name(kernel));
    c.barrier();
    tm.ok[me] = good && holds_result(kernel, blk) ? 1 : 0;
  });
}

// The record of one kernel on one team from what run_team measured; `n` elements per array.
MembwRecord make_record(const threads::Team& team, MembwKernel kernel, std::size_t n,
                        const std::vector<std::pair<base::Isa, bool>>& cands, const Timings& tm) {
  const int t = team.threads();
  const int nc = static_cast<int>(cands.size());
  const std::uint64_t bpe = static_cast<std::uint64_t>(membw_bytes_per_element(kernel));
  MembwRecord rec;
  rec.kernel = kernel;
  rec.threads = t;
  rec.cpus = threads::format_cpu_list(team.placement().pu_of_thread);
  rec.oversubscribed = team.placement().oversubscribed;
  rec.elements = n;
  rec.working_set_bytes = n * 8 * static_cast<std::size_t>(membw_arrays(kernel));
  rec.passes = tm.passes;
  rec.repeats = static_cast<int>(tm.timed.size());
  rec.bytes_per_repeat =
      static_cast<std::uint64_t>(n) * bpe * static_cast<std::uint64_t>(tm.passes);
  const auto [isa, nt] = cands[static_cast<std::size_t>(tm.chosen)];
  rec.isa = isa;
  if (membw_has_stores(kernel)) rec.non_temporal = nt;
  if (nc > 1)
    for (int k = 0; k < nc; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      rec.tried.push_back({cands[kk].first, cands[kk].second, tm.cal_best[kk]});
    }
  std::vector<double> gbs;
  for (const auto& st : tm.timed)
    gbs.push_back(static_cast<double>(rec.bytes_per_repeat) / st.span_ns());
  const auto spread = base::spread(gbs);
  rec.bandwidth_gbs = spread.median;
  rec.min_bandwidth_gbs = spread.min;
  rec.max_bandwidth_gbs = spread.max;
  rec.per_thread_gbs = rec.bandwidth_gbs / t;
  rec.seconds = static_cast<double>(rec.bytes_per_repeat) / (rec.bandwidth_gbs * 1e9);
  for (int k = 0; k < t; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    const double bytes = static_cast<double>(tm.count[kk] * bpe) * tm.passes;
    std::vector<double> own;
    for (const auto& st : tm.timed)
      own.push_back(bytes /
                    static_cast<double>(std::max<std::uint64_t>(st.end[kk] - st.start[kk], 1)));
    rec.thread_gbs.push_back(base::median(std::move(own)));
  }
  rec.verified = std::all_of(tm.ok.begin(), tm.ok.end(), [](int v) { return v == 1; });
  return rec;
}

MembwRecord measure(threads::Team& team, const threads::Topology& topo, MembwKernel kernel,
                    const MembwOptions& o) {
  const int arrays = membw_arrays(kernel);
  const std::size_t lines = o.size_bytes / (8 * kLine * static_cast<std::size_t>(arrays));
  const std::size_t n = lines * kLine;
  const std::size_t stride = base::round_up(n * 8, kHugePage, "membw: an array") + kArrayShift;
  const base::HugePageMapping arena(stride * static_cast<std::size_t>(arrays), o.huge_pages,
                                    "membw: the arrays");
  if (o.memory_numa)
    threads::bind_memory_to_numa(topo, arena.data(), stride * static_cast<std::size_t>(arrays),
                                 *o.memory_numa);
  double* arr[3] = {nullptr, nullptr, nullptr};
  for (int j = 0; j < arrays; ++j)
    arr[j] = reinterpret_cast<double*>(arena.data() + stride * static_cast<std::size_t>(j));

  const auto cands = candidates(topo, team, kernel, o);
  Timings tm(team.threads(), o.repeats, static_cast<int>(cands.size()));
  run_team(team, kernel, arr, lines, cands, o, tm);
  return make_record(team, kernel, n, cands, tm);
}

}  // namespace

MembwResult run_membw(const threads::Topology& topo, const MembwOptions& options) {
  MembwOptions o = options;
  if (o.threads.empty()) throw std::invalid_argument("membw: no thread counts given");
  for (int t : o.threads)
    if (t < 1)
      throw std::invalid_argument("membw: thread count " + std::to_string(t) + " is not positive");
  std::sort(o.threads.begin(), o.threads.end());
  o.threads.erase(std::unique(o.threads.begin(), o.threads.end()), o.threads.end());
  if (o.kernels.empty()) throw std::invalid_argument("membw: no kernels given");
  if (o.repeats < 1)
    throw std::invalid_argument("membw: repeats " + std::to_string(o.repeats) +
                                " must be at least 1");
  if (!(o.min_repeat_ms >= 0))
    throw std::invalid_argument("membw: min_repeat_ms must not be negative");
  if (o.isa) membw_kernels::require_isa(*o.isa);
  const int tmax = o.threads.back();
  int max_arrays = 1;
  for (auto k : o.kernels) max_arrays = std::max(max_arrays, membw_arrays(k));
  const std::size_t min_bytes =
      static_cast<std::size_t>(max_arrays) * 8 * kLine * static_cast<std::size_t>(tmax);
  if (o.size_bytes < min_bytes)
    throw std::invalid_argument("size '" + std::to_string(o.size_bytes) + "': too small for " +
                                std::to_string(tmax) + " threads; need at least " +
                                std::to_string(min_bytes) +
                                " bytes (one 64-byte line per array per thread)");
  const base::MemoryBound limit = base::memory_limit(base::Mapping::private_memory);
  if (o.size_bytes > limit.bytes / 2)
    throw std::invalid_argument("size '" + format_size(o.size_bytes) + "' (" +
                                std::to_string(o.size_bytes) +
                                " bytes) is more than half of what this host can give (" +
                                base::bytes_text(limit.bytes) + ", " + limit.what + ")");
  // Check every placement before measuring anything, so a bad flag fails at once.
  for (int t : o.threads) threads::place_threads(topo, t, o.bind, o.oversubscribe);

  MembwResult result;
  result.threads = o.threads;
  for (int t : o.threads) {
    threads::TeamOptions to;
    to.threads = t;
    to.bind = o.bind;
    to.allow_oversubscribe = o.oversubscribe;
    to.pin = !topo.is_synthetic();
    threads::Team team(topo, to);
    std::optional<perf::Profile> profile;
    if (!o.events.requested.empty()) profile.emplace(team, o.events);
    for (auto k : o.kernels) {
      MembwRecord rec = measure(team, topo, k, o);
      if (profile) {
        std::vector<perf::RegionSample> mine;
        for (auto& sample : profile->samples())
          if (sample.region == region_name(k)) mine.push_back(std::move(sample));
        const perf::WorkModel work{0, static_cast<double>(rec.bytes_per_repeat) * rec.repeats};
        auto summary = perf::aggregate(mine, line_bytes(topo), {{region_name(k), work}});
        if (!summary.empty()) {
          rec.region = std::move(summary.front());
          rec.region->region = to_string(k) + " T=" + std::to_string(t);
        }
      }
      result.records.push_back(std::move(rec));
    }
    if (profile)
      for (auto& e : profile->thread_errors())
        if (std::find(result.counter_errors.begin(), result.counter_errors.end(), e) ==
            result.counter_errors.end())
          result.counter_errors.push_back(std::move(e));
  }
  std::stable_sort(result.records.begin(), result.records.end(),
                   [&](const MembwRecord& x, const MembwRecord& y) {
                     const auto ix = std::find(o.kernels.begin(), o.kernels.end(), x.kernel);
                     const auto iy = std::find(o.kernels.begin(), o.kernels.end(), y.kernel);
                     return ix != iy ? ix < iy : x.threads < y.threads;
                   });
  for (auto k : o.kernels) {
    MembwSummary s;
    s.kernel = k;
    std::vector<int> ts;
    std::vector<BandwidthSpread> bw;
    int nt = 0, temporal = 0;
    for (const auto& r : result.records) {
      if (r.kernel != k) continue;
      ts.push_back(r.threads);
      bw.push_back({r.bandwidth_gbs, r.min_bandwidth_gbs, r.max_bandwidth_gbs});
      if (r.bandwidth_gbs > s.peak_gbs) s.peak_gbs = r.bandwidth_gbs, s.peak_threads = r.threads;
      if (r.non_temporal) (*r.non_temporal ? nt : temporal)++;
    }
    const Saturation sat = membw_saturation(ts, bw);
    s.saturation_threads = sat.threads;
    s.saturation_resolved = sat.resolved;
    s.saturation_note = sat.note();
    s.max_threads = ts.empty() ? 0 : ts.back();
    s.counts = static_cast<int>(ts.size());
    s.stores = !membw_has_stores(k) ? "none"
               : nt && temporal     ? "mixed"
               : nt                 ? "non-temporal"
                                    : "temporal";
    result.summaries.push_back(s);
  }
  return result;
}

}  // namespace compas::probes
