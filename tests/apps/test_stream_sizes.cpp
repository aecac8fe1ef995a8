// compas study's memory-probe sizes: STREAM's rule (at least 4x the last-level caches) at every
// budget, within a quarter of the host's memory, --stream-size over both; and the plan's membw and
// cache steps take them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../../apps/compas/study/stream_sizes.hpp"
#include "../../apps/compas/study/study_plan.hpp"

namespace compas::app {
namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

const base::MemoryBound kPlenty{64ull << 30, "physical memory"};

// Two packages, an L3 of 32 MiB each: 64 MiB of last-level cache.
threads::Topology two_l3s() {
  return threads::Topology::synthetic("pack:2 l3:1(size=33554432) core:2 pu:1");
}

TEST(StreamSizes, AtLeastFourTimesTheLastLevelCachesAtEveryBudget) {
  for (double scale : {0.05, 0.5, 1.0}) {
    const StreamSizes s = stream_sizes(two_l3s(), scale, kPlenty);
    EXPECT_EQ(s.llc_total, 64 * kMiB);
    EXPECT_EQ(s.llc_one, 32 * kMiB);
    EXPECT_GE(s.membw, 256 * kMiB) << "scale " << scale;
    EXPECT_GE(s.cache_max, 128 * kMiB) << "scale " << scale;
    EXPECT_FALSE(s.capped);
    EXPECT_EQ(s.llc_text, "L3 32 MiB x 2");
  }
  // A budget's own size above the rule's stays.
  EXPECT_EQ(stream_sizes(two_l3s(), 1.0, kPlenty).membw, 512 * kMiB);
  EXPECT_EQ(stream_sizes(two_l3s(), 0.05, kPlenty).membw, 256 * kMiB);
}

TEST(StreamSizes, AQuarterOfTheHostCapsTheRuleAndSaysSo) {
  const StreamSizes s = stream_sizes(two_l3s(), 0.05, {512 * kMiB, "the memory cgroup's limit"});
  EXPECT_EQ(s.membw, 128 * kMiB);
  EXPECT_TRUE(s.capped);
  EXPECT_EQ(s.cap, "a quarter of the memory cgroup's limit");
}

TEST(StreamSizes, AGivenSizeSetsBoth) {
  const StreamSizes s = stream_sizes(two_l3s(), 1.0, kPlenty, 8 * kMiB);
  EXPECT_EQ(s.membw, 8 * kMiB);
  EXPECT_EQ(s.cache_max, 8 * kMiB);
  EXPECT_TRUE(s.given);
  EXPECT_NE(stream_rule_text(8 * kMiB, s.llc_total, s.llc_text).find("below STREAM's rule"),
            std::string::npos);
}

std::string flag_after(const std::vector<Step>& plan, const std::string& id,
                       const std::string& flag) {
  for (const auto& s : plan)
    if (s.id == id) {
      const auto it = std::find(s.argv.begin(), s.argv.end(), flag);
      return it == s.argv.end() || it + 1 == s.argv.end() ? "" : *(it + 1);
    }
  return "";
}

TEST(StreamSizes, ThePlanSizesMembwAndTheCacheCurveByTheRule) {
  StudyArgs a;
  a.budget = 0.5;  // below 3 minutes the old plan took 16 MiB and 4 MiB
  a.kernels = "laplace";
  const auto plan = make_plan(a, two_l3s());
  EXPECT_EQ(flag_after(plan, "membw", "--size"), "256MiB");
  EXPECT_EQ(flag_after(plan, "cache", "--max"), "128MiB");
  a.stream_size = "8MiB";
  const auto given = make_plan(a, two_l3s());
  EXPECT_EQ(flag_after(given, "membw", "--size"), "8MiB");
  EXPECT_EQ(flag_after(given, "cache", "--max"), "8MiB");
  a.stream_size = "1500KiB";
  EXPECT_THROW(make_plan(a, two_l3s()), std::invalid_argument);
  a.stream_size = "1024TiB";  // beyond what any host here can give: refused before any run
  EXPECT_THROW(make_plan(a, two_l3s()), std::invalid_argument);
}

// Every kernel run of the plan times at least a minimum (0.1 s at small budgets, 0.25 s from 3
// minutes): a point timed over a millisecond measures the noise.
TEST(StreamSizes, ThePlanAsksEveryKernelRunForAMinimumTime) {
  StudyArgs a;
  a.kernels = "gemm,laplace";
  for (double budget : {0.5, 10.0}) {
    a.budget = budget;
    int kernels = 0;
    for (const auto& s : make_plan(a, two_l3s())) {
      if (s.kind != "kernel") continue;
      ++kernels;
      EXPECT_EQ(flag_after({s}, s.id, "--min-seconds"), budget < 3 ? "0.1" : "0.25") << s.id;
    }
    EXPECT_GT(kernels, 0);
  }
}

}  // namespace
}  // namespace compas::app
