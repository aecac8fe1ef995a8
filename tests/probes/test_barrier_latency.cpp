// Barrier latency (compas/probes/barrier_latency.hpp): how many barriers each step runs, the team
// barrier's timing, and the process barriers' in a job of one process.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "compas/comm/bootstrap.hpp"
#include "compas/probes/barrier_latency.hpp"

namespace {

namespace probes = compas::probes;
namespace ct = compas::threads;

TEST(BarrierIterations, LastTheTargetWithinBounds) {
  EXPECT_EQ(probes::barrier_iterations(1000, 20), 20000);
  EXPECT_EQ(probes::barrier_iterations(1e9, 1), 16);
  EXPECT_EQ(probes::barrier_iterations(0, 1e6), 2000000);
}

TEST(BarrierTiming, WarmUpThenRepeatsOfTheAgreedCount) {
  long calls = 0;
  long asked = -1;
  probes::BarrierTiming t;
  t.ns.assign(3, -1.0);
  probes::time_barrier(
      true, t, 3, 1.0, [&] { ++calls; },
      [&](long mine) {
        asked = mine;
        return 100L;
      });
  EXPECT_GE(asked, 16);  // this thread's own choice, before agreeing on 100
  EXPECT_EQ(t.iterations, 100);
  EXPECT_EQ(calls, 2 * probes::kBarrierWarmup + 3 * (1 + 100));
  for (double ns : t.ns) EXPECT_GE(ns, 0);

  probes::BarrierTiming other;
  other.ns.assign(2, -1.0);
  probes::time_barrier(
      false, other, 2, 1.0, [] {}, [](long) { return 16L; });
  EXPECT_EQ(other.iterations, 0) << "only the leader writes the timing";
  EXPECT_EQ(other.ns, (std::vector<double>{-1.0, -1.0}));
}

TEST(BarrierTiming, TeamOfTwoThreads) {
  const auto topo = ct::Topology::host();
  ct::TeamOptions o;
  o.threads = 2;
  o.barrier = ct::BarrierAlgorithm::central;
  o.wait = ct::WaitPolicy::automatic;
  o.allow_oversubscribe = true;  // two threads even on a one-PU runner
  const auto t = probes::time_team_barrier(topo, o, 3, 0.5);
  ASSERT_EQ(t.ns.size(), 3u);
  for (double ns : t.ns) EXPECT_GT(ns, 0);
  EXPECT_GE(t.iterations, 16);
}

TEST(BarrierTiming, ProcessBarriersOfAOneProcessJob) {
  auto boot = compas::comm::Bootstrap::single();
  ASSERT_EQ(boot->size(), 1);
  long first = 0, second = 0;
  const std::vector<std::function<void()>> variants = {[&] { ++first; }, [&] { ++second; }};
  const auto t = probes::time_process_barriers(*boot, variants, 4, 0.2);
  ASSERT_EQ(t.size(), 2u);
  for (std::size_t v = 0; v < t.size(); ++v) {
    ASSERT_EQ(t[v].ns.size(), 4u);
    EXPECT_GE(t[v].iterations, 16);
    for (double ns : t[v].ns) EXPECT_GT(ns, 0);
  }
  EXPECT_EQ(first, 2 * probes::kBarrierWarmup + 4 * (1 + t[0].iterations));
  EXPECT_EQ(second, 2 * probes::kBarrierWarmup + 4 * (1 + t[1].iterations));
}

}  // namespace
