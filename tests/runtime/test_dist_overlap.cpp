// Overlapping a halo exchange with work, across real processes (run with test_dist_array's
// ranks): begin_exchange() / wait(), and HaloExchange::test() pushing a begun exchange along.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "dist_array_values.hpp"

namespace {

// begin_exchange(), work on another array, wait(): the same halos and corners as exchange_halos,
// funneled and from every thread of the team, over rows and over the grid.
TEST(DistArray2, ABegunExchangeCompletesAtWait) {
  const index p = rt().processes();
  const Range2 d{{0, 3 * p + 2}, {0, 4 * p + 1}};
  for (auto dec : {compas::Decomposition::rows, compas::Decomposition::grid})
    for (bool periodic : {false, true}) {
      DistArray<double, 2> u(rt(), d, {.halo = 2, .periodic = periodic, .decomposition = dec});
      auto v = u.like();
      for (int k = 1; k <= 3; ++k) {
        fill_owned(u, k);
        auto x = u.begin_exchange();
        for (index i = u.rows().lo; i < u.rows().hi; ++i)  // the interior's work meanwhile
          for (index j = u.cols().lo; j < u.cols().hi; ++j) v(i, j) = 2 * u(i, j);
        x.wait();
        ASSERT_EQ(wrong_halos(u, periodic, k), 0) << "funneled, exchange " << k;
      }
      for (int k = 4; k <= 6; ++k) {
        int wrong = 0;
        rt().run([&](compas::ThreadCtx& t) {
          if (t.is_leader()) fill_owned(u, k);
          auto x = u.begin_exchange(t);
          rt().parallel_for(t, u.owned(), [&](index i, index j) { v(i, j) = 2 * u(i, j); });
          x.wait(t);
          if (t.is_leader()) wrong = wrong_halos(u, periodic, k);
        });
        ASSERT_EQ(wrong, 0) << "from the team, exchange " << k;
      }
      // Destroyed without wait(): it waits; the next exchange finds nothing pending.
      fill_owned(u, 7);
      { auto x = u.begin_exchange(); }
      EXPECT_EQ(wrong_halos(u, periodic, 7), 0);
    }
}

// Polls x.test() between blocks of work on v until it says true: at most kTestPolls times, a short
// sleep after each false (so that neighbours sharing the cores get to post). Returns the polls.
constexpr int kTestPolls = 200000;

template <class Exchange, class Work>
int poll_until_done(Exchange& x, Work work) {
  for (int n = 1; n <= kTestPolls; ++n) {
    work();
    if (x.test()) return n;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return -1;
}

// HaloExchange::test(): a begun exchange polled between blocks of interior work becomes done
// (true) within a bounded number of polls; wait() then returns with the halos in place, and test()
// after wait() is true. Funneled and from every thread of the team, over rows and over the grid.
TEST(DistArray2, TestPushesABegunExchangeUntilItIsDone) {
  const index p = rt().processes();
  const Range2 d{{0, 3 * p + 2}, {0, 4 * p + 1}};
  for (auto dec : {compas::Decomposition::rows, compas::Decomposition::grid})
    for (bool periodic : {false, true}) {
      DistArray<double, 2> u(rt(), d, {.halo = 2, .periodic = periodic, .decomposition = dec});
      auto v = u.like();
      for (int k = 1; k <= 3; ++k) {
        fill_owned(u, k);
        auto x = u.begin_exchange();
        index row = u.rows().lo;
        const int polls = poll_until_done(x, [&] {  // one interior row per poll
          if (row >= u.rows().hi) return;
          for (index j = u.cols().lo; j < u.cols().hi; ++j) v(row, j) = 2 * u(row, j);
          ++row;
        });
        ASSERT_GT(polls, 0) << "test() never said true in " << kTestPolls << " polls";
        x.wait();
        EXPECT_TRUE(x.test()) << "after wait()";
        ASSERT_EQ(wrong_halos(u, periodic, k), 0) << "funneled, exchange " << k;
      }
      int wrong = 0, polls = 0;
      rt().run([&](compas::ThreadCtx& t) {
        if (t.is_leader()) fill_owned(u, 4);
        auto x = u.begin_exchange(t);
        int n = 1;
        while (!x.test(t) && n < kTestPolls) {
          ++n;
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
        const bool done = x.test(t);
        x.wait(t);
        if (t.is_leader()) {
          polls = done ? n : -1;
          wrong = wrong_halos(u, periodic, 4);
        }
      });
      ASSERT_GT(polls, 0) << "test(t) never said true in " << kTestPolls << " polls";
      ASSERT_EQ(wrong, 0) << "from the team";
    }
}

}  // namespace
