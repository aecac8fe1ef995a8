// Numbers as the command line and the environment take them: plain decimal, nothing else.
#include <gtest/gtest.h>

#include "compas/base/number.hpp"

namespace {

using compas::base::parse_decimal;
using compas::base::parse_integer;

TEST(Number, DecimalNumbersInEveryPlainForm) {
  EXPECT_EQ(parse_decimal("2"), 2.0);
  EXPECT_EQ(parse_decimal("2.5"), 2.5);
  EXPECT_EQ(parse_decimal(".5"), 0.5);
  EXPECT_EQ(parse_decimal("5."), 5.0);
  EXPECT_EQ(parse_decimal("-3"), -3.0);
  EXPECT_EQ(parse_decimal("1e3"), 1000.0);
  EXPECT_EQ(parse_decimal("2.5E-2"), 0.025);
  EXPECT_EQ(parse_decimal("1e+2"), 100.0);
}

TEST(Number, HexadecimalBlanksSignsAndWordsAreNotDecimal) {
  // strtod takes every one of these but the empty ones; a job script's "0x10" or " 2" must not
  // silently mean 16 or 2.
  for (const char* bad : {"", "0x10", "0X1p3", " 2", "2 ", "\t2", "+2", "1e", "e3", ".", "-",
                          "1.2.3", "inf", "nan", "infinity", "1e999", "1'000", "1_000", "2s"})
    EXPECT_EQ(parse_decimal(bad), std::nullopt) << "'" << bad << "'";
}

TEST(Number, IntegersHaveDigitsOnly) {
  EXPECT_EQ(parse_integer("65535", 1, 65535), 65535);
  EXPECT_EQ(parse_integer("-2", -3, 3), -2);
  for (const char* bad : {"", "0", "65536", "-1", "+1", " 1", "1 ", "0x1", "1e3", "-", "010x"})
    EXPECT_EQ(parse_integer(bad, 1, 65535), std::nullopt) << bad;
}

}  // namespace
