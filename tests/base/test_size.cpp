#include "compas/base/size.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using compas::base::parse_size;
using compas::base::SizeSyntax;

constexpr std::uint64_t KiB = 1024, MiB = KiB * KiB, GiB = MiB * KiB;

TEST(ParseSize, BytesTakeBinaryDecimalAndBareSuffixes) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("4096B"), 4096u);
  EXPECT_EQ(parse_size("64KiB"), 64 * KiB);
  EXPECT_EQ(parse_size("64K"), 64 * KiB);
  EXPECT_EQ(parse_size("64Ki"), 64 * KiB);
  EXPECT_EQ(parse_size("10KB"), 10000u);
  EXPECT_EQ(parse_size("1MiB"), MiB);
  EXPECT_EQ(parse_size("512M"), 512 * MiB);
  EXPECT_EQ(parse_size("3MB"), 3000000u);
  EXPECT_EQ(parse_size("1GiB"), GiB);
  EXPECT_EQ(parse_size("2G"), 2 * GiB);
  EXPECT_EQ(parse_size("1GB"), 1000000000u);
  EXPECT_EQ(parse_size("1TiB"), 1024 * GiB);
  EXPECT_EQ(parse_size("1tb"), 1000000000000u);
  EXPECT_EQ(parse_size(" 1.5 gib "), 3 * GiB / 2);
  EXPECT_EQ(parse_size("0.5K"), 512u);
}

TEST(ParseSize, CountsTakeOnlyDigitsAndKMG) {
  EXPECT_EQ(parse_size("1000", SizeSyntax::count), 1000u);
  EXPECT_EQ(parse_size("64k", SizeSyntax::count), 64 * KiB);
  EXPECT_EQ(parse_size("4M", SizeSyntax::count), 4 * MiB);
  EXPECT_EQ(parse_size("1G", SizeSyntax::count), GiB);
  EXPECT_EQ(parse_size("18446744073709551615", SizeSyntax::count), ~std::uint64_t{0});
  for (const std::string bad : {"4MB", "4MiB", "4 M", "1.5M", "1T", "4B", " 4", "+4"})
    EXPECT_THROW(parse_size(bad, SizeSyntax::count), std::invalid_argument) << bad;
}

TEST(ParseSize, BadInputIsNamedWithWhatIsExpected) {
  for (const std::string bad : {"", "0", "0K", "-1", "abc", "12abc", "1XB", "GiB", "1.5", "1..5M",
                                "0.0001K", "1e9", "99999999999999999999", "100000000TiB", "+5"}) {
    for (auto syntax : {SizeSyntax::bytes, SizeSyntax::count}) {
      try {
        (void)parse_size(bad, syntax, "--keys");
        ADD_FAILURE() << "accepted '" << bad << "'";
      } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("--keys '" + bad + "': ", 0), 0u) << what;
        EXPECT_NE(what.find(syntax == SizeSyntax::bytes ? "positive byte count" : "K, M or G"),
                  std::string::npos)
            << what;
      }
    }
  }
}

}  // namespace
