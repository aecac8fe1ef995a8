// --stores auto's calibration (kernels/src/store_calibration.hpp): fed sweep times where one kind
// is the right choice, it must pick that kind, including when each sweep after a change of kind
// pays for the other kind (the case that made Laplace n = 640 stream, 2.4x slower).
#include <gtest/gtest.h>

#include <vector>

#include "../../kernels/src/store_calibration.hpp"
#include "../../kernels/src/store_trials.hpp"

namespace {

namespace cal = compas::kernels::calibration;

// Sweep times: `streaming` and `cached` per sweep of each kind; the three sweeps after a change of
// kind (the first two read the two copies as the other kind left them, and one thread here needs
// a third) cost `penalty` more when cached sweeps follow streaming ones (their source comes from
// memory) and `bonus` less when streaming sweeps follow cached ones (their source is cached).
std::vector<double> sweeps(double streaming, double cached, double penalty, double bonus) {
  std::vector<double> took(cal::kLast + 1, 0.0);
  bool previous_streamed = false;  // sweep 1 is cached
  int since_change = 3;
  for (int k = cal::kFirst; k <= cal::kLast; ++k) {
    const bool s = cal::streams(k);
    since_change = s != previous_streamed ? 0 : since_change + 1;
    double t = s ? streaming : cached;
    if (since_change < 3) t += s ? -bonus : penalty;
    took[static_cast<std::size_t>(k)] = t;
    previous_streamed = s;
  }
  return took;
}

TEST(StoresCalibration, BlocksOfEachKindWithTheFirstSweepsUntimed) {
  int streaming = 0, cached = 0, timed = 0;
  for (int k = cal::kFirst; k <= cal::kLast; ++k) {
    (cal::streams(k) ? streaming : cached)++;
    timed += cal::timed(k);
    // The first three sweeps of each kind's block are not timed.
    if (k > cal::kFirst && cal::streams(k) != cal::streams(k - 1)) {
      for (int j = 0; j < 3; ++j) EXPECT_FALSE(cal::timed(k + j)) << "sweep " << k + j;
    }
  }
  EXPECT_EQ(streaming, cached);
  EXPECT_EQ(timed, 2 * cal::kTimedPerKind);
  EXPECT_FALSE(cal::timed(cal::kFirst));
}

TEST(StoresCalibration, PicksCachedForAFieldInCacheDespiteTheChangeOverCosts) {
  // Cached sweeps take 1.0, streaming 2.4; the three cached sweeps after streaming ones pay 2.0
  // more, the three streaming ones after cached ones are 1.6 cheaper: single alternating sweeps,
  // or blocks timing their second or third sweep, would see streaming 0.8 against cached 3.0.
  EXPECT_GT(cal::streaming_minus_cached(sweeps(2.4, 1.0, 2.0, 1.6)), 0.0);
}

TEST(StoresCalibration, PicksStreamingForAFieldInMemory) {
  EXPECT_LT(cal::streaming_minus_cached(sweeps(1.0, 1.4, 0.1, 0.0)), 0.0);
}

TEST(StoresCalibration, OneSlowSweepDoesNotDecide) {
  auto took = sweeps(1.0, 1.2, 0.0, 0.0);  // streaming is faster
  for (int k = cal::kFirst; k <= cal::kLast; ++k)
    if (cal::streams(k) && cal::timed(k)) {
      took[static_cast<std::size_t>(k)] = 50.0;  // the machine stalled once
      break;
    }
  EXPECT_LT(cal::streaming_minus_cached(took), 0.0);
}

// After the first streaming and cached blocks (sweeps up to kEarlyLast) a clear difference
// decides at once, so the worse kind runs half as many sweeps; a close or noisy one waits for
// all four blocks.
TEST(StoresCalibration, AClearDifferenceDecidesAfterTwoBlocks) {
  static_assert(cal::kEarlyLast < cal::kLast);
  // Each kind's timed sweeps all lie apart from the other's, medians 2.4 against 1.0.
  EXPECT_EQ(cal::early_vote(sweeps(2.4, 1.0, 2.0, 1.6)), cal::Vote::cached);
  EXPECT_EQ(cal::early_vote(sweeps(1.0, 1.4, 0.1, 0.0)), cal::Vote::streaming);
}

TEST(StoresCalibration, ACloseOrOverlappingDifferenceWaitsForAllBlocks) {
  // 5% apart: within what one minute to the next moves on a busy machine.
  EXPECT_EQ(cal::early_vote(sweeps(1.0, 1.05, 0.0, 0.0)), cal::Vote::unclear);
  // Medians far apart, but one stalled cached sweep is slower than every streaming one: the
  // timed sweeps of the two kinds overlap, so the first blocks do not decide.
  auto took = sweeps(2.0, 1.0, 0.0, 0.0);
  for (int k = cal::kFirst; k <= cal::kEarlyLast; ++k)
    if (!cal::streams(k) && cal::timed(k)) {
      took[static_cast<std::size_t>(k)] = 50.0;
      break;
    }
  EXPECT_EQ(cal::early_vote(took), cal::Vote::unclear);
  // Only the first two blocks are looked at: later sweeps (not yet run) do not count.
  auto early = sweeps(1.0, 1.4, 0.1, 0.0);
  for (int k = cal::kEarlyLast + 1; k <= cal::kLast; ++k) early[static_cast<std::size_t>(k)] = 0;
  EXPECT_EQ(cal::early_vote(early), cal::Vote::streaming);
}

TEST(StoresCalibration, TheJobStopsEarlyOnlyWhenEveryProcessVotesTheSameWay) {
  using V = cal::Vote;
  EXPECT_EQ(cal::job_vote(V::streaming, V::streaming), V::streaming);
  EXPECT_EQ(cal::job_vote(V::cached, V::cached), V::cached);
  EXPECT_EQ(cal::job_vote(V::cached, V::streaming), V::unclear);
  EXPECT_EQ(cal::job_vote(V::unclear, V::streaming), V::unclear);
}

// The rule before any timing, fed cache sizes of machines where each kind is the right one.
TEST(StoresPlan, SizesDecideOutsideTheDoubtfulBandAndTimingInside) {
  constexpr std::uint64_t MiB = 1 << 20;
  const int sweeps = cal::kMinSweeps;
  // A field inside the caches below the last level: cached, nothing timed.
  auto p = cal::plan_stores(cal::Asked::automatic, true, sweeps, 6 * MiB, 8 * MiB, 32 * MiB);
  EXPECT_FALSE(p.calibrate);
  EXPECT_FALSE(p.stream);
  EXPECT_NE(p.reason.find("fits the caches below the last level (8.0 MiB)"), std::string::npos)
      << p.reason;
  // The same 6.5 MB field on a machine of 1 MiB per-core caches and a 32 MiB last level (the
  // paper's n = 640 here): doubtful, so timed.
  p = cal::plan_stores(cal::Asked::automatic, true, sweeps, 6 * MiB + MiB / 2, 2 * MiB, 32 * MiB);
  EXPECT_TRUE(p.calibrate) << p.reason;
  // A field beyond twice the last level streams without timing, on a small or a large machine.
  p = cal::plan_stores(cal::Asked::automatic, true, sweeps, 257 * MiB, 2 * MiB, 32 * MiB);
  EXPECT_FALSE(p.calibrate);
  EXPECT_TRUE(p.stream);
  EXPECT_NE(p.reason.find("exceeds twice the last-level caches (32.0 MiB)"), std::string::npos)
      << p.reason;
  p = cal::plan_stores(cal::Asked::automatic, true, sweeps, 257 * MiB, 64 * MiB, 256 * MiB);
  EXPECT_TRUE(p.calibrate) << "within twice a 256 MiB last level: " << p.reason;
  // Doubtful but too short to time: cached.
  p = cal::plan_stores(cal::Asked::automatic, true, sweeps - 1, 20 * MiB, 2 * MiB, 32 * MiB);
  EXPECT_FALSE(p.calibrate);
  EXPECT_FALSE(p.stream);
  EXPECT_NE(p.reason.find("too short"), std::string::npos) << p.reason;
  // What the flag asks for, and what the CPU can do, win over sizes.
  EXPECT_TRUE(
      cal::plan_stores(cal::Asked::streaming, true, sweeps, 1 * MiB, 2 * MiB, 32 * MiB).stream);
  EXPECT_FALSE(
      cal::plan_stores(cal::Asked::cached, true, sweeps, 999 * MiB, 2 * MiB, 32 * MiB).stream);
  EXPECT_FALSE(
      cal::plan_stores(cal::Asked::automatic, false, sweeps, 999 * MiB, 2 * MiB, 32 * MiB).stream);
}

}  // namespace

// The sort's trials (kernels/src/store_trials.hpp), fed trial times where each kind is right.
namespace {

compas::kernels::StoreTrials trials_of(double cached, double streaming, int stalled = -1) {
  compas::kernels::StoreTrials t;
  t.use_for(22, 1);
  for (int i = 0; t.running(); ++i)
    t.record((t.next_streams() ? streaming : cached) + (i == stalled ? 8.0 : 0.0));
  return t;
}

}  // namespace

TEST(StoreTrials, CachedStreamingStreamingCached) {
  compas::kernels::StoreTrials t;
  t.use_for(22, 2);
  std::vector<bool> order;
  while (t.running()) {
    order.push_back(t.next_streams());
    t.record(1.0);
  }
  EXPECT_EQ(order, (std::vector<bool>{false, true, true, false}));
}

TEST(StoreTrials, PicksTheFasterKind) {
  EXPECT_TRUE(trials_of(10.0, 7.0).stream());
  EXPECT_FALSE(trials_of(7.0, 10.0).stream());
}

TEST(StoreTrials, OneStalledTrialDoesNotDecide) {
  // Streaming is faster (7 against 10 ms), but its first trial stalled 8 ms: one trial of each kind
  // would have picked cached; the fastest of each kind's trials does not.
  EXPECT_TRUE(trials_of(10.0, 7.0, 1).stream());
  // And the same for cached, its first trial stalled.
  EXPECT_FALSE(trials_of(7.0, 10.0, 0).stream());
}

TEST(StoreTrials, ANewSizeOrTeamStartsOver) {
  auto t = trials_of(10.0, 7.0);
  ASSERT_FALSE(t.running());
  t.use_for(22, 1);
  EXPECT_FALSE(t.running());  // the same size and team keep their trials
  t.use_for(23, 1);
  EXPECT_TRUE(t.running());
  EXPECT_EQ(t.count(), 0);
  auto u = trials_of(10.0, 7.0);
  u.use_for(22, 2);
  EXPECT_TRUE(u.running());
  EXPECT_FALSE(u.stream());  // no trial yet: cached
}
