#include "compas/base/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using compas::base::median;
using compas::base::spread;

TEST(Median, OddCountTakesTheMiddle) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({5}), 5);
  EXPECT_EQ(median({9, 1, 8, 2, 7}), 7);
}

TEST(Median, EvenCountTakesTheMeanOfTheTwoMiddle) {
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({10, 20}), 15);
}

TEST(Median, NoValuesGiveNaN) {
  EXPECT_TRUE(std::isnan(median({})));
}

TEST(Spread, MinMaxMedianAndRelative) {
  const auto s = spread({12, 8, 10, 11, 9});
  EXPECT_EQ(s.min, 8);
  EXPECT_EQ(s.max, 12);
  EXPECT_EQ(s.median, 10);
  EXPECT_DOUBLE_EQ(s.relative(), 0.4);
  const auto even = spread({2, 4});
  EXPECT_EQ(even.median, 3);
  EXPECT_DOUBLE_EQ(even.relative(), 2.0 / 3);
  EXPECT_EQ(spread({5, 5, 5}).relative(), 0);
}

TEST(Spread, NoValuesOrAZeroMedianGiveNaN) {
  const auto s = spread({});
  EXPECT_TRUE(std::isnan(s.min));
  EXPECT_TRUE(std::isnan(s.max));
  EXPECT_TRUE(std::isnan(s.median));
  EXPECT_TRUE(std::isnan(s.relative()));
  EXPECT_TRUE(std::isnan(spread({-1, 0, 1}).relative()));
}

}  // namespace
