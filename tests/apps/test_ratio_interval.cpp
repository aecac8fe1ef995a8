// The Mann-Whitney interval of a ratio against published values: the exact null distribution of
// U (critical values of the two-sided test at 10%, as tabulated for the Wilcoxon rank-sum test:
// 0 for 3 and 3, 4 for 5 and 5, 11 for 7 and 7) and the coverage each gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "../../apps/compas/ratio_interval.hpp"

namespace {

using compas::app::ratio_interval;

std::vector<double> scaled(std::vector<double> v, double by) {
  for (double& x : v) x *= by;
  return v;
}

TEST(RatioInterval, ThreeAgainstThreeSpansTheExtremePairwiseRatios) {
  const std::vector<double> a = {1.0, 1.1, 1.2}, b = {2.0, 2.1, 2.4};
  const auto r = ratio_interval(a, b, 0.9);
  ASSERT_TRUE(r.bounded);
  EXPECT_DOUBLE_EQ(r.lo, 2.0 / 1.2);
  EXPECT_DOUBLE_EQ(r.hi, 2.4 / 1.0);
  EXPECT_NEAR(r.confidence, 1 - 2.0 / 20, 1e-12);  // P(U = 0) = 1 / C(6, 3)
  EXPECT_NEAR(r.p_value, 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(r.estimate, 2.0);  // the 5th of the 9 pairwise ratios, sorted
}

TEST(RatioInterval, CriticalValuesMatchTheTables) {
  // 5 and 5: U <= 4 has probability 12/252; the interval drops the 5 smallest and largest ratios.
  std::vector<double> a5 = {1, 2, 3, 4, 5}, b5 = scaled(a5, 1.5);
  const auto r5 = ratio_interval(a5, b5, 0.9);
  ASSERT_TRUE(r5.bounded);
  EXPECT_NEAR(r5.confidence, 1 - 2 * 12.0 / 252, 1e-12);
  std::vector<double> ratios;
  for (double x : a5)
    for (double y : b5) ratios.push_back(y / x);
  std::sort(ratios.begin(), ratios.end());
  EXPECT_DOUBLE_EQ(r5.lo, ratios[4]);
  EXPECT_DOUBLE_EQ(r5.hi, ratios[20]);
  // 7 and 7: the critical value 11, P(U <= 11) = 0.0487 (tables); the 12th ratio from each end.
  std::vector<double> a7 = {1, 2, 3, 4, 5, 6, 7}, b7 = scaled(a7, 1.1);
  const auto r7 = ratio_interval(a7, b7, 0.9);
  ASSERT_TRUE(r7.bounded);
  EXPECT_NEAR(r7.confidence, 1 - 2 * 0.0487, 5e-4);
  EXPECT_GT(r7.confidence, 0.9);
}

TEST(RatioInterval, TwoAgainstTwoCannotBoundANinetyPercentInterval) {
  const auto r = ratio_interval({1.0, 1.01}, {2.0, 2.02}, 0.9);
  EXPECT_FALSE(r.bounded);
  EXPECT_NEAR(r.p_value, 2.0 / 6, 1e-12);  // all apart: the smallest two-sided p of 2 and 2
  EXPECT_EQ(compas::app::repetitions_for(0.9), 3);
  EXPECT_EQ(compas::app::repetitions_for(0.95), 4);
}

TEST(RatioInterval, EqualSamplesGiveAnIntervalAroundOne) {
  const std::vector<double> a = {1.0, 1.1, 0.9, 1.05, 0.95};
  const auto r = ratio_interval(a, a, 0.9);
  ASSERT_TRUE(r.bounded);
  EXPECT_LT(r.lo, 1.0);
  EXPECT_GT(r.hi, 1.0);
  EXPECT_DOUBLE_EQ(r.estimate, 1.0);
  EXPECT_NEAR(r.p_value, 1.0, 1e-12);
}

TEST(RatioInterval, LargeSamplesUseTheNormalApproximation) {
  std::vector<double> a, b;
  for (int i = 1; i <= 40; ++i) a.push_back(1 + i / 400.0), b.push_back(2 * (1 + i / 400.0));
  const auto r = ratio_interval(a, b, 0.9);  // 1600 pairs: normal
  ASSERT_TRUE(r.bounded);
  EXPECT_LT(r.lo, 2.0);
  EXPECT_GT(r.hi, 2.0);
  EXPECT_GT(r.lo, 1.0);
  EXPECT_LT(r.p_value, 1e-6);
}

// The interval and estimate as sorting all m x n ratios gives them: the k-th smallest and largest
// (k from the tables for 3, 5 and 7 a side; for 40 and 40, and 31 and 47, from the normal
// approximation: the smallest u with P(U <= u) > 5%, 629 and 567) and the median. The order
// statistics found without holding the ratios are exactly these, with many ratios tied.
TEST(RatioInterval, MatchesTheSortedPairwiseRatios) {
  std::uint64_t state = 42;
  auto next = [&] {  // a few distinct values, so that ratios tie
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return 1 + double((state >> 33) % 17) / 8;
  };
  struct Case {
    int m, n;
    std::size_t k;
  };
  for (const Case c :
       {Case{3, 3, 1}, Case{5, 5, 5}, Case{7, 7, 12}, Case{40, 40, 629}, Case{31, 47, 567}}) {
    std::vector<double> a(c.m), b(c.n);
    for (double& x : a) x = next();
    for (double& y : b) y = 1.3 * next();
    std::vector<double> ratios;
    for (double x : a)
      for (double y : b) ratios.push_back(y / x);
    std::sort(ratios.begin(), ratios.end());
    const auto r = ratio_interval(a, b, 0.9);
    ASSERT_TRUE(r.bounded) << c.m << " x " << c.n;
    EXPECT_EQ(r.lo, ratios[c.k - 1]) << c.m << " x " << c.n;
    EXPECT_EQ(r.hi, ratios[ratios.size() - c.k]) << c.m << " x " << c.n;
    const std::size_t h = ratios.size() / 2;
    EXPECT_EQ(r.estimate, ratios.size() % 2 ? ratios[h] : (ratios[h - 1] + ratios[h]) / 2)
        << c.m << " x " << c.n;
  }
}

// A value that is zero or negative makes no ratio of times or rates: no interval.
TEST(RatioInterval, NonPositiveValuesGiveNoInterval) {
  EXPECT_FALSE(ratio_interval({1, 2, 0, 3}, {1, 2, 3}, 0.9).bounded);
  EXPECT_FALSE(ratio_interval({1, 2, 3}, {1, -2, 3}, 0.9).bounded);
}

TEST(RatioInterval, BadArgumentsAreRefused) {
  EXPECT_THROW(ratio_interval({}, {1.0}, 0.9), std::invalid_argument);
  EXPECT_THROW(ratio_interval({1.0}, {1.0}, 1.0), std::invalid_argument);
}

}  // namespace
