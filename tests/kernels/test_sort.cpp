// The local radix sort (kernels/sort.hpp): the same order as std::sort for every distribution,
// size (0, 1, small, odd, 64K and above the write-combining thresholds) and team size 1..3, with
// every store variant and both digit widths; stability of the scatter (sorting by some bits only
// keeps the order of keys equal there, as std::stable_sort does), also for buffers that do not
// start on a cache line; skipped passes; the key generators; and that verification's
// fingerprint and order check catch a corrupted output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/kernels/cg.hpp"
#include "compas/kernels/sort.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/topology.hpp"

namespace {

namespace ct = compas::threads;
namespace rs = compas::kernels::sort;

const ct::Topology& host() {
  static const ct::Topology t = ct::Topology::host();
  return t;
}

ct::Team& team_of(int threads) {
  const ct::Topology& topo = host();
  static std::map<int, std::unique_ptr<ct::Team>> teams;
  auto& t = teams[threads];
  if (!t) {
    ct::TeamOptions o;
    o.threads = threads;
    o.allow_oversubscribe = threads > host().pus();
    t = std::make_unique<ct::Team>(topo, o);
  }
  return *t;
}

std::vector<std::uint32_t> keys_of(rs::Dist d, std::size_t n, std::uint64_t seed = 7) {
  std::vector<std::uint32_t> k(n);
  rs::generate(d, n, 0, k, seed);
  return k;
}

// One sort of k on the team through a workspace the caller keeps (rs::sort(Team&) makes a new
// one each time); returns the span that holds the result (k's buffer or tmp's).
std::span<std::uint32_t> sort_on(ct::Team& team, std::vector<std::uint32_t>& k,
                                 std::vector<std::uint32_t>& tmp, rs::Workspace& ws,
                                 const rs::Options& o, rs::Stats* st = nullptr) {
  std::span<std::uint32_t> out;
  team.run([&](ct::ThreadCtx& t) {
    auto r = rs::sort(t, std::span<std::uint32_t>(k), std::span<std::uint32_t>(tmp), ws, o, st);
    if (t.is_leader()) out = r;
  });
  return out;
}

TEST(SortInput, ParseKeysTakesBinarySuffixes) {
  EXPECT_EQ(rs::parse_keys("1000"), 1000u);
  EXPECT_EQ(rs::parse_keys("64K"), 65536u);
  EXPECT_EQ(rs::parse_keys("4M"), 4u << 20);
  EXPECT_EQ(rs::parse_keys("4m"), 4u << 20);
  EXPECT_EQ(rs::parse_keys("256M"), 256u << 20);
  EXPECT_EQ(rs::parse_keys("1G"), std::uint64_t{1} << 30);
  for (const char* bad : {"", "0", "0K", "-1", "+5", "1.5M", "4MB", "4MiB", "M", "abc", "4 M",
                          "99999999999999999999", "17179869184G"}) {
    try {
      rs::parse_keys(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST(SortInput, ParseDistNamesTheAllowedValues) {
  for (rs::Dist d : rs::all_dists()) EXPECT_EQ(rs::parse_dist(rs::to_string(d)), d);
  try {
    rs::parse_dist("gauss");
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'gauss'"), std::string::npos) << m;
    EXPECT_NE(m.find("uniform"), std::string::npos) << m;
    EXPECT_NE(m.find("reverse"), std::string::npos) << m;
  }
}

TEST(SortInput, KeysDoNotDependOnHowTheSequenceIsSplit) {
  const std::size_t n = 10007;
  for (rs::Dist d : rs::all_dists()) {
    const auto whole = keys_of(d, n);
    std::vector<std::uint32_t> parts(n);
    for (std::size_t lo = 0; lo < n; lo += 997) {
      const std::size_t m = std::min<std::size_t>(997, n - lo);
      rs::generate(d, n, lo, std::span<std::uint32_t>(parts.data() + lo, m), 7);
    }
    EXPECT_EQ(parts, whole) << rs::to_string(d);
  }
}

TEST(SortInput, NpbKeysAreNpbIsKeyFormulaWithRandlc) {
  // NPB IS: key = k * (r1 + r2 + r3 + r4), k = MAX_KEY / 4, with MAX_KEY = 2^32 here.
  const std::size_t n = 3000;
  const auto keys = keys_of(rs::Dist::npb, n, rs::kDefaultSeed);
  double x = 314159265.0;
  const double a = 1220703125.0;
  for (std::size_t i = 0; i < n; ++i) {
    double s = compas::kernels::cg::randlc(&x, a);
    s += compas::kernels::cg::randlc(&x, a);
    s += compas::kernels::cg::randlc(&x, a);
    s += compas::kernels::cg::randlc(&x, a);
    ASSERT_EQ(keys[i], static_cast<std::uint32_t>(1073741824.0 * s)) << "key " << i;
  }
}

TEST(SortInput, DistributionsHaveTheirShape) {
  const std::size_t n = 5000;
  auto e = keys_of(rs::Dist::equal, n);
  EXPECT_TRUE(std::all_of(e.begin(), e.end(), [&](std::uint32_t k) { return k == e[0]; }));
  auto s = keys_of(rs::Dist::sorted, n);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  EXPECT_GT(s.back(), 0xF0000000u);
  auto r = keys_of(rs::Dist::reverse, n);
  EXPECT_TRUE(std::is_sorted(r.rbegin(), r.rend()));
  auto h = keys_of(rs::Dist::high, n);
  std::map<std::uint32_t, int> tops;
  for (std::uint32_t k : h) {
    EXPECT_EQ(k & 0xFFFFFFu, h[0] & 0xFFFFFFu);
    ++tops[k >> 24];
  }
  EXPECT_GT(tops.size(), 200u);
  auto u = keys_of(rs::Dist::uniform, n);
  std::sort(u.begin(), u.end());
  EXPECT_GT(std::unique(u.begin(), u.end()) - u.begin(), 4990);
}

struct Variant {
  int bits;
  rs::Stores stores;
};

class SortVsStdSort : public ::testing::TestWithParam<int> {};

TEST_P(SortVsStdSort, EveryDistributionSizeAndVariant) {
  const int threads = GetParam();
  ct::Team& team = team_of(threads);
  const std::vector<std::size_t> sizes = {0, 1, 2, 3, 15, 16, 17, 1000, 4099, 65536, 65537, 100003};
  const std::vector<Variant> variants = {{8, rs::Stores::automatic}, {11, rs::Stores::automatic},
                                         {8, rs::Stores::streaming}, {11, rs::Stores::streaming},
                                         {8, rs::Stores::cached},    {8, rs::Stores::direct},
                                         {5, rs::Stores::streaming}, {16, rs::Stores::cached}};
  for (rs::Dist d : rs::all_dists()) {
    for (std::size_t n : sizes) {
      const auto input = keys_of(d, n, n + 1);
      auto expect = input;
      std::sort(expect.begin(), expect.end());
      for (const Variant& v : variants) {
        rs::Options o;
        o.digit_bits = v.bits;
        o.stores = v.stores;
        auto got = input;
        const rs::Stats st = rs::sort(team, got, o);
        ASSERT_EQ(got, expect) << rs::to_string(d) << " n=" << n << " bits=" << v.bits
                               << " stores=" << to_string(v.stores);
        EXPECT_EQ(st.passes + st.skipped, n ? (32 + v.bits - 1) / v.bits : 0);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, SortVsStdSort, ::testing::Values(1, 2, 3));

// Sorting by some bits only must keep keys that are equal there in input order: the scatter is
// stable. Buffers start at every offset within a cache line.
TEST(SortStability, SortingByBitsKeepsTheOrderOfEqualDigits) {
  const std::size_t n = 65536 + 77;
  for (int threads : {1, 2, 3}) {
    ct::Team& team = team_of(threads);
    for (auto [begin, end, bits] : {std::tuple{0, 4, 8}, std::tuple{8, 19, 4},
                                    std::tuple{20, 32, 11}, std::tuple{3, 27, 8}}) {
      for (rs::Stores stores : {rs::Stores::streaming, rs::Stores::cached, rs::Stores::direct}) {
        for (std::size_t offset : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
          const auto input = keys_of(rs::Dist::uniform, n, 99);
          const std::uint32_t mask =
              static_cast<std::uint32_t>(((std::uint64_t{1} << (end - begin)) - 1) << begin);
          auto expect = input;
          std::stable_sort(expect.begin(), expect.end(), [&](std::uint32_t a, std::uint32_t b) {
            return (a & mask) < (b & mask);
          });
          std::vector<std::uint32_t> a(n + 16), b(n + 16);
          std::copy(input.begin(), input.end(), a.begin() + static_cast<std::ptrdiff_t>(offset));
          rs::Options o;
          o.begin_bit = begin;
          o.end_bit = end;
          o.digit_bits = bits;
          o.stores = stores;
          rs::Workspace ws;
          std::span<std::uint32_t> out;
          team.run([&](ct::ThreadCtx& t) {
            auto r = rs::sort(t, std::span<std::uint32_t>(a.data() + offset, n),
                              std::span<std::uint32_t>(b.data() + 16 - offset, n), ws, o);
            if (t.is_leader()) out = r;
          });
          ASSERT_TRUE(std::equal(out.begin(), out.end(), expect.begin(), expect.end()))
              << "bits [" << begin << ", " << end << ") digit " << bits << " threads " << threads
              << " stores " << to_string(stores) << " offset " << offset;
        }
      }
    }
  }
}

TEST(SortPasses, PassesWhoseDigitIsTheSameEverywhereAreSkipped) {
  ct::Team& team = team_of(2);
  rs::Options o8;
  o8.digit_bits = 8;
  auto e = keys_of(rs::Dist::equal, 50000);
  auto st = rs::sort(team, e, o8);
  EXPECT_EQ(st.passes, 0);
  EXPECT_EQ(st.skipped, 4);
  EXPECT_DOUBLE_EQ(st.bytes, 4.0 * 50000);  // the one counting read
  auto h = keys_of(rs::Dist::high, 50000);
  st = rs::sort(team, h, o8);
  EXPECT_EQ(st.passes, 1);  // only the top byte varies
  EXPECT_EQ(st.skipped, 3);
  EXPECT_DOUBLE_EQ(st.bytes, 4.0 * 50000 * 3);
  EXPECT_TRUE(std::is_sorted(h.begin(), h.end()));
  rs::Options o11;
  o11.digit_bits = 11;
  auto u = keys_of(rs::Dist::uniform, 50000);
  st = rs::sort(team, u, o11);
  EXPECT_EQ(st.passes, 3);
  EXPECT_EQ(st.skipped, 0);
  EXPECT_DOUBLE_EQ(st.bytes, 4.0 * 50000 * (1 + 2 * 3 + 2));  // two threads count again
  u = keys_of(rs::Dist::uniform, 50000);
  st = rs::sort(team_of(1), u, o11);
  EXPECT_EQ(st.passes, 3);
  EXPECT_DOUBLE_EQ(st.bytes, 4.0 * 50000 * (1 + 2 * 3));  // one thread: the first read's counts
  EXPECT_TRUE(std::is_sorted(u.begin(), u.end()));
}

TEST(SortPasses, TheResultIsInTheBufferTheLastPassWrote) {
  ct::Team& team = team_of(1);
  auto keys = keys_of(rs::Dist::uniform, 1000);
  std::vector<std::uint32_t> tmp(1000);
  rs::Workspace ws;
  for (int bits : {8, 11}) {
    auto k = keys;
    rs::Options o;
    o.digit_bits = bits;
    const std::span<std::uint32_t> out = sort_on(team, k, tmp, ws, o);
    EXPECT_EQ(out.data(), bits == 8 ? k.data() : tmp.data());  // 4 passes or 3
    EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
  }
}

// Automatic stores between the two thresholds: the first two sorts of a size time their first
// two passes (cached, streaming, then streaming, cached) and keep the faster; later sorts of that
// size (same workspace, same team) reuse the decision; either way the keys come out sorted. Outside
// the range nothing is timed.
TEST(SortPasses, AutomaticStoresCalibrateOnTheFirstSortsBetweenTheThresholds) {
  for (int threads : {1, 2}) {
    ct::Team& team = team_of(threads);
    const std::size_t n = 100000;
    std::vector<std::uint32_t> tmp(n);
    rs::Workspace ws;
    rs::Options o;
    o.method = rs::Method::lsd;
    o.digit_bits = 8;
    o.calibrate_bytes = 4 * n / 2;
    o.cache_bytes = 4 * n * 2;
    const auto want = [&] {
      auto k = keys_of(rs::Dist::uniform, n, 11);
      std::sort(k.begin(), k.end());
      return k;
    }();
    for (int round = 0; round < 3; ++round) {
      auto k = keys_of(rs::Dist::uniform, n, 11);
      rs::Stats st;
      const std::span<std::uint32_t> out = sort_on(team, k, tmp, ws, o, &st);
      EXPECT_EQ(st.calibrated, round < 2) << threads << " threads, sort " << round;
      EXPECT_NE(st.stores_reason.find(round == 0 ? "timed on 2 of 4" : "timed on 4 of 4"),
                std::string::npos)
          << st.stores_reason;
      EXPECT_EQ(st.passes, 4);
      ASSERT_TRUE(std::equal(out.begin(), out.end(), want.begin(), want.end()))
          << threads << " threads, sort " << round;
    }
    // Below the range: cached, above it: streaming, no timing.
    for (std::size_t calibrate : {4 * n, std::size_t{0}}) {
      rs::Options p = o;
      p.calibrate_bytes = calibrate;
      p.cache_bytes = calibrate == 0 ? 0 : 8 * n;
      auto k = keys_of(rs::Dist::uniform, n, 11);
      const auto st = rs::sort(team, k, p);
      EXPECT_FALSE(st.calibrated);
#if defined(__x86_64__)
      EXPECT_EQ(st.streaming, calibrate == 0);
#endif
      EXPECT_EQ(k, want);
    }
  }
}

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

TEST(SortPasses, BadOptionsAreRejected) {
  ct::Team& team = team_of(1);
  std::vector<std::uint32_t> k = {3, 1, 2};
  for (auto [bits, begin, end] : {std::tuple{0, 0, 32}, std::tuple{17, 0, 32}, std::tuple{8, 5, 4},
                                  std::tuple{8, -1, 32}, std::tuple{8, 0, 33}}) {
    rs::Options o;
    o.digit_bits = bits;
    o.begin_bit = begin;
    o.end_bit = end;
    EXPECT_THROW(rs::sort(team, k, o), std::invalid_argument);
  }
  rs::Options small;
  small.method = rs::Method::buckets;
  small.bucket_bytes = 1023;
  EXPECT_THROW(rs::sort(team, k, small), std::invalid_argument);
  small.bucket_bytes = (std::size_t{1} << 30) + 1;
  EXPECT_THROW(rs::sort(team, k, small), std::invalid_argument);
  EXPECT_EQ(rs::parse_method("buckets"), rs::Method::buckets);
  EXPECT_EQ(rs::parse_method("lsd"), rs::Method::lsd);
  EXPECT_EQ(rs::parse_method("auto"), rs::Method::automatic);
  try {
    rs::parse_method("msd");
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'msd'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("buckets"), std::string::npos) << e.what();
  }
  std::vector<std::uint32_t> tmp(2);
  rs::Workspace ws;
  EXPECT_THROW(team.run([&](ct::ThreadCtx& t) {
    rs::sort(t, std::span<std::uint32_t>(k), std::span<std::uint32_t>(tmp), ws);
  }),
               std::invalid_argument);
}

TEST(SortVerify, ACorruptedOutputIsCaught) {
  ct::Team& team = team_of(2);
  for (rs::Dist d : rs::all_dists()) {
    const auto input = keys_of(d, 20000);
    const rs::Fingerprint before = rs::fingerprint(input);
    auto out = input;
    rs::sort(team, out, {});
    EXPECT_EQ(rs::fingerprint(out), before);
    EXPECT_EQ(rs::first_unsorted(out), out.size());
    // One key changed, order kept: the multiset differs.
    auto changed = out;
    changed.back() += changed.back() == 0xFFFFFFFFu ? 0u : 1u;
    if (changed.back() == out.back()) changed.front() -= changed.front() ? 1u : 0u;
    ASSERT_NE(changed, out);
    EXPECT_TRUE(std::is_sorted(changed.begin(), changed.end()));
    EXPECT_NE(rs::fingerprint(changed), before) << rs::to_string(d);
    // Two keys swapped: the same multiset, out of order (unless they are equal).
    auto swapped = out;
    std::swap(swapped[100], swapped[19000]);
    EXPECT_EQ(rs::fingerprint(swapped), before);
    if (swapped[100] != swapped[19000]) {
      EXPECT_GT(rs::first_unsorted(swapped), 100u);
      EXPECT_LE(rs::first_unsorted(swapped), 19000u);
    }
  }
  // The fingerprint is a multiset's: the order does not matter, the multiplicity does.
  const std::vector<std::uint32_t> a = {1, 2, 2, 3}, b = {2, 3, 1, 2}, c = {1, 2, 3, 3};
  EXPECT_EQ(rs::fingerprint(a), rs::fingerprint(b));
  EXPECT_NE(rs::fingerprint(a), rs::fingerprint(c));
  EXPECT_EQ(rs::fingerprint(a) + rs::fingerprint(c), rs::fingerprint(b) + rs::fingerprint(c));
}

}  // namespace
