// DistArray<T, 3> across real processes: every rank of a compas-run job (P = 1..4 and 8, so that
// a 2 x 2 x 2 grid has 26 distinct neighbours; threads 1 and 2; load/store and tcp) runs these
// cases. Each fills its owned cells with a function of the global index, marks every halo cell,
// exchanges, and checks every halo cell against the serial definition: the owner's value (the
// index wrapped in a periodic dimension), or still the mark beyond a non-periodic boundary.
#include <gtest/gtest.h>

#include <array>
#include <stdexcept>
#include <string>

#include "../common/job_main.hpp"
#include "compas/runtime/dist_array3.hpp"

namespace {

using compas::index;
using Array = compas::DistArray<double, 3>;

compas::Runtime& rt() {
  return *g_rt;
}

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
