// The spread of the study's repeated points: medians, ranges of ratios, and where a verdict's
// threshold lies against a range.
#include "../../apps/compas/study/study_spread.hpp"

#include <gtest/gtest.h>

namespace compas::app {
namespace {

TEST(StudySpread, MedianOfOddAndEvenCountsAndTheirRange) {
  const Spread odd = spread_of({3.0, 1.0, 2.0});
  EXPECT_EQ(odd.n, 3);
  EXPECT_DOUBLE_EQ(odd.median, 2.0);
  EXPECT_DOUBLE_EQ(odd.min, 1.0);
  EXPECT_DOUBLE_EQ(odd.max, 3.0);
  EXPECT_DOUBLE_EQ(odd.relative(), 1.0);
  const Spread even = spread_of({4.0, 1.0, 2.0, 3.0});
  EXPECT_DOUBLE_EQ(even.median, 2.5);
  EXPECT_EQ(spread_of({}).n, 0);
}

TEST(StudySpread, OneValueHasNoKnownSpreadAndIsNeverWide) {
  const Spread one = spread_of({5.0});
  EXPECT_FALSE(one.known());
  EXPECT_FALSE(one.wide());
  EXPECT_DOUBLE_EQ(one.relative(), 0.0);
  EXPECT_EQ(spread_cell(one), "-");
  EXPECT_EQ(with_range(one, 2), "5.00");
}

TEST(StudySpread, PointsOverTenPercentAreMarked) {
  const Spread narrow = spread_of({1.00, 1.05, 1.09});  // 9%
  const Spread wide = spread_of({1.00, 1.05, 1.12});    // 11.4%
  EXPECT_FALSE(narrow.wide());
  EXPECT_TRUE(wide.wide());
  EXPECT_EQ(spread_cell(narrow), "9%");
  EXPECT_EQ(spread_cell(wide), "**11%**");
  EXPECT_EQ(with_range(wide, 2), "1.05 (1.00-1.12)");
}

TEST(StudySpread, ARatioTakesTheWidestRangeItsPartsAllow) {
  const Spread base = spread_of({9.0, 10.0, 11.0});
  const Spread t = spread_of({4.0, 5.0, 6.0});
  const Spread speedup = ratio(base, t);
  EXPECT_DOUBLE_EQ(speedup.median, 2.0);
  EXPECT_DOUBLE_EQ(speedup.min, 9.0 / 6.0);
  EXPECT_DOUBLE_EQ(speedup.max, 11.0 / 4.0);
  EXPECT_EQ(speedup.n, 3);
  EXPECT_EQ(ratio(base, spread_of({0.0})).n, 0);
  const Spread eff = scaled(speedup, 0.5);
  EXPECT_DOUBLE_EQ(eff.median, 1.0);
  EXPECT_DOUBLE_EQ(eff.min, 0.75);
}

TEST(StudySpread, AThresholdInsideTheRangeIsWithinTheSpread) {
  const Spread eff = spread_of({0.95, 1.08, 1.12});
  EXPECT_EQ(side_of(eff, 1.0), Side::within);  // median above 1, but the range reaches below it
  EXPECT_EQ(side_of(eff, 0.9), Side::above);
  EXPECT_EQ(side_of(eff, 1.2), Side::below);
  EXPECT_EQ(side_of(spread_of({1.08}), 1.0), Side::above);  // one value: its side
}

TEST(StudySpread, ARecordsMinAndMaxFieldsGiveItsSpread) {
  const report::json rec = {{"ns_per_barrier", 100.0},
                            {"min_ns_per_barrier", 90.0},
                            {"max_ns_per_barrier", 130.0},
                            {"repeats", 5}};
  const Spread s = field_spread(rec, "ns_per_barrier");
  EXPECT_EQ(s.n, 5);
  EXPECT_DOUBLE_EQ(s.min, 90.0);
  EXPECT_DOUBLE_EQ(s.max, 130.0);
  EXPECT_TRUE(s.wide());
  EXPECT_EQ(field_spread({{"x", 2.0}}, "x").n, 1);
  EXPECT_EQ(field_spread({{"y", 2.0}}, "x").n, 0);
}

}  // namespace
}  // namespace compas::app
