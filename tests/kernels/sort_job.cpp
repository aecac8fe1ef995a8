// Radix sort on a real job: every rank of a compas-run job (P x T from the CTest variant) runs
// this. For every distribution, 64K keys (and odd and tiny counts) must come out globally sorted
// and verified, each process holding exactly its slice of std::sort's order of the whole
// sequence; all-equal keys must be spread evenly (ties split by position); a corrupted key must
// fail verification and say why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/kernels/test_hooks.hpp"
#include "../common/job_main.hpp"
#include "compas/compas.hpp"
#include "compas/kernels/sort_job.hpp"

namespace {

namespace rs = compas::kernels::sort;

// This process's part of the whole sequence, sorted: [offset, offset + mine) of std::sort's order.
void expect_slice_of_sorted(rs::Dist d, std::uint64_t n, const std::vector<std::uint32_t>& mine) {
  std::uint64_t offset = 0;
  const std::uint64_t count = mine.size();
  g_rt->run([&](compas::ThreadCtx& t) {
    const std::uint64_t before = g_rt->exclusive_scan(t, t.is_leader() ? count : std::uint64_t{0},
                                                      std::uint64_t{0}, compas::op::sum{});
    if (t.is_leader()) offset = before;
  });
  std::vector<std::uint32_t> all(n);
  rs::generate(d, n, 0, all);
  std::sort(all.begin(), all.end());
  ASSERT_LE(offset + count, n);
  EXPECT_TRUE(
      std::equal(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(offset)))
      << rs::to_string(d) << ": process " << g_rt->process() << " holds keys [" << offset << ", "
      << offset + count << ") that are not that slice of the sorted sequence";
}

TEST(SortJob, EveryDistributionSortsGloballyAndVerifies) {
  const int p = g_rt->processes();
  for (rs::Dist d : rs::all_dists()) {
    for (std::uint64_t n : {std::uint64_t{65536}, std::uint64_t{65536 + 13}}) {
      std::vector<std::uint32_t> out;
      rs::JobParams jp;
      jp.keys = n;
      jp.dist = d;
      jp.iters = 2;
      jp.output = &out;
      const rs::JobResult r = rs::run(*g_rt, jp);
      EXPECT_TRUE(r.verified) << rs::to_string(d) << " n=" << n << ": " << r.verification;
      EXPECT_EQ(r.keys, n);
      EXPECT_EQ(r.iteration_seconds.size(), 2u);
      EXPECT_GT(r.seconds, 0);
      EXPECT_LE(r.best_seconds, r.seconds);
      EXPECT_EQ(r.seconds, r.median_seconds);
      EXPECT_GT(r.bytes, 0);
      expect_slice_of_sorted(d, n, out);
      // Balance: splitters from the sample, ties split by position.
      const double share = static_cast<double>(n) / p;
      EXPECT_LE(static_cast<double>(r.max_keys), 1.3 * share + 1) << rs::to_string(d);
      if (d == rs::Dist::equal) {
        EXPECT_LE(r.max_keys - r.min_keys, 1u) << "all-equal keys are not spread evenly";
        EXPECT_EQ(r.passes, 0);  // one value: every local pass is skipped
      }
      if (d == rs::Dist::high) {
        EXPECT_LE(r.passes, 1);  // only the top digit varies
      }
    }
  }
}

TEST(SortJob, TinyCountsLeaveSomeProcessesEmptyAndStillSort) {
  for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{17}}) {
    for (rs::Dist d : {rs::Dist::uniform, rs::Dist::equal}) {
      std::vector<std::uint32_t> out;
      rs::JobParams jp;
      jp.keys = n;
      jp.dist = d;
      jp.output = &out;
      const rs::JobResult r = rs::run(*g_rt, jp);
      EXPECT_TRUE(r.verified) << n << " " << rs::to_string(d) << ": " << r.verification;
      expect_slice_of_sorted(d, n, out);
    }
  }
}

TEST(SortJob, EightBitDigitsAndCachedStoresSortToo) {
  rs::JobParams jp;
  jp.keys = 50000;
  jp.dist = rs::Dist::npb;
  jp.local.digit_bits = 8;
  jp.local.stores = rs::Stores::cached;
  std::vector<std::uint32_t> out;
  jp.output = &out;
  const rs::JobResult r = rs::run(*g_rt, jp);
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.digit_bits, 8);
  expect_slice_of_sorted(jp.dist, jp.keys, out);
}

TEST(SortJob, TheReceiveWindowGrowsWhenAProcessWouldGetMore) {
  for (rs::Dist d : {rs::Dist::uniform, rs::Dist::equal}) {
    rs::JobParams jp;
    jp.keys = 40000;
    jp.dist = d;
    jp.iters = 3;  // the first sort grows the window, the others reuse it
    jp.window_keys = 100;
    std::vector<std::uint32_t> out;
    jp.output = &out;
    const rs::JobResult r = rs::run(*g_rt, jp);
    EXPECT_TRUE(r.verified) << r.verification;
    expect_slice_of_sorted(d, jp.keys, out);
  }
}

TEST(SortJob, ACorruptedKeyFailsVerificationAndSaysWhy) {
  rs::JobParams jp;
  jp.keys = 65536;
  jp.dist = rs::Dist::uniform;
  compas::kernels::detail::TestHooks hooks;
  hooks.inject_fault = true;
  jp.test = &hooks;
  const rs::JobResult r = rs::run(*g_rt, jp);
  EXPECT_FALSE(r.verified);
  EXPECT_NE(r.verification.find("multiset of keys changed"), std::string::npos) << r.verification;
}

TEST(SortJob, BadParametersAreRejected) {
  rs::JobParams jp;
  jp.keys = 0;
  EXPECT_THROW(rs::run(*g_rt, jp), std::invalid_argument);
  jp.keys = 100;
  jp.iters = 0;
  EXPECT_THROW(rs::run(*g_rt, jp), std::invalid_argument);
  jp.iters = 1;
  jp.local.digit_bits = 40;
  EXPECT_THROW(rs::run(*g_rt, jp), std::invalid_argument);
  jp.local.digit_bits = 11;
  jp.keys = std::uint64_t{1} << 50;  // far more memory than any machine here
  EXPECT_THROW(rs::run(*g_rt, jp), std::invalid_argument);
}

}  // namespace
