// Halo calls that do not match across processes (every rank of a compas-run job runs these):
// accumulate_halos() on some processes against exchange_halos() or a begun exchange on others, in
// 1-D, 2-D and 3-D, and exchanges of two arrays begun in a different order. Each is refused on
// every process with the same CollectiveError naming both calls and arrays, before any cell
// moves; the arrays are in step after. (They used to return normally with owned and halo cells
// mixed up.)
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "../common/job_main.hpp"
#include "alike_errors.hpp"
#include "compas/compas.hpp"

namespace {

using compas::index;

const std::string kNumbered = " \\(numbered in the order the processes made them\\)";

// The error of `first` on process 0 against `other` on process `odd`, on one array (\1).
std::regex calls_differ(const std::string& first, const std::string& other, int odd) {
  return std::regex("compas::DistArray::" + first + ": process 0 calls DistArray::" + first +
                    " on DistArray #([0-9]+), process " + std::to_string(odd) +
                    " calls DistArray::" + other +
                    " on DistArray #\\1: every process makes the same calls in the same order");
}

// Every local cell, halos included, through f(cell): row by row.
template <class F>
void each_cell(compas::DistArray<double>& u, F f) {
  for (double& x : u.local_with_halos()) f(x);
}
template <class F>
void each_cell(compas::DistArray<double, 2>& u, F f) {
  const compas::Range2 w = u.with_halos();
  for (index i = w.rows.lo; i < w.rows.hi; ++i)
    for (index j = w.cols.lo; j < w.cols.hi; ++j) f(u(i, j));
}
template <class F>
void each_cell(compas::DistArray<double, 3>& u, F f) {
  const compas::Range3 w = u.with_halos();
  for (index i = w.planes.lo; i < w.planes.hi; ++i)
    for (index j = w.rows.lo; j < w.rows.hi; ++j)
      for (index k = w.cols.lo; k < w.cols.hi; ++k) f(u(i, j, k));
}

template <class A>
std::vector<double> cells_of(A& u) {
  std::vector<double> out;
  each_cell(u, [&](double& x) { out.push_back(x); });
  return out;
}

// accumulate_halos() on every process but the last, exchange_halos() (or begin_exchange() and
// wait()) on the last.
template <class A>
void expect_accumulate_against_exchange_refused(A& u) {
  const int odd = rt().processes() - 1;
  double next = 1 + 1e6 * rt().process();
  each_cell(u, [&](double& x) { x = next++; });
  const std::vector<double> before = cells_of(u);
  for (bool begun : {false, true}) {
    SCOPED_TRACE(begun ? "begin_exchange() on the last process" : "exchange_halos()");
    const std::string err = alike::error_of([&] {
      if (rt().process() != odd) return u.accumulate_halos();
      if (!begun) return u.exchange_halos();
      auto x = u.begin_exchange();
      x.wait();
    });
    EXPECT_TRUE(std::regex_match(err, calls_differ("accumulate_halos", "exchange_halos", odd)))
        << err;
    alike::expect_everywhere(err);
    EXPECT_EQ(cells_of(u), before) << "cells moved although the call was refused";
  }
  u.exchange_halos();  // in step after: both calls work on every process
  u.accumulate_halos();
}

TEST(DistMismatch, AccumulateAgainstExchangeIsRefusedEverywhere1D) {
  if (rt().processes() < 2) GTEST_SKIP() << "needs two processes";
  compas::DistArray<double> u(rt(), 4 * rt().processes(), {.periodic = true});
  expect_accumulate_against_exchange_refused(u);
}

TEST(DistMismatch, AccumulateAgainstExchangeIsRefusedEverywhere2D) {
  if (rt().processes() < 2) GTEST_SKIP() << "needs two processes";
  compas::DistArray<double, 2> u(rt(), 4 * rt().processes(), 6,
                                 {.periodic = true, .decomposition = compas::Decomposition::grid});
  expect_accumulate_against_exchange_refused(u);
}

TEST(DistMismatch, AccumulateAgainstExchangeIsRefusedEverywhere3D) {
  if (rt().processes() < 2) GTEST_SKIP() << "needs two processes";
  compas::DistArray<double, 3> u(rt(), 2 * rt().processes(), 4, 4,
                                 {.periodic = {true, true, true}});
  expect_accumulate_against_exchange_refused(u);
}

// Two arrays of one shape whose exchanges are begun in a different order on the last process: the
// first begin is refused everywhere naming both arrays, nothing is left pending, and the arrays
// exchange in step after.
TEST(DistMismatch, ExchangesOfTwoArraysBegunInADifferentOrderAreRefusedEverywhere) {
  if (rt().processes() < 2) GTEST_SKIP() << "needs two processes";
  const int odd = rt().processes() - 1;
  compas::DistArray<double> u(rt(), 4 * rt().processes(), {.periodic = true}), v = u.like();
  const bool crossed = rt().process() == odd;
  const std::string err = alike::error_of([&] {
    auto x = (crossed ? v : u).begin_exchange();
    auto y = (crossed ? u : v).begin_exchange();
    x.wait();
    y.wait();
  });
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      err, m,
      std::regex("compas::DistArray::exchange_halos: process 0 calls DistArray::exchange_halos on "
                 "DistArray #([0-9]+), process " +
                 std::to_string(odd) + " calls DistArray::exchange_halos on DistArray #([0-9]+)" +
                 kNumbered +
                 ": every process makes the same calls on the same objects in the same order")))
      << err;
  EXPECT_EQ(std::stoul(m[2]), std::stoul(m[1]) + 1) << err;  // v was made after u
  alike::expect_everywhere(err);
  u.exchange_halos();
  v.exchange_halos();
}

// A begun exchange on process 0 while the others make another collective (where a begin used to
// post at once and wait for nothing): refused on every process, naming both calls; nothing is
// left pending and the array exchanges in step after. In 2-D and 3-D.
template <class A>
void expect_begin_against_allgather_refused(A& u) {
  const std::string err = alike::error_of([&] {
    if (rt().process() != 0) return (void)compas::allgather(rt(), 1);
    auto x = u.begin_exchange();
    (void)x.test();
    x.wait();
  });
  EXPECT_EQ(err,
            "compas::DistArray::exchange_halos: process 0 calls DistArray::exchange_halos on "
            "DistArray #" +
                std::to_string(u.number()) +
                ", process 1 calls allgather: every process makes the same calls in the "
                "same order");
  alike::expect_everywhere(err);
  auto x = u.begin_exchange();
  x.wait();
}

TEST(DistMismatch, ABeginAgainstAnotherCollectiveIsRefusedEverywhere) {
  if (rt().processes() < 2) GTEST_SKIP() << "needs two processes";
  const index p = rt().processes();
  compas::DistArray<double, 2> u(rt(), 3 * p, 7, {.halo = 1, .periodic = true});
  expect_begin_against_allgather_refused(u);
  compas::DistArray<double, 3> w(rt(), 2 * p, 6, 5, {.periodic = {true, true, true}});
  expect_begin_against_allgather_refused(w);
}

}  // namespace
