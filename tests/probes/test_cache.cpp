// The cache probe: working-set series, the Sattolo cycle, knee detection on synthetic curves and
// matching to caches, and a tiny real run for the shape of its records (no timing assertions).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/cpu_events.hpp"
#include "compas/probes/cache_probe.hpp"
#include "compas/probes/membw.hpp"

namespace compas::probes {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

// The caches of the machine this was written on: L1d 48 KiB and L2 2 MiB per core, one L3 of
// 480 MiB shared by two cores.
std::vector<CacheTarget> xeon_caches() {
  return {{1, "data", 48 * KiB, 1, 48 * KiB},
          {2, "unified", 2 * MiB, 1, 2 * MiB},
          {3, "unified", 480 * MiB, 2, 240 * MiB}};
}

// A latency curve over the probe's default sizes: f(size) for each.
template <class F>
std::pair<std::vector<std::uint64_t>, std::vector<double>> curve(F f,
                                                                 std::uint64_t max = 64 * MiB) {
  const auto sizes = cache_probe_sizes(4 * KiB, max, 4);
  std::vector<double> ns;
  for (auto s : sizes) ns.push_back(f(s));
  return {sizes, ns};
}

double three_levels(std::uint64_t s) {
  return s <= 48 * KiB ? 1.0 : s <= 2 * MiB ? 4.0 : 80.0;
}

// Deterministic multiplicative noise in [1 - amp, 1 + amp].
double noise(std::uint64_t i, double amp) {
  std::uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
  z ^= z >> 29;
  return 1 + amp * (2.0 * static_cast<double>(z % 10001) / 10000.0 - 1);
}

TEST(CacheSizes, ParsesTheFormsTheCommandAccepts) {
  EXPECT_EQ(parse_size("4KiB"), 4 * KiB);
  EXPECT_EQ(parse_size("64K"), 64 * KiB);
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("1MiB"), MiB);
  EXPECT_EQ(parse_size("1GiB"), 1024 * MiB);
  for (const char* bad : {"", "0", "abc", "4 parsecs", "-4K", "KiB"})
    EXPECT_THROW(parse_size(bad), std::invalid_argument) << bad;
}

TEST(CacheSizes, SeriesIsStrictlyIncreasingWithinRange) {
  struct Case {
    std::uint64_t min, max;
    int steps;
  };
  for (const Case c :
       {Case{4 * KiB, 1024 * MiB, 4}, Case{4 * KiB, 1024 * MiB, 2}, Case{5000, 70000, 3},
        Case{1 * KiB, 1 * KiB, 1}, Case{4 * KiB, 4100, 16}, Case{3 * KiB, 100 * MiB + 7, 5}}) {
    const auto sizes = cache_probe_sizes(c.min, c.max, c.steps);
    ASSERT_FALSE(sizes.empty());
    EXPECT_GE(sizes.front(), c.min);
    EXPECT_LE(sizes.back(), c.max);
    EXPECT_GT(sizes.back() + 64, c.max) << "the series reaches max (to the line below it)";
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_EQ(sizes[i] % 64, 0u) << sizes[i];
      if (i) {
        EXPECT_GT(sizes[i], sizes[i - 1]);
      }
    }
  }
}

TEST(CacheSizes, StepsSplitEachOctaveEvenly) {
  EXPECT_EQ(cache_probe_sizes(32 * KiB, 64 * KiB, 4),
            (std::vector<std::uint64_t>{32 * KiB, 40 * KiB, 48 * KiB, 56 * KiB, 64 * KiB}));
  EXPECT_EQ(cache_probe_sizes(4 * KiB, 16 * KiB, 2),
            (std::vector<std::uint64_t>{4 * KiB, 6 * KiB, 8 * KiB, 12 * KiB, 16 * KiB}));
}

TEST(CacheSizes, RejectsBadRangesNamingTheFlag) {
  EXPECT_NE(message_of([] { cache_probe_sizes(1 * MiB, 4 * KiB, 4); }).find("--min"),
            std::string::npos);
  EXPECT_NE(message_of([] { cache_probe_sizes(512, 4 * KiB, 4); }).find("--min"),
            std::string::npos);
  EXPECT_NE(message_of([] { cache_probe_sizes(4 * KiB, 8 * KiB, 0); }).find("--steps-per-octave"),
            std::string::npos);
  EXPECT_THROW(cache_probe_sizes(4 * KiB, 8 * KiB, 17), std::invalid_argument);
  EXPECT_THROW(cache_probe_sizes(1025, 1030, 1), std::invalid_argument);  // no line multiple
}

TEST(CacheSattolo, IsOneCycleThroughEveryNode) {
  for (std::size_t n : {1u, 2u, 3u, 16u, 17u, 1000u, 65537u, 1u << 20}) {
    const auto next = sattolo_cycle(n, 42 + n);
    ASSERT_EQ(next.size(), n);
    std::vector<bool> seen(n);
    std::size_t at = 0, steps = 0;
    do {
      ASSERT_LT(next[at], n);
      ASSERT_FALSE(seen[at]) << "node " << at << " visited twice, n = " << n;
      seen[at] = true;
      at = next[at];
      ++steps;
    } while (at != 0 && steps <= n);
    EXPECT_EQ(steps, n) << "n = " << n;
  }
}

TEST(CacheSattolo, SeedDecidesTheCycle) {
  EXPECT_EQ(sattolo_cycle(1000, 7), sattolo_cycle(1000, 7));
  EXPECT_NE(sattolo_cycle(1000, 7), sattolo_cycle(1000, 8));
}

TEST(CacheKnees, ThreeLevelsGiveTwoKneesAtL1AndL2) {
  auto [sizes, ns] = curve(three_levels);
  auto knees = detect_knees(sizes, ns);
  ASSERT_EQ(knees.size(), 2u);
  EXPECT_EQ(knees[0].size_bytes, 48 * KiB);
  EXPECT_EQ(knees[0].plateau_end_bytes, 48 * KiB);
  EXPECT_EQ(knees[0].plateau_start_bytes, 56 * KiB);
  EXPECT_DOUBLE_EQ(knees[0].ns_before, 1.0);
  EXPECT_DOUBLE_EQ(knees[0].ns_after, 4.0);
  EXPECT_EQ(knees[1].size_bytes, 2 * MiB);
  EXPECT_DOUBLE_EQ(knees[1].ns_before, 4.0);
  EXPECT_DOUBLE_EQ(knees[1].ns_after, 80.0);
  match_knees(knees, xeon_caches());
  EXPECT_EQ(knees[0].cache.name(), "L1d");
  EXPECT_EQ(knees[0].cache.size_bytes, 48 * KiB);
  EXPECT_DOUBLE_EQ(knees[0].octaves_from_cache, 0.0);
  EXPECT_EQ(knees[1].cache.name(), "L2");
  EXPECT_DOUBLE_EQ(knees[1].octaves_from_cache, 0.0);
}

TEST(CacheKnees, FlatCurveHasNone) {
  auto [sizes, ns] = curve([](std::uint64_t) { return 1.3; });
  EXPECT_TRUE(detect_knees(sizes, ns).empty());
}

TEST(CacheKnees, SlowDriftIsNoKnee) {
  // 10% per octave over 14 octaves: 3.8x in all, but no climb.
  auto [sizes, ns] = curve([](std::uint64_t s) { return std::pow(1.1, std::log2(s / 4096.0)); });
  EXPECT_TRUE(detect_knees(sizes, ns).empty());
}

TEST(CacheKnees, ToleratesNoiseAndSpikes) {
  auto [sizes, ns] = curve(three_levels);
  for (std::size_t i = 0; i < ns.size(); ++i) ns[i] *= noise(i, 0.10);
  ns[5] *= 3;     // one stray point on the L1 plateau
  ns[25] *= 2;    // and on the L2 plateau
  ns[26] *= 2;    // two in a row
  ns[45] *= 0.3;  // a dip on the memory plateau
  auto knees = detect_knees(sizes, ns);
  ASSERT_EQ(knees.size(), 2u);
  match_knees(knees, xeon_caches());
  EXPECT_EQ(knees[0].cache.level, 1);
  EXPECT_LE(std::abs(knees[0].octaves_from_cache), 1.0);
  EXPECT_EQ(knees[1].cache.level, 2);
  EXPECT_LE(std::abs(knees[1].octaves_from_cache), 1.0);
}

TEST(CacheKnees, GradualClimbIsOneKneeHalfwayUp) {
  // 5 ns up to 1 MiB, then a climb over two octaves to 100 ns at 4 MiB (log-linear).
  auto [sizes, ns] = curve([](std::uint64_t s) {
    const double x = std::log2(static_cast<double>(s) / MiB);
    return x <= 0 ? 5.0 : x >= 2 ? 100.0 : 5.0 * std::pow(20.0, x / 2);
  });
  const auto knees = detect_knees(sizes, ns);
  ASSERT_EQ(knees.size(), 1u);
  EXPECT_EQ(knees[0].plateau_end_bytes, 1 * MiB);
  EXPECT_EQ(knees[0].size_bytes, 2 * MiB);  // halfway in log latency: 1 octave up the climb
  EXPECT_NEAR(knees[0].ns_after, 100.0, 1e-9);
}

TEST(CacheKnees, SmallStepsAreNotKnees) {
  auto [sizes, ns] = curve([](std::uint64_t s) { return s <= 256 * KiB ? 4.0 : 5.6; });
  EXPECT_TRUE(detect_knees(sizes, ns).empty());  // 1.4x: below the 1.5x threshold
}

TEST(CacheKnees, RejectsMalformedCurves) {
  EXPECT_THROW(detect_knees({4096, 8192}, {1.0}), std::invalid_argument);
  EXPECT_THROW(detect_knees({8192, 4096, 16384}, {1, 1, 1}), std::invalid_argument);
  EXPECT_THROW(detect_knees({4096, 8192, 16384}, {1, 0, 1}), std::invalid_argument);
}

TEST(CacheKnees, MatchingIsOneToOneClosestFirst) {
  std::vector<CacheKnee> knees(3);
  knees[0].size_bytes = 32 * KiB;
  knees[1].size_bytes = 2 * MiB;
  knees[2].size_bytes = 12 * MiB;
  const std::vector<CacheTarget> caches = {xeon_caches()[0], xeon_caches()[1]};
  match_knees(knees, caches);
  EXPECT_EQ(knees[0].cache.level, 1);
  EXPECT_NEAR(knees[0].octaves_from_cache, std::log2(32.0 / 48.0), 1e-12);
  EXPECT_EQ(knees[1].cache.level, 2);
  EXPECT_EQ(knees[2].cache.level, 0) << "L2 is taken by the closer knee";
}

// A knee is paired only with a cache within kKneeMatchOctaves: a knee at 4 MiB on a machine of
// 2 MiB L2s and 240 MiB of L3 per core is 1 octave from L2 (paired) but one at 16 MiB, 3 octaves
// from L2 and almost 4 from L3, is an effective size of its own, with its nearest cache named.
TEST(CacheKnees, AKneeFarFromEveryCacheIsAnEffectiveSizeNotACache) {
  std::vector<CacheKnee> knees(2);
  knees[0].size_bytes = 4 * MiB;
  knees[1].size_bytes = 16 * MiB;
  const std::vector<CacheTarget> caches = {xeon_caches()[1], xeon_caches()[2]};
  match_knees(knees, caches);
  EXPECT_EQ(knees[0].cache.level, 2);
  EXPECT_NEAR(knees[0].octaves_from_cache, 1.0, 1e-12);
  EXPECT_EQ(knees[1].cache.level, 0)
      << "paired with L3, " << knees[1].octaves_from_cache << " octaves away";
  EXPECT_EQ(knees[1].nearest.level, 3) << "L2 is taken; L3 is the nearest left";
  EXPECT_NEAR(knees[1].octaves_from_nearest, std::log2(16.0 / 240.0), 1e-12);
  EXPECT_EQ(kKneeMatchOctaves, 1.0);
}

TEST(CacheTargets, SharedCachesCountPerCore) {
  // Two cores of two PUs each, each core with its own L2, one L3 over both cores.
  const auto topo =
      threads::Topology::synthetic("pack:1 l3:1(size=8388608) core:2 l2:1(size=1048576) pu:2");
  const auto caches = cache_targets(topo);
  ASSERT_EQ(caches.size(), 2u);
  EXPECT_EQ(caches[0].level, 2);
  EXPECT_EQ(caches[0].cores_sharing, 1);
  EXPECT_EQ(caches[0].per_core_bytes, 1 * MiB);
  EXPECT_EQ(caches[1].level, 3);
  EXPECT_EQ(caches[1].cores_sharing, 2);
  EXPECT_EQ(caches[1].per_core_bytes, 4 * MiB);
  EXPECT_EQ(caches[1].name(), "L3");
}

TEST(CacheProbe, TinyRunGivesWellFormedRecords) {
  const auto topo = threads::Topology::host();
  CacheProbeOptions opt;
  opt.min_bytes = 4 * KiB;
  opt.max_bytes = 256 * KiB;
  opt.steps_per_octave = 2;
  opt.repeats = 1;
  opt.repeat_ms = 0.5;
  int calls = 0;
  opt.progress = [&](const CacheRecord& c, const CacheRecord& s) {
    ++calls;
    EXPECT_EQ(c.size_bytes, s.size_bytes);
  };
  const auto res = run_cache_probe(topo, opt);
  const auto sizes = cache_probe_sizes(opt.min_bytes, opt.max_bytes, opt.steps_per_octave);
  EXPECT_EQ(res.sizes, sizes);
  EXPECT_EQ(calls, static_cast<int>(sizes.size()));
  ASSERT_EQ(res.records.size(), 2 * sizes.size());
  for (std::size_t i = 0; i < res.records.size(); ++i) {
    const auto& r = res.records[i];
    EXPECT_EQ(r.size_bytes, sizes[i / 2]);
    EXPECT_EQ(r.pattern, i % 2 ? "stream" : "chase");
    EXPECT_GT(r.ns_per_load, 0);
    EXPECT_GT(r.cycles_per_load, 0);
    EXPECT_LE(r.min_ns_per_load, r.ns_per_load);
    EXPECT_GE(r.max_ns_per_load, r.ns_per_load);
    EXPECT_GT(r.loads, 0u);
    EXPECT_EQ(r.repeats, 1);
    if (r.pattern == "stream") {
      EXPECT_GT(r.bandwidth_gbs, 0);
    }
    EXPECT_GE(r.disturbed_repeats, 0);
    EXPECT_LE(r.disturbed_repeats, r.repeats);
  }
  EXPECT_EQ(res.cpu, topo.pu_list()[0].os_index);
  EXPECT_GT(res.tsc_ghz, 0);
  EXPECT_GE(res.buffer_bytes, 256 * KiB);
  EXPECT_LE(res.hugepage_bytes, res.buffer_bytes);
  for (const auto& k : res.knees) {
    EXPECT_GE(k.size_bytes, opt.min_bytes);
    EXPECT_LE(k.size_bytes, opt.max_bytes);
    EXPECT_GT(k.ns_after, k.ns_before);
  }
}

TEST(CacheProbe, EventsGiveARegionPerSizeAndPattern) {
  const auto topo = threads::Topology::host();
  CacheProbeOptions opt;
  opt.min_bytes = 4 * KiB;
  opt.max_bytes = 32 * KiB;
  opt.steps_per_octave = 1;
  opt.repeats = 2;
  opt.repeat_ms = 0.5;
  SKIP_WITHOUT_CPU_EVENTS();
  opt.events = perf::choose_events("perf::TASK-CLOCK");
  ASSERT_TRUE(opt.events.counting()) << opt.events.notice;
  const auto res = run_cache_probe(topo, opt);
  EXPECT_TRUE(res.counter_errors.empty());
  ASSERT_FALSE(res.records.empty());
  double calls[2] = {0, 0}, clock[2] = {0, 0};
  for (const auto& r : res.records) {
    SCOPED_TRACE(r.pattern + " " + format_size(r.size_bytes));
    ASSERT_TRUE(r.region.has_value());
    const auto& g = *r.region;
    EXPECT_EQ(g.region, r.pattern + " " + format_size(r.size_bytes));
    EXPECT_EQ(g.threads, 1);
    // Every timed repeat, retries of disturbed ones too; calibration is not counted.
    EXPECT_GE(g.calls.sum, r.repeats);
    EXPECT_LE(g.calls.sum, 3 * r.repeats);
    ASSERT_EQ(g.counters.count("perf::TASK-CLOCK"), 1u);
    EXPECT_GT(g.counters.at("perf::TASK-CLOCK").sum, 0);
    EXPECT_EQ(g.derived.count("bandwidth_gbs"), r.pattern == "stream" ? 1u : 0u);
    const int k = r.pattern == "stream";
    calls[k] += g.calls.sum;
    clock[k] += g.counters.at("perf::TASK-CLOCK").sum;
  }
  // The totals over all sizes are the per-size figures added up.
  ASSERT_EQ(res.regions.size(), 2u);
  EXPECT_EQ(res.regions[0].region, "chase");
  EXPECT_EQ(res.regions[1].region, "stream");
  for (int k = 0; k < 2; ++k) {
    EXPECT_DOUBLE_EQ(res.regions[k].calls.sum, calls[k]);
    EXPECT_DOUBLE_EQ(res.regions[k].counters.at("perf::TASK-CLOCK").sum, clock[k]);
  }
}

TEST(CacheProbe, RejectsBadOptionsNamingTheFlag) {
  const auto topo = threads::Topology::host();
  CacheProbeOptions opt;
  opt.max_bytes = 64 * KiB;
  opt.cpu = 100000;
  EXPECT_NE(message_of([&] { run_cache_probe(topo, opt); }).find("--cpu 100000"),
            std::string::npos);
  opt.cpu = -1;
  opt.repeats = 0;
  EXPECT_NE(message_of([&] { run_cache_probe(topo, opt); }).find("--repeats"), std::string::npos);
  opt.repeats = 1;
  opt.min_bytes = 1 * MiB;
  EXPECT_NE(message_of([&] { run_cache_probe(topo, opt); }).find("--min"), std::string::npos);
  EXPECT_THROW(run_cache_probe(threads::Topology::synthetic("pack:1 core:2 pu:1"), {}),
               std::invalid_argument);
}

}  // namespace
}  // namespace compas::probes
