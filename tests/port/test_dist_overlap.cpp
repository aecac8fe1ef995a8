// Overlapping a halo exchange with work, across real processes (run with test_dist_array's
// ranks): begin_exchange() / wait(), and HaloExchange::test() pushing a begun exchange along.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
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

// An array whose begun exchange is pending: assigning another array to it is refused
// (std::logic_error naming the pending exchange, both arrays untouched, wait() completes it; the
// other array is a named one, destroyed normally: one destroyed while the error unwinds would
// leave the job's windows out of step, as any collective object destroyed by an exception does);
// moving it into another array or swapping it keeps the exchange, completed by wait() on the array
// that holds it now; destroying it completes the exchange first, after which wait() and test() on
// its handle do nothing. In 1-D, 2-D and 3-D. (wait() used to follow a pointer into the destroyed
// array's machinery and crash.)
template <class A>
void expect_pending_exchange_survives(A& u, A (*make)()) {
  const std::string refused = [&] {
    A other = make();
    auto x = u.begin_exchange();
    std::string what;
    try {
      u = std::move(other);
    } catch (const std::logic_error& e) {
      what = e.what();
    }
    x.wait();
    return what;
  }();
  EXPECT_NE(refused.find("assigned to while an exchange of the array is pending: wait() first"),
            std::string::npos)
      << refused;
  {
    auto x = u.begin_exchange();
    A moved(std::move(u));
    x.wait();  // the exchange of `moved`
    A other = make();
    swap(moved, other);
    auto y = other.begin_exchange();
    swap(moved, other);
    y.wait();  // the exchange of `moved` again
    u = std::move(moved);
  }
  compas::HaloExchange x;
  {
    A gone = make();
    x = gone.begin_exchange();
  }  // completes the exchange before the array goes
  EXPECT_TRUE(x.test());
  x.wait();
  u.exchange_halos();  // the job in step after
}

compas::DistArray<double> make1() {
  return compas::DistArray<double>(rt(), 4 * rt().processes(), {.periodic = true});
}
compas::DistArray<double, 2> make2() {
  return compas::DistArray<double, 2>(rt(), 3 * rt().processes(), 5, {.periodic = true});
}
compas::DistArray<double, 3> make3() {
  return compas::DistArray<double, 3>(rt(), 2 * rt().processes(), 3, 4,
                                      {.periodic = {true, true, true}});
}

TEST(DistArrayErrors, APendingExchangeOutlivesAssignmentMoveSwapAndDestruction) {
  auto u1 = make1();
  expect_pending_exchange_survives(u1, &make1);
  auto u2 = make2();
  expect_pending_exchange_survives(u2, &make2);
  auto u3 = make3();
  expect_pending_exchange_survives(u3, &make3);
}

}  // namespace
