// DistArray<T, 3> across real processes: every rank of a compas-run job (P = 1..4 and 8, so that
// a 2 x 2 x 2 grid has 26 distinct neighbours; threads 1 and 2; load/store and tcp) runs these
// cases. Each fills its owned cells with a function of the global index, marks every halo cell,
// exchanges, and checks every halo cell against the serial definition: the owner's value (the
// index wrapped in a periodic dimension), or still the mark beyond a non-periodic boundary.
// accumulate_halos() is checked against a brute-force serial sum over every process's halo cells,
// HaloExchange::test() by polling a begun exchange until it is done.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>

#include "../common/job_main.hpp"
#include "compas/port/dist_array3.hpp"

namespace {

using compas::index;
using Array = compas::DistArray<double, 3>;

constexpr double kMark = -1.0;

double value(index i, index j, index k, int step) {
  return static_cast<double>(i) * 1e6 + static_cast<double>(j) * 1e3 + static_cast<double>(k) +
         0.5 * step;
}

void fill(Array& u, int step) {
  const compas::Range3 w = u.with_halos(), o = u.owned();
  for (index i = w.planes.lo; i < w.planes.hi; ++i)
    for (index j = w.rows.lo; j < w.rows.hi; ++j)
      for (index k = w.cols.lo; k < w.cols.hi; ++k)
        u(i, j, k) = o.contains(i, j, k) ? value(i, j, k, step) : kMark;
}

// Halo cells (over every process) that differ from the definition; the first one in `first`.
long wrong_halos(Array& u, const std::array<bool, 3>& periodic, int step, std::string* first) {
  const compas::Range3 w = u.with_halos(), o = u.owned(), dom = u.domain();
  long bad = 0;
  for (index i = w.planes.lo; i < w.planes.hi; ++i)
    for (index j = w.rows.lo; j < w.rows.hi; ++j)
      for (index k = w.cols.lo; k < w.cols.hi; ++k) {
        if (o.contains(i, j, k)) continue;
        std::array<index, 3> g{i, j, k};
        bool beyond = false;
        for (int d = 0; d < 3; ++d) {
          const compas::Range r = dom.dim(d);
          if (r.contains(g[d])) continue;
          if (!periodic[d]) beyond = true;
          g[d] = r.lo + ((g[d] - r.lo) % r.size() + r.size()) % r.size();
        }
        const double want = beyond ? kMark : value(g[0], g[1], g[2], step);
        if (u(i, j, k) == want) continue;
        if (bad++ == 0 && first)
          *first = "process " + std::to_string(rt().process()) + ": (" + std::to_string(i) + ", " +
                   std::to_string(j) + ", " + std::to_string(k) + ") holds " +
                   std::to_string(u(i, j, k)) + ", not " + std::to_string(want);
      }
  return rt().allreduce(bad, compas::op::sum{});
}

void expect_exchange(compas::Range3 domain, compas::DistOptions3 o) {
  Array u(rt(), domain, o);
  for (int step = 0; step < 3; ++step) {  // both receive areas, and back to the first
    fill(u, step);
    u.exchange_halos();
    std::string first;
    EXPECT_EQ(wrong_halos(u, o.periodic, step, &first), 0) << "exchange " << step << ": " << first;
  }
}

TEST(DistArray3, EveryNeighbourNoBoundaryWraps) {
  expect_exchange({{0, 9}, {0, 10}, {0, 11}}, {});
}

TEST(DistArray3, PerDimensionHalosAndPeriodicity) {
  expect_exchange({{-3, 8}, {2, 14}, {0, 9}}, {.halo = {2, 1, 0}, .periodic = {true, false, true}});
  expect_exchange({{0, 8}, {0, 7}, {0, 12}}, {.halo = {1, 2, 1}, .periodic = {false, true, true}});
}

TEST(DistArray3, EveryDimensionPeriodicOnAnyGrid) {
  const int p = rt().processes();
  for (const std::array<int, 3>& grid : {std::array<int, 3>{p, 1, 1}, std::array<int, 3>{1, p, 1},
                                         std::array<int, 3>{1, 1, p}, std::array<int, 3>{0, 0, 0}})
    expect_exchange({{0, 8}, {0, 8}, {0, 8}},
                    {.halo = {1, 1, 1}, .periodic = {true, true, true}, .grid = grid});
}

TEST(DistArray3, DefaultGridCutsTheSlowestDimensionFirst) {
  Array u(rt(), 16, 16, 16);
  const int p = rt().processes();
  const std::array<int, 3> want = p == 2   ? std::array<int, 3>{2, 1, 1}
                                  : p == 4 ? std::array<int, 3>{2, 2, 1}
                                  : p == 8 ? std::array<int, 3>{2, 2, 2}
                                           : std::array<int, 3>{p, 1, 1};
  EXPECT_EQ(u.grid(), want);
}

TEST(DistArray3, OverlappedAndTeamForms) {
  const compas::DistOptions3 o{.halo = {1, 1, 1}, .periodic = {false, true, false}};
  Array u(rt(), {{0, 10}, {0, 9}, {0, 8}}, o);
  fill(u, 1);
  auto x = u.begin_exchange();
  x.wait();
  std::string first;
  EXPECT_EQ(wrong_halos(u, o.periodic, 1, &first), 0) << first;
  fill(u, 2);
  rt().run([&](compas::ThreadCtx& t) {
    u.exchange_halos(t);
    auto y = u.begin_exchange(t);
    y.wait(t);
  });
  EXPECT_EQ(wrong_halos(u, o.periodic, 2, &first), 0) << first;
}

// HaloExchange::test(): polled between blocks of interior work (one plane per poll, a short sleep
// after each false so that neighbours sharing the cores get to post), it says true within a
// bounded number of polls; wait() then returns with every halo in place. Funneled and team forms.
TEST(DistArray3, TestPushesABegunExchangeUntilItIsDone) {
  constexpr int kPolls = 200000;
  const int p = rt().processes();
  for (const std::array<int, 3>& grid :
       {std::array<int, 3>{p, 1, 1}, std::array<int, 3>{1, 1, p}, std::array<int, 3>{0, 0, 0}}) {
    const compas::DistOptions3 o{.halo = {1, 2, 1}, .periodic = {true, false, true}, .grid = grid};
    Array u(rt(), {{0, 2 * p + 2}, {0, 2 * p + 3}, {0, 2 * p + 1}}, o), v = u.like();
    for (int step = 0; step < 3; ++step) {
      fill(u, step);
      auto x = u.begin_exchange();
      index plane = u.planes().lo;
      int polls = 1;
      for (; polls <= kPolls; ++polls) {
        if (plane < u.planes().hi) {
          for (index j = u.rows().lo; j < u.rows().hi; ++j)
            for (index k = u.cols().lo; k < u.cols().hi; ++k) v(plane, j, k) = 2 * u(plane, j, k);
          ++plane;
        }
        if (x.test()) break;
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      ASSERT_LE(polls, kPolls) << "test() never said true";
      x.wait();
      EXPECT_TRUE(x.test()) << "after wait()";
      std::string first;
      EXPECT_EQ(wrong_halos(u, o.periodic, step, &first), 0)
          << "exchange " << step << ": " << first;
    }
    fill(u, 5);
    bool done = false;
    rt().run([&](compas::ThreadCtx& t) {
      auto x = u.begin_exchange(t);
      int n = 0;
      while (!x.test(t) && ++n < kPolls) std::this_thread::sleep_for(std::chrono::microseconds(50));
      const bool d = x.test(t);
      x.wait(t);
      if (t.is_leader()) done = d;
    });
    EXPECT_TRUE(done) << "test(t) never said true";
    std::string first;
    EXPECT_EQ(wrong_halos(u, o.periodic, 5, &first), 0) << "from the team: " << first;
  }
}

// accumulate_halos(): a halo cell (a, b, c) holds mark(a, b, c), an owned cell (i, j, k)
// own(i, j, k). Afterwards every owned cell must hold own plus the marks of every halo cell, on
// every process, that images it (wrapped in a periodic dimension; beyond a non-periodic boundary
// none), and every halo cell still its mark.
long own(index i, index j, index k) {
  return 1000000000L + i * 1000000 + j * 1000 + k;
}
long mark(index a, index b, index c) {
  return 1 + (a + 50) * 10000 + (b + 50) * 100 + (c + 50);
}

using Cell = std::tuple<index, index, index>;

// The serial reference: for every process's part (over `grid`), every halo cell's mark summed at
// its image.
std::map<Cell, long> halo_sums(compas::Range3 dom, std::array<int, 3> grid,
                               const compas::DistOptions3& o) {
  std::map<Cell, long> sum;
  for (int q = 0; q < grid[0] * grid[1] * grid[2]; ++q) {
    const std::array<int, 3> at{q / (grid[1] * grid[2]), q / grid[2] % grid[1], q % grid[2]};
    compas::Range3 part;
    for (int d = 0; d < 3; ++d) part.dim(d) = compas::block_of(dom.dim(d), grid[d], at[d]);
    for (index a = part.planes.lo - o.halo[0]; a < part.planes.hi + o.halo[0]; ++a)
      for (index b = part.rows.lo - o.halo[1]; b < part.rows.hi + o.halo[1]; ++b)
        for (index c = part.cols.lo - o.halo[2]; c < part.cols.hi + o.halo[2]; ++c) {
          if (part.contains(a, b, c)) continue;
          std::array<index, 3> g{a, b, c};
          bool beyond = false;
          for (int d = 0; d < 3; ++d) {
            const compas::Range r = dom.dim(d);
            if (r.contains(g[d])) continue;
            if (!o.periodic[d]) beyond = true;
            g[d] = r.lo + ((g[d] - r.lo) % r.size() + r.size()) % r.size();
          }
          if (!beyond) sum[{g[0], g[1], g[2]}] += mark(a, b, c);
        }
  }
  return sum;
}

// Cells of u (over every process) that differ from the reference; the first in `first`.
long wrong_sums(compas::DistArray<long, 3>& u, const std::map<Cell, long>& sum,
                std::string* first) {
  const compas::Range3 w = u.with_halos(), o = u.owned();
  long bad = 0;
  for (index i = w.planes.lo; i < w.planes.hi; ++i)
    for (index j = w.rows.lo; j < w.rows.hi; ++j)
      for (index k = w.cols.lo; k < w.cols.hi; ++k) {
        long want = mark(i, j, k);
        if (o.contains(i, j, k)) {
          const auto it = sum.find({i, j, k});
          want = own(i, j, k) + (it == sum.end() ? 0 : it->second);
        }
        if (u(i, j, k) == want) continue;
        if (bad++ == 0)
          *first = "process " + std::to_string(rt().process()) + ": (" + std::to_string(i) + ", " +
                   std::to_string(j) + ", " + std::to_string(k) + ") holds " +
                   std::to_string(u(i, j, k)) + ", not " + std::to_string(want);
      }
  return rt().allreduce(bad, compas::op::sum{});
}

void expect_accumulate(compas::Range3 dom, compas::DistOptions3 o, bool team) {
  compas::DistArray<long, 3> u(rt(), dom, o);
  const compas::Range3 w = u.with_halos(), mine = u.owned();
  for (int round = 0; round < 2; ++round) {  // both receive areas
    for (index i = w.planes.lo; i < w.planes.hi; ++i)
      for (index j = w.rows.lo; j < w.rows.hi; ++j)
        for (index k = w.cols.lo; k < w.cols.hi; ++k)
          u(i, j, k) = mine.contains(i, j, k) ? own(i, j, k) : mark(i, j, k);
    if (team)
      rt().run([&](compas::ThreadCtx& t) { u.accumulate_halos(t); });
    else
      u.accumulate_halos();
    std::string first;
    EXPECT_EQ(wrong_sums(u, halo_sums(dom, u.grid(), o), &first), 0)
        << "grid " << u.grid()[0] << " x " << u.grid()[1] << " x " << u.grid()[2] << ", halo "
        << o.halo[0] << ", " << o.halo[1] << ", " << o.halo[2] << ", periodic " << o.periodic[0]
        << o.periodic[1] << o.periodic[2] << (team ? ", team" : "") << ", round " << round << ": "
        << first;
  }
}

TEST(DistArray3, AccumulatedHalosAddIntoTheirOwners) {
  const int p = rt().processes();
  const compas::Range3 dom{{-3, 2 * p}, {2, 2 * p + 4}, {0, 2 * p + 1}};
  for (const std::array<int, 3>& grid : {std::array<int, 3>{p, 1, 1}, std::array<int, 3>{1, p, 1},
                                         std::array<int, 3>{1, 1, p}, std::array<int, 3>{0, 0, 0}})
    for (const std::array<index, 3>& halo :
         {std::array<index, 3>{1, 1, 1}, std::array<index, 3>{2, 1, 0}})
      for (const std::array<bool, 3>& periodic :
           {std::array<bool, 3>{false, false, false}, std::array<bool, 3>{true, true, true},
            std::array<bool, 3>{true, false, true}})
        for (bool team : {false, true})
          expect_accumulate(dom, {.halo = halo, .periodic = periodic, .grid = grid}, team);
}

// accumulate_halos() is for arithmetic elements only; a pending exchange refuses it.
template <class A>
concept CanAccumulate = requires(A& a) {
  a.accumulate_halos();
};
struct Pair {
  double a, b;
};
static_assert(CanAccumulate<compas::DistArray<double, 3>>);
static_assert(CanAccumulate<compas::DistArray<int, 3>>);
static_assert(!CanAccumulate<compas::DistArray<Pair, 3>>);

TEST(DistArray3, AccumulateWhileAnExchangeIsPendingIsRefused) {
  compas::DistArray<double, 3> u(rt(), 8, 8, 8);
  auto x = u.begin_exchange();
  try {
    u.accumulate_halos();
    ADD_FAILURE() << "accumulate_halos() ran while an exchange was pending";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("accumulate_halos() while an exchange of the array is "
                                         "pending"),
              std::string::npos)
        << e.what();
  }
  // The funneled test() from another thread than the Runtime's is refused, naming the call.
  std::string refused;
  std::thread other([&] {
    try {
      (void)x.test();
    } catch (const std::logic_error& e) {
      refused = e.what();
    }
  });
  other.join();
  EXPECT_NE(refused.find("HaloExchange::test()"), std::string::npos) << refused;
  x.wait();
}

TEST(DistArray3, SwapAndLike) {
  Array u(rt(), 6, 7, 8), v = u.like();
  fill(u, 3);
  fill(v, 4);
  swap(u, v);
  u.exchange_halos();
  std::string first;
  EXPECT_EQ(wrong_halos(u, {false, false, false}, 4, &first), 0) << first;
}

TEST(DistArray3, ArraysThatDifferBetweenProcessesAreNamed) {
  const int p = rt().processes(), me = rt().process();
  if (p == 1) GTEST_SKIP() << "needs two processes";
  try {
    Array u(rt(), 8, 8, me == p - 1 ? 9 : 8);
    FAIL() << "different arrays were accepted";
  } catch (const compas::CollectiveError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("rank 0 a 3-D [0, 8) x [0, 8) x [0, 8)"), std::string::npos) << m;
    EXPECT_NE(m.find("rank " + std::to_string(p - 1) + " a 3-D [0, 8) x [0, 8) x [0, 9)"),
              std::string::npos)
        << m;
  }
}

TEST(DistArray3, BadShapesAreNamed) {
  const int p = rt().processes();
  auto message = [](auto make) {
    try {
      make();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message([&] {
              Array u(rt(), 8, 8, 8, {.grid = {p + 1, 1, 1}});
            }).find("the sides must multiply to the " + std::to_string(p) + " processes"),
            std::string::npos);
  EXPECT_NE(message([&] {
              Array u(rt(), 8, 8, 8, {.halo = {1, -1, 1}});
            }).find("halo -1 of the rows: 0 or more is allowed"),
            std::string::npos);
  EXPECT_NE(message([&] {
              Array u(rt(), 8, 8, 8, {.halo = {1, 1, 9}, .periodic = {false, false, true}});
            }).find("halo 9 of the columns is wider than the smallest part"),
            std::string::npos);
  EXPECT_NE(message([&] {
              Array u(rt(), p - 1, 8, 8, {.grid = {p, 1, 1}});
            }).find("leave some process without any"),
            std::string::npos);
}

}  // namespace
