// Team collectives against serial references, for team sizes 1, 2, 3, 4 and 7 (the larger ones
// oversubscribed on a small host), several types and operators, the large-type pointer path,
// long back-to-back sequences (span versions and block partitioning: test_collectives_spans.cpp).
//
// Every value a thread contributes is a function of (tid, iteration), so each thread computes
// the serial reference itself (a left fold in thread order) and records mismatches; the test
// thread asserts on the records after run().
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "collectives_cases.hpp"
#include "compas/threads/ops.hpp"
#include "compas/threads/team.hpp"
#include "host_topology.hpp"

using namespace threads_collectives_test;

TEST_P(Collectives, IntSumMaxMin) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  team.run([&](ct::ThreadCtx& ctx) {
    const int tid = ctx.thread();
    for (int it = 0; it < 40; ++it) {
      auto v = [it](int t) { return ival(t, it); };
      const int mine = v(tid);
      log.expect(ctx, ctx.allreduce(mine, op::sum{}) == fold_all<int>(n, v, op::sum{}),
                 at("allreduce sum", it));
      log.expect(ctx, ctx.allreduce(mine, op::max{}) == fold_all<int>(n, v, op::max{}),
                 at("allreduce max", it));
      log.expect(ctx, ctx.allreduce(mine, op::min{}) == fold_all<int>(n, v, op::min{}),
                 at("allreduce min", it));
      log.expect(ctx, ctx.allreduce(mine, IntHorner{}) == fold_all<int>(n, v, IntHorner{}),
                 at("allreduce ordered", it));
      const int root = it % n;
      const int r = ctx.reduce(mine, op::sum{}, root);
      if (tid == root) log.expect(ctx, r == fold_all<int>(n, v, op::sum{}), at("reduce sum", it));
      const int rh = ctx.reduce(mine, IntHorner{}, n - 1 - root);
      if (tid == n - 1 - root)
        log.expect(ctx, rh == fold_all<int>(n, v, IntHorner{}), at("reduce ordered", it));
      log.expect(ctx, ctx.broadcast(mine, root) == v(root), at("broadcast", it));
      log.expect(ctx, ctx.broadcast(mine) == v(0), at("broadcast root 0", it));
      log.expect(ctx, ctx.inclusive_scan(mine, op::sum{}) == fold_inclusive<int>(tid, v, op::sum{}),
                 at("inclusive_scan sum", it));
      log.expect(ctx,
                 ctx.inclusive_scan(mine, IntHorner{}) == fold_inclusive<int>(tid, v, IntHorner{}),
                 at("inclusive_scan ordered", it));
      log.expect(
          ctx, ctx.exclusive_scan(mine, 0, op::sum{}) == fold_exclusive<int>(tid, v, op::sum{}, 0),
          at("exclusive_scan sum", it));
      log.expect(ctx,
                 ctx.exclusive_scan(mine, INT_MIN, op::max{}) ==
                     fold_exclusive<int>(tid, v, op::max{}, INT_MIN),
                 at("exclusive_scan max", it));
      log.expect(
          ctx,
          ctx.exclusive_scan(mine, 5, IntHorner{}) == fold_exclusive<int>(tid, v, IntHorner{}, 5),
          at("exclusive_scan ordered", it));
    }
  });
  log.check();
}

TEST_P(Collectives, DoubleSumIsReproducible) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  constexpr int kRepeats = 30;
  constexpr int kValues = 4;
  // results[repeat][value set][tid]
  std::vector<std::array<std::array<double, 8>, kValues>> results(kRepeats);
  for (int rep = 0; rep < kRepeats; ++rep) {
    team.run([&](ct::ThreadCtx& ctx) {
      const int tid = ctx.thread();
      for (int it = 0; it < kValues; ++it) {
        auto v = [it](int t) { return dval(t, it); };
        const double all = ctx.allreduce(v(tid), op::sum{});
        results[static_cast<std::size_t>(rep)][static_cast<std::size_t>(it)]
               [static_cast<std::size_t>(tid)] = all;
        log.expect(ctx, same_bits(all, fold_all<double>(n, v, op::sum{})), at("allreduce", it));
        const double red = ctx.reduce(v(tid), op::sum{}, n - 1);
        if (tid == n - 1)
          log.expect(ctx, same_bits(red, fold_all<double>(n, v, op::sum{})), at("reduce", it));
        log.expect(ctx,
                   same_bits(ctx.inclusive_scan(v(tid), op::sum{}),
                             fold_inclusive<double>(tid, v, op::sum{})),
                   at("inclusive_scan", it));
        log.expect(ctx,
                   same_bits(ctx.exclusive_scan(v(tid), 0.0, op::sum{}),
                             fold_exclusive<double>(tid, v, op::sum{}, 0.0)),
                   at("exclusive_scan", it));
        log.expect(ctx, same_bits(ctx.broadcast(v(tid), n / 2), v(n / 2)), at("broadcast", it));
      }
    });
  }
  log.check();
  for (int rep = 1; rep < kRepeats; ++rep)
    for (int it = 0; it < kValues; ++it)
      for (int t = 0; t < n; ++t)
        EXPECT_TRUE(same_bits(results[static_cast<std::size_t>(rep)][static_cast<std::size_t>(it)]
                                     [static_cast<std::size_t>(t)],
                              results[0][static_cast<std::size_t>(it)][0]))
            << "repeat " << rep << " value set " << it << " tid " << t;
  // The mixed magnitudes make the order visible: a different order gives a different sum here.
  if (n >= 4) {
    auto v = [](int t) { return dval(t, 0); };
    double reversed = v(n - 1);
    for (int i = n - 2; i >= 0; --i) reversed = reversed + v(i);
    EXPECT_FALSE(same_bits(reversed, fold_all<double>(n, v, op::sum{})))
        << "test values do not detect the reduction order";
  }
}

TEST_P(Collectives, Uint64BitOps) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  team.run([&](ct::ThreadCtx& ctx) {
    const int tid = ctx.thread();
    for (int it = 0; it < 64; ++it) {
      auto v = [it](int t) { return uval(t, it); };
      log.expect(ctx,
                 ctx.allreduce(v(tid), op::bit_or{}) == fold_all<std::uint64_t>(n, v, op::bit_or{}),
                 at("allreduce or", it));
      log.expect(ctx,
                 ctx.allreduce(v(tid) | 1u, op::bit_and{}) ==
                     fold_all<std::uint64_t>(
                         n, [&](int t) { return v(t) | 1u; }, op::bit_and{}),
                 at("allreduce and", it));
      log.expect(ctx,
                 ctx.inclusive_scan(v(tid), op::bit_or{}) ==
                     fold_inclusive<std::uint64_t>(tid, v, op::bit_or{}),
                 at("inclusive_scan or", it));
      log.expect(ctx,
                 ctx.exclusive_scan(v(tid), std::uint64_t{0}, op::bit_or{}) ==
                     fold_exclusive<std::uint64_t>(tid, v, op::bit_or{}, std::uint64_t{0}),
                 at("exclusive_scan or", it));
      log.expect(ctx, ctx.broadcast(v(tid), (it + 1) % n) == v((it + 1) % n), at("broadcast", it));
    }
  });
  log.check();
}

TEST_P(Collectives, SmallStructCustomOp) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  team.run([&](ct::ThreadCtx& ctx) {
    const int tid = ctx.thread();
    const auto lambda = [](const Small& x, const Small& y) { return SmallOp{}(x, y); };
    for (int it = 0; it < 40; ++it) {
      auto v = [it](int t) { return sval(t, it); };
      log.expect(ctx, ctx.allreduce(v(tid), lambda) == fold_all<Small>(n, v, lambda),
                 at("allreduce", it));
      const Small r = ctx.reduce(v(tid), lambda, it % n);
      if (tid == it % n) log.expect(ctx, r == fold_all<Small>(n, v, lambda), at("reduce", it));
      log.expect(ctx, ctx.broadcast(v(tid), (it + 2) % n) == v((it + 2) % n), at("broadcast", it));
      log.expect(ctx, ctx.inclusive_scan(v(tid), lambda) == fold_inclusive<Small>(tid, v, lambda),
                 at("inclusive_scan", it));
      const Small id{1, -0.5};
      log.expect(
          ctx, ctx.exclusive_scan(v(tid), id, lambda) == fold_exclusive<Small>(tid, v, lambda, id),
          at("exclusive_scan", it));
    }
  });
  log.check();
}

TEST_P(Collectives, LargeStructPointerPath) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  team.run([&](ct::ThreadCtx& ctx) {
    const int tid = ctx.thread();
    const BigOp o;
    for (int it = 0; it < 30; ++it) {
      auto v = [it](int t) { return bval(t, it); };
      log.expect(ctx, ctx.allreduce(v(tid), o) == fold_all<Big>(n, v, o), at("allreduce", it));
      const Big mine = v(tid);
      const Big r = ctx.reduce(mine, o, (it + 1) % n);
      if (tid == (it + 1) % n)
        log.expect(ctx, r == fold_all<Big>(n, v, o), at("reduce", it));
      else
        log.expect(ctx, r == mine, at("reduce off root", it));
      log.expect(ctx, ctx.broadcast(mine, it % n) == v(it % n), at("broadcast", it));
      log.expect(ctx, ctx.inclusive_scan(mine, o) == fold_inclusive<Big>(tid, v, o),
                 at("inclusive_scan", it));
      Big id;
      id.fill(2.0);
      log.expect(ctx, ctx.exclusive_scan(mine, id, o) == fold_exclusive<Big>(tid, v, o, id),
                 at("exclusive_scan", it));
      // Sizes right at the slot boundary, both sides.
      auto e128 = [it](int t) { return eval<Edge128>(t, it); };
      auto e132 = [it](int t) { return eval<Edge132>(t, it); };
      log.expect(ctx,
                 same(ctx.allreduce(e128(tid), EdgeOp{}), fold_all<Edge128>(n, e128, EdgeOp{})),
                 at("allreduce 128 bytes", it));
      log.expect(ctx,
                 same(ctx.allreduce(e132(tid), EdgeOp{}), fold_all<Edge132>(n, e132, EdgeOp{})),
                 at("allreduce 132 bytes", it));
      log.expect(ctx,
                 same(ctx.exclusive_scan(e132(tid), e132(0), EdgeOp{}),
                      fold_exclusive<Edge132>(tid, e132, EdgeOp{}, e132(0))),
                 at("exclusive_scan 132 bytes", it));
      log.expect(ctx, same(ctx.broadcast(e128(tid), n - 1), e128(n - 1)),
                 at("broadcast 128 bytes", it));
    }
  });
  log.check();
}

// Many different collectives back to back, over every barrier algorithm: a collective that
// reuses its buffer too early shows up as a wrong result in a later one.
#if defined(__SANITIZE_THREAD__)
constexpr int kMixedIterations = 64;  // ThreadSanitizer: interleavings matter, not volume
#else
constexpr int kMixedIterations = 500;
#endif

TEST_P(Collectives, BackToBackMixedSequence) {
  const int n = threads();
  for (auto algorithm : {ct::BarrierAlgorithm::central, ct::BarrierAlgorithm::dissemination,
                         ct::BarrierAlgorithm::tree}) {
    ct::Team team(host(), team_options(n, algorithm));
    Log log(n);
    team.run([&](ct::ThreadCtx& ctx) {
      const int tid = ctx.thread();
      std::vector<long> arr(7);
      for (int it = 0; it < kMixedIterations; ++it) {
        auto iv = [it](int t) { return ival(t, it); };
        switch (it % 8) {
          case 0:
            log.expect(ctx,
                       ctx.allreduce(iv(tid), IntHorner{}) == fold_all<int>(n, iv, IntHorner{}),
                       at("allreduce int", it));
            break;
          case 1:
            log.expect(ctx, ctx.broadcast(iv(tid), it % n) == iv(it % n), at("broadcast int", it));
            break;
          case 2: {
            auto uv = [it](int t) { return uval(t, it); };
            log.expect(ctx,
                       ctx.inclusive_scan(uv(tid), op::bit_or{}) ==
                           fold_inclusive<std::uint64_t>(tid, uv, op::bit_or{}),
                       at("inclusive_scan u64", it));
            break;
          }
          case 3: {
            auto sv = [it](int t) { return sval(t, it); };
            const Small id{0, 0.0};
            log.expect(ctx,
                       ctx.exclusive_scan(sv(tid), id, SmallOp{}) ==
                           fold_exclusive<Small>(tid, sv, SmallOp{}, id),
                       at("exclusive_scan small", it));
            break;
          }
          case 4: {
            auto bv = [it](int t) { return bval(t, it); };
            const Big r = ctx.reduce(bv(tid), BigOp{}, n - 1);
            if (tid == n - 1)
              log.expect(ctx, r == fold_all<Big>(n, bv, BigOp{}), at("reduce big", it));
            break;
          }
          case 5: {
            for (std::size_t j = 0; j < arr.size(); ++j)
              arr[j] = ival(tid, it + static_cast<int>(j));
            ctx.allreduce(std::span<long>(arr), op::sum{});
            bool ok = true;
            for (std::size_t j = 0; j < arr.size(); ++j) {
              long expect = 0;
              for (int t = 0; t < n; ++t) expect += ival(t, it + static_cast<int>(j));
              ok = ok && arr[j] == expect;
            }
            log.expect(ctx, ok, at("span allreduce", it));
            break;
          }
          case 6: {
            auto dv = [it](int t) { return dval(t, it); };
            log.expect(
                ctx,
                same_bits(ctx.allreduce(dv(tid), op::sum{}), fold_all<double>(n, dv, op::sum{})),
                at("allreduce double", it));
            break;
          }
          case 7: {
            auto bv = [it](int t) { return bval(t, it); };
            log.expect(ctx, ctx.allreduce(bv(tid), BigOp{}) == fold_all<Big>(n, bv, BigOp{}),
                       at("allreduce big", it));
            break;
          }
        }
        // Every eighth step, a collective right after a plain barrier.
        if (it % 8 == 7) ctx.barrier();
        // Skew: some threads fall behind now and then, so fast threads run ahead into the next
        // collective while slow ones still read the previous one.
        if ((it * 7 + tid * 3) % 11 == 0)
          for (int k = 0; k < 20; ++k) std::this_thread::yield();
      }
    });
    log.check();
  }
}

// Collectives from consecutive runs of one team: state carried across run() must stay in step.
TEST_P(Collectives, AcrossRuns) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  for (int run = 0; run < 60; ++run) {
    team.run([&](ct::ThreadCtx& ctx) {
      auto v = [run](int t) { return ival(t, run); };
      // An odd number of slot collectives per run flips the parity between runs.
      log.expect(ctx,
                 ctx.allreduce(v(ctx.thread()), IntHorner{}) == fold_all<int>(n, v, IntHorner{}),
                 at("allreduce", run));
      if (run % 3 == 0)
        log.expect(ctx, ctx.broadcast(v(ctx.thread()), run % n) == v(run % n),
                   at("broadcast", run));
    });
  }
  log.check();
}

INSTANTIATE_TEST_SUITE_P(TeamSizes, Collectives, testing::Values(1, 2, 3, 4, 7),
                         [](const testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "threads";
                         });

TEST(Block, RangesPartitionEvenly) {
  for (std::size_t n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 100, 1000, 1001, 1023}) {
    for (int parts : {1, 2, 3, 4, 5, 7, 8, 16, 33}) {
      std::size_t next = 0, smallest = n + 1, largest = 0, previous = n + 1;
      for (int i = 0; i < parts; ++i) {
        const auto [lo, hi] = ct::block_range(n, parts, i);
        ASSERT_EQ(lo, next) << "n " << n << " parts " << parts << " part " << i;
        ASSERT_LE(lo, hi);
        const std::size_t size = hi - lo;
        EXPECT_LE(size, previous) << "larger parts first: n " << n << " parts " << parts;
        previous = size;
        smallest = std::min(smallest, size);
        largest = std::max(largest, size);
        next = hi;
      }
      EXPECT_EQ(next, n) << "n " << n << " parts " << parts;
      EXPECT_LE(largest - smallest, 1u) << "n " << n << " parts " << parts;
    }
  }
}
