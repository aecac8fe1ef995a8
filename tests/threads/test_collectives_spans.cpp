// Team collectives on spans (allreduce, exclusive scan) and thread blocks against serial
// references, for the team sizes of test_collectives.cpp (same fixture, collectives_cases.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "collectives_cases.hpp"

using namespace threads_collectives_test;

// ---- span versions ----------------------------------------------------------------------------

namespace {

double span_dval(int tid, std::size_t j) {
  return dval(tid, static_cast<int>(j % 17)) + static_cast<double>(j);
}
long span_lval(int tid, std::size_t j) {
  return static_cast<long>((tid * 31 + static_cast<int>(j) * 7) % 101) - 50;
}
struct LongHorner {
  long operator()(long a, long b) const { return a * 3 + b; }
};

}  // namespace

TEST_P(Collectives, SpanAllreduce) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  team.run([&](ct::ThreadCtx& ctx) {
    const int tid = ctx.thread();
    for (int rep = 0; rep < 3; ++rep) {
      for (std::size_t size :
           {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{1000}, std::size_t{3}}) {
        std::vector<double> d(size);
        std::vector<long> l(size);
        for (std::size_t j = 0; j < size; ++j) {
          d[j] = span_dval(tid, j);
          l[j] = span_lval(tid, j);
        }
        ctx.allreduce(std::span<double>(d), op::sum{});
        ctx.allreduce(std::span<long>(l), LongHorner{});
        bool dok = true, lok = true;
        for (std::size_t j = 0; j < size; ++j) {
          dok = dok && same_bits(d[j], fold_all<double>(
                                           n, [j](int t) { return span_dval(t, j); }, op::sum{}));
          lok = lok && l[j] == fold_all<long>(
                                   n, [j](int t) { return span_lval(t, j); }, LongHorner{});
        }
        log.expect(ctx, dok, "double sum, size " + std::to_string(size));
        log.expect(ctx, lok, "ordered long, size " + std::to_string(size));
      }
    }
  });
  log.check();
}

TEST_P(Collectives, SpanExclusiveScan) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  team.run([&](ct::ThreadCtx& ctx) {
    const int tid = ctx.thread();
    for (int rep = 0; rep < 3; ++rep) {
      for (std::size_t size :
           {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{1000}, std::size_t{2}}) {
        std::vector<double> d(size);
        std::vector<long> l(size);
        for (std::size_t j = 0; j < size; ++j) {
          d[j] = span_dval(tid, j);
          l[j] = span_lval(tid, j);
        }
        ctx.exclusive_scan(std::span<double>(d), 0.0, op::sum{});
        ctx.exclusive_scan(std::span<long>(l), 7L, LongHorner{});
        bool dok = true, lok = true;
        for (std::size_t j = 0; j < size; ++j) {
          dok = dok &&
                same_bits(d[j], fold_exclusive<double>(
                                    tid, [j](int t) { return span_dval(t, j); }, op::sum{}, 0.0));
          lok = lok && l[j] == fold_exclusive<long>(
                                   tid, [j](int t) { return span_lval(t, j); }, LongHorner{}, 7L);
        }
        log.expect(ctx, dok, "double sum, size " + std::to_string(size));
        log.expect(ctx, lok, "ordered long, size " + std::to_string(size));
      }
    }
  });
  log.check();
}

// ---- blocks -----------------------------------------------------------------------------------

TEST_P(Collectives, ThreadBlocksPartitionTheRange) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  const std::vector<std::size_t> sizes = {0, 1, 2, 3, 6, 7, 8, 13, 100, 1001};
  // ranges[size index][tid]
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> ranges(
      sizes.size(), std::vector<std::pair<std::size_t, std::size_t>>(static_cast<std::size_t>(n)));
  team.run([&](ct::ThreadCtx& ctx) {
    for (std::size_t s = 0; s < sizes.size(); ++s)
      ranges[s][static_cast<std::size_t>(ctx.thread())] = ctx.block(sizes[s]);
  });
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    std::size_t next = 0;
    for (int t = 0; t < n; ++t) {
      const auto [lo, hi] = ranges[s][static_cast<std::size_t>(t)];
      EXPECT_EQ(lo, next) << "size " << sizes[s] << " tid " << t;
      EXPECT_LE(lo, hi);
      EXPECT_EQ(ranges[s][static_cast<std::size_t>(t)], ct::block_range(sizes[s], n, t));
      next = hi;
    }
    EXPECT_EQ(next, sizes[s]);
  }
}
