// Regions: per-thread totals through the real PAPI path, nesting and repeated entry, and the
// aggregation math (min/mean/max/sum, derived metrics only from counters read).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "../common/cpu_events.hpp"
#include "compas/perf/region.hpp"
#include "compas/report/report.hpp"
#include "compas/threads/team.hpp"

namespace cp = compas::perf;
namespace ct = compas::threads;

namespace {

ct::TeamOptions options(int threads) {
  ct::TeamOptions o;
  o.threads = threads;
  o.allow_oversubscribe = true;
  return o;
}

void busy(int n) {
  volatile double x = 0;
  for (int i = 0; i < n; ++i) x = x + 1e-9 * i;
}

const cp::RegionSample* find(const std::vector<cp::RegionSample>& v, const std::string& region,
                             int thread) {
  for (const auto& s : v)
    if (s.region == region && s.thread == thread) return &s;
  return nullptr;
}

}  // namespace

TEST(Region, BusyLoopReadsTaskClockOnEveryThread) {
  SKIP_WITHOUT_CPU_EVENTS();
  ct::Topology topo = ct::Topology::host();
  ct::Team team(topo, options(3));
  cp::Profile profile(team, cp::choose_events("perf::TASK-CLOCK"));
  ASSERT_TRUE(profile.events().counting());
  team.run([&](ct::ThreadCtx& t) {
    COMPAS_REGION(t, "busy");
    busy(1000000);
  });
  EXPECT_TRUE(profile.thread_errors().empty());
  const auto samples = profile.samples();
  ASSERT_EQ(samples.size(), 3u);
  for (int t = 0; t < 3; ++t) {
    const auto* s = find(samples, "busy", t);
    ASSERT_NE(s, nullptr) << "thread " << t;
    EXPECT_EQ(s->calls, 1u);
    EXPECT_GT(s->seconds, 0.0);
    ASSERT_EQ(s->events, std::vector<std::string>{"perf::TASK-CLOCK"});
    EXPECT_GT(s->counts[0], 0) << "TASK-CLOCK on thread " << t;
  }
}

TEST(Region, AggregationMatchesPerThreadValues) {
  ct::Topology topo = ct::Topology::host();
  ct::Team team(topo, options(3));
  cp::Profile profile(team, cp::choose_events("perf::TASK-CLOCK,perf::PAGE-FAULTS"));
  team.run([&](ct::ThreadCtx& t) {
    COMPAS_REGION(t, "work");
    busy(200000 * (t.thread() + 1));
  });
  const auto samples = profile.samples();
  const auto summary = cp::aggregate(samples);
  ASSERT_EQ(summary.size(), 1u);
  const auto& r = summary[0];
  EXPECT_EQ(r.region, "work");
  EXPECT_EQ(r.threads, 3);
  EXPECT_EQ(r.processes, 1);
  double mn = 1e300, mx = 0, sum = 0;
  for (const auto& s : samples)
    mn = std::min(mn, s.seconds), mx = std::max(mx, s.seconds), sum += s.seconds;
  EXPECT_DOUBLE_EQ(r.seconds.min, mn);
  EXPECT_DOUBLE_EQ(r.seconds.max, mx);
  EXPECT_DOUBLE_EQ(r.seconds.sum, sum);
  EXPECT_DOUBLE_EQ(r.seconds.mean, sum / 3);
  if (!profile.events().counting()) {
    // Time only (PAPI counts no CPU event here): no counter may appear, not even as 0.
    EXPECT_FALSE(compas::perf::cpu_events_unavailable().empty()) << profile.events().notice;
    EXPECT_TRUE(r.counters.empty());
    return;
  }
  double cmn = 1e300, cmx = 0, csum = 0;
  for (const auto& s : samples) {
    const double c = static_cast<double>(s.counts[0]);
    cmn = std::min(cmn, c), cmx = std::max(cmx, c), csum += c;
  }
  const auto& clk = r.counters.at("perf::TASK-CLOCK");
  EXPECT_DOUBLE_EQ(clk.min, cmn);
  EXPECT_DOUBLE_EQ(clk.max, cmx);
  EXPECT_DOUBLE_EQ(clk.sum, csum);
  EXPECT_EQ(clk.n, 3);
  EXPECT_EQ(r.counters.count("perf::PAGE-FAULTS"), 1u);
  EXPECT_EQ(r.derived.count("cpu_utilization"), 1u);
  EXPECT_EQ(r.derived.count("ipc"), 0u);  // cycles and instructions were not read
}

TEST(Region, NestingAndRepeatedEntry) {
  ct::Topology topo = ct::Topology::host();
  ct::Team team(topo, options(2));
  cp::Profile profile(team, cp::choose_events(""));  // time only
  team.run([&](ct::ThreadCtx& t) {
    for (int i = 0; i < 3; ++i) {
      COMPAS_REGION(t, "outer");
      busy(20000);
      for (int j = 0; j < 2; ++j) {
        COMPAS_REGION(t, "inner");
        busy(20000);
      }
    }
  });
  team.run([&](ct::ThreadCtx& t) { COMPAS_REGION(t, "outer"); });  // a later run adds up
  const auto samples = profile.samples();
  for (int t = 0; t < 2; ++t) {
    const auto* outer = find(samples, "outer", t);
    const auto* inner = find(samples, "inner", t);
    ASSERT_NE(outer, nullptr);
    ASSERT_NE(inner, nullptr);
    EXPECT_EQ(outer->calls, 4u);
    EXPECT_EQ(inner->calls, 6u);
    EXPECT_GE(outer->seconds, inner->seconds);  // inclusive
    EXPECT_TRUE(outer->events.empty());         // time only: no counters, not zeros
  }
  profile.reset();
  EXPECT_TRUE(profile.samples().empty());
}

TEST(Region, WithoutActiveProfileIsANoOp) {
  ct::Topology topo = ct::Topology::host();
  ct::Team team(topo, options(2));
  int ran = 0;
  team.run([&](ct::ThreadCtx& t) {
    COMPAS_REGION(t, "nothing");
    if (t.is_leader()) ran = 1;
  });
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(cp::Profile::active(), nullptr);
}

TEST(Region, UnavailableHardwareEventHasNoNumbers) {
  const auto choice = cp::choose_events("PAPI_TOT_CYC,PAPI_TOT_INS");
  if (choice.source == cp::CounterSource::hardware) GTEST_SKIP() << "hardware counters present";
  ct::Topology topo = ct::Topology::host();
  ct::Team team(topo, options(2));
  cp::Profile profile(team, choice);
  team.run([&](ct::ThreadCtx& t) {
    COMPAS_REGION(t, "r");
    busy(10000);
  });
  const auto summary = cp::aggregate(profile.samples());
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0].counters.count("PAPI_TOT_CYC"), 0u);
  EXPECT_EQ(summary[0].counters.count("PAPI_TOT_INS"), 0u);
  EXPECT_EQ(summary[0].derived.count("ipc"), 0u);
  const auto j = compas::report::to_json(summary[0]);
  EXPECT_FALSE(j["counters"].contains("PAPI_TOT_CYC"));
}

TEST(Aggregate, AcrossProcessesAndDerivedMetrics) {
  // Two processes of two threads each, with hardware-like counters.
  std::vector<cp::RegionSample> samples;
  const std::vector<std::string> ev = {"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_L3_TCM"};
  for (int process = 0; process < 2; ++process)
    for (int t = 0; t < 2; ++t) {
      cp::RegionSample s;
      s.process = process;
      s.thread = t;
      s.region = "k";
      s.calls = 10;
      s.seconds = 1.0 + process + 0.5 * t;  // 1, 1.5, 2, 2.5
      s.events = ev;
      s.counts = {1000, 2000, 100};
      samples.push_back(s);
    }
  const auto r = cp::aggregate(samples, 64, {{"k", {5e9, 0}}})[0];
  EXPECT_EQ(r.processes, 2);
  EXPECT_EQ(r.threads, 4);
  EXPECT_DOUBLE_EQ(r.seconds.min, 1.0);
  EXPECT_DOUBLE_EQ(r.seconds.max, 2.5);
  EXPECT_DOUBLE_EQ(r.seconds.mean, 1.75);
  EXPECT_DOUBLE_EQ(r.calls.sum, 40);
  EXPECT_DOUBLE_EQ(r.derived.at("ipc"), 2.0);
  EXPECT_DOUBLE_EQ(r.derived.at("memory_bytes_est"), 400.0 * 64);
  EXPECT_DOUBLE_EQ(r.derived.at("memory_gbs_est"), 400.0 * 64 / 2.5 * 1e-9);
  EXPECT_DOUBLE_EQ(r.derived.at("gflops"), 5e9 / 2.5 * 1e-9);

  // A counter missing on one thread: summarized over the others, derived metrics dropped.
  samples[3].events = {"PAPI_TOT_CYC"};
  samples[3].counts = {1000};
  const auto r2 = cp::aggregate(samples)[0];
  EXPECT_EQ(r2.counters.at("PAPI_TOT_INS").n, 3);
  EXPECT_EQ(r2.derived.count("ipc"), 0u);
}

TEST(Aggregate, RegionsKeepFirstAppearanceOrder) {
  std::vector<cp::RegionSample> samples(3);
  samples[0].region = "b";
  samples[1].region = "a";
  samples[2].region = "b";
  const auto r = cp::aggregate(samples);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].region, "b");
  EXPECT_EQ(r[0].threads, 2);
  EXPECT_EQ(r[1].region, "a");
}

TEST(Aggregate, SamplesSinceIsTheStepBetweenSnapshots) {
  auto sample = [](int thread, const char* region, std::uint64_t calls, double seconds,
                   std::vector<long long> counts) {
    cp::RegionSample s;
    s.thread = thread;
    s.region = region;
    s.calls = calls;
    s.seconds = seconds;
    s.events = {"perf::TASK-CLOCK"};
    s.counts = std::move(counts);
    return s;
  };
  const std::vector<cp::RegionSample> before = {
      sample(0, "a", 2, 1.0, {100}), sample(1, "a", 2, 1.5, {150}), sample(0, "b", 1, 0.5, {50})};
  const std::vector<cp::RegionSample> after = {
      sample(0, "a", 5, 4.0, {400}), sample(1, "a", 2, 1.5, {150}),   // not entered
      sample(0, "b", 2, 0.75, {75}), sample(1, "c", 1, 0.25, {25})};  // new region
  const auto step = cp::samples_since(after, before);
  ASSERT_EQ(step.size(), 3u);
  EXPECT_EQ(step[0].region, "a");
  EXPECT_EQ(step[0].thread, 0);
  EXPECT_EQ(step[0].calls, 3u);
  EXPECT_DOUBLE_EQ(step[0].seconds, 3.0);
  EXPECT_EQ(step[0].counts, (std::vector<long long>{300}));
  EXPECT_EQ(step[1].region, "b");
  EXPECT_EQ(step[1].calls, 1u);
  EXPECT_EQ(step[1].counts, (std::vector<long long>{25}));
  EXPECT_EQ(step[2].region, "c");
  EXPECT_EQ(step[2].counts, (std::vector<long long>{25}));

  // Snapshots whose events differ give no difference of counts at all, never a wrong one.
  auto other = after;
  other[0].events = {"perf::PAGE-FAULTS"};
  const auto odd = cp::samples_since(other, before);
  ASSERT_FALSE(odd.empty());
  EXPECT_TRUE(odd[0].events.empty());
  EXPECT_TRUE(odd[0].counts.empty());
  EXPECT_EQ(odd[0].calls, 3u);
}
