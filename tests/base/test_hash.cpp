#include "compas/base/hash.hpp"

#include <gtest/gtest.h>

namespace {

using compas::base::SplitMix64;

// The first outputs of Vigna's splitmix64.c from state 0.
constexpr std::uint64_t kFromZero[] = {0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL,
                                       0x06c45d188009454fULL};

TEST(Splitmix64, GeneratorMatchesTheReferenceOutputs) {
  SplitMix64 g{0};
  for (std::uint64_t want : kFromZero) EXPECT_EQ(g(), want);
}

TEST(Splitmix64, HashOfXIsTheOutputFromStateX) {
  std::uint64_t state = 0;
  for (std::uint64_t want : kFromZero) {
    EXPECT_EQ(compas::base::splitmix64(state), want);
    state += compas::base::kSplitmixGamma;
  }
  static_assert(compas::base::splitmix64(0) == 0xe220a8397b1dcdafULL);
}

TEST(Splitmix64, MixIsTheFinalizerWithoutTheStep) {
  EXPECT_EQ(compas::base::splitmix64_mix(compas::base::kSplitmixGamma), kFromZero[0]);
  EXPECT_EQ(compas::base::splitmix64_mix(0), 0u);  // the finalizer keeps 0
}

// FNV-1a 64 against the published test vectors (the hash of nothing is the offset basis).
TEST(Fnv1a, MatchesThePublishedVectors) {
  EXPECT_EQ(compas::base::fnv1a(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(compas::base::fnv1a("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(compas::base::fnv1a("foobar"), 0x85944171f73967e8ULL);
  EXPECT_EQ(compas::base::fnv1a("bar", compas::base::fnv1a("foo")), 0x85944171f73967e8ULL);
}

// A word is hashed as its bytes least significant first: "abcdefgh" read as a little-endian word.
TEST(Fnv1a, AWordIsItsBytesLeastSignificantFirst) {
  EXPECT_EQ(compas::base::fnv1a_word(compas::base::kFnvOffset, 0x6867666564636261ULL),
            compas::base::fnv1a("abcdefgh"));
}

}  // namespace
