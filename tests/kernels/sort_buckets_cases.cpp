// The radix sort's bucket method (kernels/sort): the same order as std::sort on every
// distribution and team size or an honest fall-back, stability, automatic choice against the
// caches, shared top bits, and the workspace's calibration. Part of kernels_test_sort (compiled
// with test_sort.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sort_cases.hpp"

namespace {

using namespace sort_test;

// Method::buckets (a pass on the top digit into buckets, each then sorted in the cache), forced
// with a small bucket cache so that small inputs make many buckets: the same order as std::sort
// for every distribution, size, team size, digit width and store kind. Where a bucket would not
// fit (all keys equal: one bucket of everything) the sort falls back to lsd and says so.
class SortBuckets : public ::testing::TestWithParam<int> {};

TEST_P(SortBuckets, SameOrderAsStdSortOrAnHonestFallback) {
  const int threads = GetParam();
  ct::Team& team = team_of(threads);
  const std::vector<std::size_t> sizes = {0, 1, 2, 31, 33, 1000, 4099, 65537, 100003};
  for (rs::Dist d : rs::all_dists()) {
    for (std::size_t n : sizes) {
      const auto input = keys_of(d, n, n + 3);
      auto expect = input;
      std::sort(expect.begin(), expect.end());
      for (int bits : {8, 11}) {
        for (rs::Stores stores : {rs::Stores::streaming, rs::Stores::cached, rs::Stores::direct}) {
          rs::Options o;
          o.method = rs::Method::buckets;
          o.bucket_bytes = 8192;  // buckets of about 256 keys, at most 1024
          o.digit_bits = bits;
          o.stores = stores;
          auto got = input;
          const rs::Stats st = rs::sort(team, got, o);
          ASSERT_EQ(got, expect) << rs::to_string(d) << " n=" << n << " bits=" << bits
                                 << " stores=" << to_string(stores);
          if (n == 0) continue;
          if (d == rs::Dist::equal && n > 1024) {
            EXPECT_EQ(st.method, rs::Method::lsd) << n;  // one bucket of n keys: too big
            // Three reads counted the top digit (all keys in one bucket: taken again twice)
            // before lsd's own counting read; every lsd pass is skipped.
            if (stores != rs::Stores::direct) {
              EXPECT_DOUBLE_EQ(st.bytes, 4.0 * n * (3 + 1)) << n;
            }
          } else if (d == rs::Dist::uniform && n >= 1000) {  // the first and last buckets used
            EXPECT_EQ(st.method, rs::Method::buckets) << n;
            EXPECT_GE(st.top_bits, 1);
            EXPECT_LE(std::size_t{n} >> st.top_bits, std::size_t{256}) << n;
            EXPECT_EQ(st.passes, 1 + (32 - st.top_bits + bits - 1) / bits);
            EXPECT_DOUBLE_EQ(st.bytes, 20.0 * static_cast<double>(n));
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, SortBuckets, ::testing::Values(1, 2, 3));

// Buckets sort stably by a bit range too (inside a bucket by insertion or LSD passes, which keep
// the order of equal keys), from buffers at any offset within a cache line.
TEST(SortBuckets, SortingByBitsKeepsTheOrderOfEqualDigits) {
  const std::size_t n = 65536 + 77;
  for (int threads : {1, 2}) {
    ct::Team& team = team_of(threads);
    for (auto [begin, end, bits] : {std::tuple{0, 4, 8}, std::tuple{8, 19, 4},
                                    std::tuple{20, 32, 11}, std::tuple{3, 27, 8}}) {
      for (std::size_t offset : {std::size_t{0}, std::size_t{5}}) {
        const auto input = keys_of(rs::Dist::uniform, n, 5);
        const std::uint32_t mask =
            static_cast<std::uint32_t>(((std::uint64_t{1} << (end - begin)) - 1) << begin);
        auto expect = input;
        std::stable_sort(expect.begin(), expect.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return (a & mask) < (b & mask); });
        std::vector<std::uint32_t> a(n + 16), b(n + 16);
        std::copy(input.begin(), input.end(), a.begin() + static_cast<std::ptrdiff_t>(offset));
        rs::Options o;
        o.method = rs::Method::buckets;
        o.bucket_bytes = 16384;
        o.begin_bit = begin;
        o.end_bit = end;
        o.digit_bits = bits;
        rs::Workspace ws;
        rs::Stats st;
        std::span<std::uint32_t> out;
        team.run([&](ct::ThreadCtx& t) {
          auto r = rs::sort(t, std::span<std::uint32_t>(a.data() + offset, n),
                            std::span<std::uint32_t>(b.data() + 16 - offset, n), ws, o, &st);
          if (t.is_leader()) out = r;
        });
        ASSERT_TRUE(std::equal(out.begin(), out.end(), expect.begin(), expect.end()))
            << "bits [" << begin << ", " << end << ") digit " << bits << " threads " << threads
            << " offset " << offset;
        // [0, 4) is narrower than one digit: a single lsd pass, no buckets.
        EXPECT_EQ(st.method, end - begin == 4 ? rs::Method::lsd : rs::Method::buckets)
            << "bits [" << begin << ", " << end << ")";
        // The result is where the last pass left it: tmp after the scatter and an even number of
        // passes inside the buckets, keys after an odd number.
        if (st.method == rs::Method::buckets) {
          const bool in_keys = (st.passes - 1) % 2 == 1;
          EXPECT_EQ(out.data(), in_keys ? a.data() + offset : b.data() + 16 - offset);
        }
      }
    }
  }
}

// Automatic: buckets when the array exceeds the caches below the last level (calibrate_bytes)
// and spans more than one digit; lsd otherwise.
TEST(SortBuckets, AutomaticTakesBucketsAboveTheCaches) {
  ct::Team& team = team_of(2);
  const std::size_t n = 200000;
  auto want = keys_of(rs::Dist::npb, n, 3);
  std::sort(want.begin(), want.end());
  for (std::size_t calibrate : {std::size_t{4} * n - 1, std::size_t{4} * n}) {
    for (int bits : {11, 16}) {
      rs::Options o;
      o.calibrate_bytes = calibrate;
      o.cache_bytes = calibrate;
      o.bucket_bytes = std::size_t{64} << 10;
      o.digit_bits = bits;
      auto k = keys_of(rs::Dist::npb, n, 3);
      const rs::Stats st = rs::sort(team, k, o);
      EXPECT_EQ(k, want);
      const bool above = 4 * n > calibrate;
      EXPECT_EQ(st.method, above ? rs::Method::buckets : rs::Method::lsd)
          << calibrate << " " << bits;
      if (above) {
        // 200000 keys, buckets of at most 2048 keys on average: 7 top bits; npb's bell peaks at
        // 8/3 of the mean, within the 8192 keys a bucket may hold. The other 25 bits take 3
        // passes of at most 11 or 12 bits (16-bit digits are capped inside a bucket).
        EXPECT_EQ(st.top_bits, 7);
        EXPECT_EQ(st.passes, 4);
        EXPECT_TRUE(st.streaming);  // past cache_bytes
      }
    }
  }
  rs::Options direct;
  direct.calibrate_bytes = 0;
  direct.stores = rs::Stores::direct;
  auto k = keys_of(rs::Dist::npb, n, 3);
  EXPECT_EQ(rs::sort(team, k, direct).method, rs::Method::lsd);  // direct: no buffers, no buckets
  EXPECT_EQ(k, want);
}

// Keys that share their top bits (a process's share of a distributed sort): the top digit is taken
// below the shared bits, so the buckets stay small and the passes cover only the bits that vary.
TEST(SortBuckets, SharedTopBitsAreLeftOut) {
  for (int threads : {1, 2}) {
    ct::Team& team = team_of(threads);
    const std::size_t n = 150000;
    auto input = keys_of(rs::Dist::uniform, n, 17);
    for (auto& k : input) k = 0x12340000u | (k & 0xFFFFu);  // 16 bits vary
    auto want = input;
    std::sort(want.begin(), want.end());
    rs::Options o;
    o.method = rs::Method::buckets;
    o.bucket_bytes = 32768;  // buckets of about 1024 keys: 8 top bits
    o.digit_bits = 11;
    auto k = input;
    const rs::Stats st = rs::sort(team, k, o);
    EXPECT_EQ(k, want);
    EXPECT_EQ(st.method, rs::Method::buckets);
    EXPECT_EQ(st.top_bits, 8);
    EXPECT_EQ(st.passes, 2);  // the top 8 of the 16 bits that vary, then the other 8 in one pass
    // Three counting reads (bits 24-31 shared, then 16-23, then the digit below), the scatter,
    // the buckets.
    EXPECT_DOUBLE_EQ(st.bytes, 4.0 * n * (3 + 4));
  }
}

// Keys in a narrow range that straddles a power of two (the middle process's share of a
// distributed sort): the used buckets share no leading bits, so the top digit widens instead;
// without that, buckets 32 times the planned size would send the sort back to lsd.
TEST(SortBuckets, ANarrowRangeAcrossAPowerOfTwoWidensTheTopDigit) {
  ct::Team& team = team_of(2);
  const std::size_t n = 150000;
  auto input = keys_of(rs::Dist::uniform, n, 23);
  for (auto& k : input) k = 0x7C000000u + (k >> 5);  // [0x7C000000, 0x84000000)
  auto want = input;
  std::sort(want.begin(), want.end());
  rs::Options o;
  o.method = rs::Method::buckets;
  o.bucket_bytes = 32768;  // planned: 8 top bits, about 586 keys a bucket; at most 4096
  auto k = input;
  const rs::Stats st = rs::sort(team, k, o);
  EXPECT_EQ(k, want);
  EXPECT_EQ(st.method, rs::Method::buckets);
  EXPECT_EQ(st.top_bits, 13);  // 8 of 256 buckets used: 5 bits wider
  EXPECT_EQ(st.passes, 3);     // the other 19 bits in two passes
  EXPECT_DOUBLE_EQ(st.bytes, 4.0 * n * (2 + 4));
}

// A bucket too big for the cache but not for the team (a value repeated 20000 times among 100000
// uniform keys) is sorted where it is, out of the cache; the byte model counts its passes. On 3
// threads the bucket is over half of one thread's share, and lsd sorts everything.
TEST(SortBuckets, ABucketTooBigForTheCacheIsSortedInPlaceOfAFallBack) {
  for (int threads : {1, 2, 3}) {
    ct::Team& team = team_of(threads);
    auto input = keys_of(rs::Dist::uniform, 120000, 31);
    for (std::size_t i = 0; i < input.size(); i += 6) input[i] = 0x89ABCDEFu;  // 20000 of them
    auto want = input;
    std::sort(want.begin(), want.end());
    rs::Options o;
    o.method = rs::Method::buckets;
    o.bucket_bytes = 16384;  // at most 2048 keys a bucket in the cache
    o.digit_bits = 11;
    auto k = input;
    const rs::Stats st = rs::sort(team, k, o);
    EXPECT_EQ(k, want) << threads;
    if (threads == 3) {  // 20390 keys are over half of a thread's 40000: the team's lsd instead
      EXPECT_EQ(st.method, rs::Method::lsd);
      continue;
    }
    EXPECT_EQ(st.method, rs::Method::buckets) << threads;
    // 120000 keys, 8 top bits; the bucket of 0x89 holds the 20000 and about 390 others; the other
    // 24 bits take 3 passes inside it (one skipped for the repeated value's bucket does not
    // change the model).
    EXPECT_EQ(st.top_bits, 8);
    EXPECT_GT(st.bytes, 4.0 * 120000 * 5 + 8.0 * 20000 * 3);
    EXPECT_LT(st.bytes, 4.0 * 120000 * 5 + 8.0 * 21000 * 3);
  }
}

// One workspace through many sorts: bucket sorts of one size calibrate the stores between the
// thresholds on their first four sorts (cached, streaming, streaming, cached) and keep the faster;
// a sort that falls back to lsd in between changes nothing; a sort of another size starts its own
// trials.
TEST(SortBuckets, OneWorkspaceCalibratesOnceAndSurvivesFallBacks) {
  for (int threads : {1, 2, 3}) {
    ct::Team& team = team_of(threads);
    rs::Workspace ws;
    rs::Options o;
    o.method = rs::Method::buckets;
    o.bucket_bytes = 16384;
    o.calibrate_bytes = 1024;
    o.cache_bytes = std::size_t{64} << 20;
    auto run = [&](std::vector<std::uint32_t> k) {
      std::vector<std::uint32_t> tmp(k.size());
      rs::Stats st;
      const std::span<std::uint32_t> out = sort_on(team, k, tmp, ws, o, &st);
      auto want = k;
      std::sort(want.begin(), want.end());
      EXPECT_TRUE(std::equal(out.begin(), out.end(), want.begin(), want.end())) << threads;
      return st;
    };
    const auto uniform = keys_of(rs::Dist::uniform, 70000, 4);
    rs::Stats st = run(uniform);
    EXPECT_EQ(st.method, rs::Method::buckets);
    EXPECT_TRUE(st.calibrated);
    EXPECT_FALSE(st.streaming);
    st = run(keys_of(rs::Dist::equal, 70000, 4));  // one bucket of everything: lsd
    EXPECT_EQ(st.method, rs::Method::lsd);
    // Trials 2 to 4 scatter streaming, streaming, cached; the fifth sort keeps the faster.
    for (bool want_streaming : {true, true, false}) {
      st = run(uniform);
      EXPECT_EQ(st.method, rs::Method::buckets);
      EXPECT_TRUE(st.calibrated);
      EXPECT_EQ(st.streaming, want_streaming);
    }
    EXPECT_NE(st.stores_reason.find("trial 4 of 4"), std::string::npos) << st.stores_reason;
    st = run(uniform);
    EXPECT_FALSE(st.calibrated);
    EXPECT_NE(st.stores_reason.find("timed on 4 of 4 trials"), std::string::npos)
        << st.stores_reason;
    const bool decided = st.streaming;
    for (std::uint64_t seed : {3u, 5u, 7u}) {
      st = run(keys_of(rs::Dist::npb, 70000, seed));
      EXPECT_EQ(st.method, rs::Method::buckets) << seed;
      EXPECT_FALSE(st.calibrated);
      EXPECT_EQ(st.streaming, decided);
    }
    st = run(keys_of(rs::Dist::uniform, 5000, 4));  // another size: its own first trial
    EXPECT_EQ(st.method, rs::Method::buckets);
    EXPECT_TRUE(st.calibrated);
    EXPECT_FALSE(st.streaming);
  }
}

}  // namespace
