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

#include "cg_internal.hpp"
#include "compas/kernels/sort.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/topology.hpp"
#include "sort_cases.hpp"

namespace {

namespace ct = compas::threads;
namespace rs = compas::kernels::sort;

using namespace sort_test;

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
