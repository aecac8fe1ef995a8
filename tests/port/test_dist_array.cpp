// DistArray and the range loops, across real processes: every rank of a compas-run job runs this
// program (P x T from the CTest variant; alone it is P = 1), every test is collective. Halo cells
// are checked against the global function every owner wrote, for 1-D and 2-D arrays, halos of 1
// and 2, uneven parts, periodic or not, exchanged funneled and from every thread.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../common/job_main.hpp"
#include "compas/compas.hpp"
#include "dist_array_values.hpp"

namespace {

using compas::DistArray;
using compas::DistOptions;
using compas::index;
using compas::Range;
using compas::Range2;

// The value a cell holds after exchange k: distinct per global index and per exchange.
double f1(index i, int k) {
  return static_cast<double>(i) * 10 + k * 1e6;
}

// What halo cell i must hold after exchange k: the owner's value, or kUnset past a boundary.
double expected1(index i, Range d, bool periodic, int k) {
  if (d.contains(i)) return f1(i, k);
  return periodic ? f1(wrap(i, d), k) : kUnset;
}

void fill1(DistArray<double>& u, int k) {
  for (index i = u.with_halos().lo; i < u.with_halos().hi; ++i)
    u[i] = u.owned().contains(i) ? f1(i, k) : kUnset;
}

// Checks every cell of u's local part and halos; returns the number of wrong cells.
int check1(DistArray<double>& u, bool periodic, int k) {
  int wrong = 0;
  for (index i = u.with_halos().lo; i < u.with_halos().hi; ++i) {
    const double want = expected1(i, u.domain(), periodic, k);
    if (u[i] != want && ++wrong <= 3)
      ADD_FAILURE() << "rank " << rt().process() << " cell " << i << " holds " << u[i] << ", want "
                    << want << " (exchange " << k << ")";
  }
  return wrong;
}

struct Case1 {
  Range domain;
  index halo;
  bool periodic;
};

TEST(DistArray1, HalosHoldTheNeighboursCellsFunneled) {
  const index p = rt().processes();
  for (const Case1& c : {Case1{{0, 10 * p + 3}, 1, false}, Case1{{1, 10 * p + 1}, 1, true},
                         Case1{{-5, 4 * p + 1}, 2, false}, Case1{{3, 2 * p + 4}, 2, true}}) {
    DistArray<double> u(rt(), c.domain, {.halo = c.halo, .periodic = c.periodic});
    EXPECT_EQ(u.domain(), c.domain);
    EXPECT_EQ(u.owned(), compas::block_of(c.domain, p, rt().process()));
    for (int k = 1; k <= 3; ++k) {  // values change every exchange: stale cells are caught
      fill1(u, k);
      u.exchange_halos();
      ASSERT_EQ(check1(u, c.periodic, k), 0) << "domain [" << c.domain.lo << ", " << c.domain.hi
                                             << ") halo " << c.halo << " periodic " << c.periodic;
    }
  }
}

TEST(DistArray1, HalosHoldTheNeighboursCellsFromEveryThread) {
  const index p = rt().processes();
  for (bool periodic : {false, true}) {
    DistArray<double> u(rt(), 7 * p + 2, {.halo = 2, .periodic = periodic});
    for (int k = 1; k <= 4; ++k) {
      int wrong = 0;
      rt().run([&](compas::ThreadCtx& t) {
        rt().parallel_for(t, u.owned(), [&](index i) { u[i] = f1(i, k); });
        if (t.is_leader())
          for (index i = u.with_halos().lo; i < u.with_halos().hi; ++i)
            if (!u.owned().contains(i)) u[i] = kUnset;
        u.exchange_halos(t);
        if (t.is_leader()) wrong = check1(u, periodic, k);
      });
      ASSERT_EQ(wrong, 0) << "periodic " << periodic << " exchange " << k;
    }
  }
}

// A process may run one exchange ahead of its neighbour (it has what it needs once the neighbour
// has sent): its next edge must not overwrite cells the neighbour has not taken yet. Many
// exchanges of one array in place, values changing every time, ranks at different speeds.
TEST(DistArray1, ManyExchangesInPlaceNeverMixEpochs) {
  DistArray<double> u(rt(), 3 * rt().processes(), {.periodic = true});
  for (int k = 1; k <= 300; ++k) {
    fill1(u, k);
    if ((k + rt().process()) % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    u.exchange_halos();
    ASSERT_EQ(check1(u, true, k), 0) << "exchange " << k;
  }
}

// Two arrays swapped in a time loop keep their own halos and epochs: a 3-point average whose
// result is compared with the same loop run serially over the whole domain.
TEST(DistArray1, SwappedArraysInATimeLoopMatchTheSerialLoop) {
  const index n = 13 * rt().processes() + 5;
  for (bool periodic : {false, true}) {
    DistArray<double> u(rt(), n, {.periodic = periodic}), v(rt(), n, {.periodic = periodic});
    std::vector<double> su(static_cast<std::size_t>(n + 2), 0.0), sv = su;  // serial, 1 halo
    for (index i = 0; i < n; ++i) su[static_cast<std::size_t>(i + 1)] = std::sin(0.3 * i) + 2;
    for (index i = u.lo(); i < u.hi(); ++i) u[i] = su[static_cast<std::size_t>(i + 1)];
    u[u.lo() - 1] = u[u.hi()] = 0;  // the fixed boundary when not periodic
    for (int s = 0; s < 9; ++s) {
      u.exchange_halos();
      rt().parallel_for(u.owned(), [&](index i) { v[i] = (u[i - 1] + 2 * u[i] + u[i + 1]) / 4; });
      swap(u, v);
      if (periodic) {
        su[0] = su[static_cast<std::size_t>(n)];
        su[static_cast<std::size_t>(n + 1)] = su[1];
      }
      for (std::size_t i = 1; i <= static_cast<std::size_t>(n); ++i)
        sv[i] = (su[i - 1] + 2 * su[i] + su[i + 1]) / 4;
      std::swap(su, sv);
    }
    for (index i = u.lo(); i < u.hi(); ++i)
      ASSERT_EQ(u[i], su[static_cast<std::size_t>(i + 1)]) << "periodic " << periodic << " i " << i;
    const double sum =
        rt().transform_reduce(u.owned(), 0.0, compas::op::sum{}, [&](index i) { return u[i]; });
    double want = 0;
    for (std::size_t i = 1; i <= static_cast<std::size_t>(n); ++i) want += su[i];
    EXPECT_NEAR(sum, want, 1e-12 * std::fabs(want));
  }
}

int run2(DistArray<double, 2>& u, bool periodic, int k, compas::ThreadCtx* t) {
  const Range2 all = u.with_halos();
  auto fill = [&] {
    for (index i = all.rows.lo; i < all.rows.hi; ++i)
      for (index j = all.cols.lo; j < all.cols.hi; ++j)
        u(i, j) = u.owned().contains(i, j) ? f2(i, j, k) : kUnset;
  };
  if (t) {
    if (t->is_leader()) fill();
    u.exchange_halos(*t);
    if (!t->is_leader()) return 0;
  } else {
    fill();
    u.exchange_halos();
  }
  int wrong = 0;
  for (index i = all.rows.lo; i < all.rows.hi; ++i)
    for (index j = all.cols.lo; j < all.cols.hi; ++j) {
      // Corners past a non-periodic boundary in one direction only are the neighbour's halo: the
      // value there is what the neighbour holds, kUnset.
      const double want = expected2(i, j, u.domain(), periodic, k);
      if (u(i, j) != want && ++wrong <= 3)
        ADD_FAILURE() << "rank " << rt().process() << " cell (" << i << ", " << j << ") holds "
                      << u(i, j) << ", want " << want << " (exchange " << k << ")";
    }
  return wrong;
}

TEST(DistArray2, HalosAndCornersHoldTheNeighboursCells) {
  const index p = rt().processes();
  for (auto dec : {compas::Decomposition::rows, compas::Decomposition::grid})
    for (index halo : {1, 2})
      for (bool periodic : {false, true}) {
        const Range2 d{{2, 2 + 3 * p + 1}, {-1, 3 * p + 4}};
        DistArray<double, 2> u(rt(), d, {.halo = halo, .periodic = periodic, .decomposition = dec});
        const std::string what = std::string(dec == compas::Decomposition::rows ? "rows" : "grid") +
                                 " halo " + std::to_string(halo) + (periodic ? " periodic" : "");
        EXPECT_EQ(u.domain(), d);
        EXPECT_EQ(u.with_halos().rows.size(), u.rows().size() + 2 * halo) << what;
        // The first owned element of every row starts a 64-byte line.
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&u(u.rows().lo, u.cols().lo)) % 64, 0u) << what;
        EXPECT_EQ(u.pitch() % 8, 0) << what;
        for (int k = 1; k <= 3; ++k) ASSERT_EQ(run2(u, periodic, k, nullptr), 0) << what;
        for (int k = 4; k <= 5; ++k) {
          int wrong = 0;
          rt().run([&](compas::ThreadCtx& t) {
            const int w = run2(u, periodic, k, &t);
            if (t.is_leader()) wrong = w;
          });
          ASSERT_EQ(wrong, 0) << what << " (from every thread)";
        }
      }
}

TEST(DistArrayErrors, ASecondBeginWhileOneIsPendingOrFromAnotherThreadIsRefused) {
  DistArray<double, 2> u(rt(), 4 * rt().processes(), 8);
  auto x = u.begin_exchange();
  try {
    auto y = u.begin_exchange();
    ADD_FAILURE() << "a second exchange began while one was pending";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("while an exchange of the array is pending"),
              std::string::npos)
        << e.what();
  }
  x.wait();
  bool refused = false;
  std::thread other([&] {
    try {
      auto z = u.begin_exchange();
    } catch (const std::logic_error&) {
      refused = true;
    }
  });
  other.join();
  EXPECT_TRUE(refused);
}

// How many processes' cells (owned or halo, a halo past a periodic edge wrapping round) stand for
// global cell (i, j) of d, over a grid of gr x gc processes with halo h: what accumulate_halos()
// of an array holding 1 everywhere leaves there.
int coverage(index i, index j, Range2 d, int gr, int gc, index h, bool periodic) {
  int n = 0;
  for (int q = 0; q < gr * gc; ++q) {
    const Range rows = compas::block_of(d.rows, gr, q / gc),
                cols = compas::block_of(d.cols, gc, q % gc);
    for (index a = rows.lo - h; a < rows.hi + h; ++a)
      for (index b = cols.lo - h; b < cols.hi + h; ++b) {
        if (!periodic && !d.contains(a, b)) continue;
        if (wrap(a, d.rows) == i && wrap(b, d.cols) == j) ++n;
      }
  }
  return n;
}

// accumulate_halos(): every halo cell is added into the cell it mirrors at its owner, corners and
// periodic images included, funneled and from the team; halo cells keep their values.
// A padded row is the widest part's columns with their halos rounded up to whole 64-byte lines,
// no more: 6 columns and halo 1 take one line of doubles, 7 take two.
TEST(DistArray2, APaddedRowIsItsWidthRoundedUpToWholeLines) {
  const index p = rt().processes();
  for (index cols : {6, 7, 14, 15, 30}) {
    DistArray<double, 2> u(rt(), Range2{{0, 4 * p}, {0, cols}},
                           {.halo = 1, .decomposition = compas::Decomposition::rows});
    EXPECT_EQ(u.pitch(), (cols + 2 + 7) / 8 * 8) << cols << " columns";
  }
}

TEST(DistArray2, AccumulatedHalosAddIntoTheirOwners) {
  const int p = rt().processes();
  const Range2 d{{0, 3 * p + 1}, {0, 2 * p + 3}};
  for (compas::ProcessGrid g : {compas::ProcessGrid{p, 1}, compas::ProcessGrid{1, p}})
    for (index h : {1, 2})
      for (bool periodic : {false, true})
        for (bool team : {false, true}) {
          DistArray<double, 2> u(rt(), d,
                                 {.halo = h,
                                  .periodic = periodic,
                                  .decomposition = compas::Decomposition::grid,
                                  .grid = g});
          const Range2 all = u.with_halos();
          for (index i = all.rows.lo; i < all.rows.hi; ++i)
            for (index j = all.cols.lo; j < all.cols.hi; ++j) u(i, j) = 1.0;
          if (team)
            rt().run([&](compas::ThreadCtx& t) { u.accumulate_halos(t); });
          else
            u.accumulate_halos();
          int wrong = 0;
          for (index i = all.rows.lo; i < all.rows.hi; ++i)
            for (index j = all.cols.lo; j < all.cols.hi; ++j) {
              const double want =
                  u.owned().contains(i, j) ? coverage(i, j, d, g.rows, g.cols, h, periodic) : 1.0;
              if (u(i, j) != want && ++wrong <= 3)
                ADD_FAILURE() << "grid " << g.rows << " x " << g.cols << " halo " << h
                              << (periodic ? " periodic" : "") << (team ? " team" : "")
                              << ": cell (" << i << ", " << j << ") holds " << u(i, j) << ", want "
                              << want;
            }
          ASSERT_EQ(wrong, 0);
        }
}

TEST(DistArray1, AccumulatedHalosAddIntoTheirOwners) {
  const int p = rt().processes();
  for (bool periodic : {false, true}) {
    DistArray<long, 1> u(rt(), compas::Range{0, 5 * p}, {.halo = 2, .periodic = periodic});
    for (index i = u.with_halos().lo; i < u.with_halos().hi; ++i) u[i] = i;
    u.accumulate_halos();
    // Each owned cell: its own index plus, from every halo that mirrors it, the index it had there.
    const index n = 5 * p;
    for (index i = u.lo(); i < u.hi(); ++i) {
      long want = i;
      for (int q = 0; q < p; ++q) {
        const Range part = compas::block_of(compas::Range{0, n}, p, q);
        for (index a : {part.lo - 2, part.lo - 1, part.hi, part.hi + 1}) {
          if (!periodic && (a < 0 || a >= n)) continue;
          if (((a % n) + n) % n == i) want += a;
        }
      }
      ASSERT_EQ(u[i], want) << "element " << i << (periodic ? " periodic" : "");
    }
  }
}

// The process grid chosen by DistOptions::grid: P x 1 cuts the rows only, 1 x P the columns
// only, a side left 0 is P over the other; halos and corners are right on each.
TEST(DistArray2, AChosenProcessGridCutsTheDimensionsAsked) {
  const int p = rt().processes(), me = rt().process();
  const Range2 d{{0, 4 * p + 3}, {0, 3 * p + 2}};
  for (compas::ProcessGrid g : {compas::ProcessGrid{p, 1}, compas::ProcessGrid{1, p},
                                compas::ProcessGrid{p, 0}, compas::ProcessGrid{0, p}}) {
    const std::string what = std::to_string(g.rows) + " x " + std::to_string(g.cols);
    DistArray<double, 2> u(rt(), d,
                           {.halo = 2, .decomposition = compas::Decomposition::grid, .grid = g});
    const bool rows_cut = g.rows == p || (g.rows == 0 && g.cols == 1);
    EXPECT_EQ(u.rows(), rows_cut ? compas::block_of(d.rows, p, me) : d.rows) << what;
    EXPECT_EQ(u.cols(), rows_cut ? d.cols : compas::block_of(d.cols, p, me)) << what;
    for (bool periodic : {false, true}) {
      DistArray<double, 2> v(rt(), d,
                             {.halo = 2,
                              .periodic = periodic,
                              .decomposition = compas::Decomposition::grid,
                              .grid = g});
      ASSERT_EQ(run2(v, periodic, 1, nullptr), 0) << what << (periodic ? " periodic" : "");
    }
  }
}

TEST(DistArrayErrors, AProcessGridThatIsNotPIsRefusedNamingIt) {
  const int p = rt().processes();
  auto expect_refused = [&](compas::DistOptions o, const std::string& part) {
    try {
      DistArray<double, 2> u(rt(), 8 * p, 8 * p, o);
      ADD_FAILURE() << "made with grid " << o.grid.rows << " x " << o.grid.cols;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  const auto grid = compas::Decomposition::grid;
  expect_refused({.decomposition = grid, .grid = {p + 1, 1}},
                 "process grid " + std::to_string(p + 1) + " x 1 for " + std::to_string(p) +
                     " processes: the sides must multiply");
  expect_refused({.decomposition = grid, .grid = {-1, p}}, "sides are 0 (compas chooses) or more");
  expect_refused({.decomposition = compas::Decomposition::rows, .grid = {p, 1}},
                 "a grid is for 2-D arrays over Decomposition::grid");
  if (p > 1) {  // a side that does not divide P
    expect_refused({.decomposition = grid, .grid = {0, p + 1}}, "the sides must multiply");
    // Grids that differ between processes: the same error on every one, naming both.
    const compas::ProcessGrid mine =
        rt().process() == 0 ? compas::ProcessGrid{p, 1} : compas::ProcessGrid{1, p};
    expect_refused({.decomposition = grid, .grid = mine},
                   "rank 0 a 2-D [0, " + std::to_string(8 * p) + ") x [0, " +
                       std::to_string(8 * p) + ") over a process grid of " + std::to_string(p) +
                       " x 1");
  }
}

TEST(DistArray2, LocalViewAndRowsAddressTheSameCells) {
  DistArray<int, 2> u(rt(), 5 * rt().processes(), 11,
                      {.decomposition = compas::Decomposition::grid});
  auto v = u.local();
  EXPECT_EQ(v.extent(0), u.rows().size());
  EXPECT_EQ(v.extent(1), u.cols().size());
  for (index r = 0; r < v.rows; ++r)
    for (index c = 0; c < v.cols; ++c) v(r, c) = static_cast<int>(r * 100 + c);
  for (index i = u.rows().lo; i < u.rows().hi; ++i) {
    auto row = v.row(i - u.rows().lo);
    for (index j = u.cols().lo; j < u.cols().hi; ++j) {
      ASSERT_EQ(u(i, j), (i - u.rows().lo) * 100 + (j - u.cols().lo));
      ASSERT_EQ(&row[static_cast<std::size_t>(j - u.cols().lo)], &u(i, j));
      ASSERT_EQ(&u.row(i)[j - u.with_halos().cols.lo], &u(i, j));
    }
  }
}

TEST(DistArrayErrors, AHaloWiderThanAPartIsRefusedEverywhere) {
  const index p = rt().processes();
  try {
    DistArray<double> u(rt(), 2 * p, {.halo = 3, .periodic = true});
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("halo 3 is wider than the smallest part (2 elements)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW((DistArray<double, 2>(rt(), p, 4, {.halo = 2, .periodic = true})),
               std::invalid_argument);
  EXPECT_THROW((DistArray<double>(rt(), p - 1)), std::invalid_argument);
  EXPECT_THROW((DistArray<double>(rt(), 4 * p, {.halo = -1})), std::invalid_argument);
}

TEST(DistArrayErrors, ShapesThatDifferBetweenProcessesAreRefusedEverywhere) {
  if (rt().processes() == 1) GTEST_SKIP() << "needs two processes";
  const index n = 10 * rt().processes() + (rt().process() == 1 ? 1 : 0);
  try {
    DistArray<double> u(rt(), n);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("rank 0 a 1-D [0, " + std::to_string(10 * rt().processes()) + ")"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("rank 1 a 1-D [0, " + std::to_string(10 * rt().processes() + 1) + ")"),
              std::string::npos)
        << msg;
  }
  // The job goes on: the next array is made alike everywhere.
  DistArray<double> ok(rt(), 4 * rt().processes());
  ok.exchange_halos();
}

// Making an array or a window is collective and funneled: from every thread inside run(), or
// from another thread, it is refused with a logic_error on every thread of every process, instead
// of T collectives entered at once (wrong values, or a crash inside UCX).
TEST(DistArrayErrors, CreationInsideRunOrFromAnotherThreadIsRefused) {
  const index n = 4 * rt().processes();
  auto attempts = [&](std::vector<std::string>& errors) {
    auto attempt = [&](auto make) {
      try {
        make();
        errors.emplace_back("made");
      } catch (const std::logic_error& e) {
        errors.emplace_back(e.what());
      }
    };
    attempt([&] { DistArray<double> u(rt(), n); });
    attempt([&] { DistArray<double, 2> u(rt(), n, 3); });
    attempt([&] { auto w = rt().window<double>(16); });
  };
  std::vector<std::vector<std::string>> inside(static_cast<std::size_t>(rt().threads()));
  rt().run([&](compas::ThreadCtx& t) { attempts(inside[static_cast<std::size_t>(t.thread())]); });
  for (const auto& errors : inside) {
    ASSERT_EQ(errors.size(), 3u);
    for (const auto& e : errors) EXPECT_NE(e.find("inside Runtime::run"), std::string::npos) << e;
  }
  std::vector<std::string> other_thread;
  std::thread other([&] { attempts(other_thread); });
  other.join();
  for (const auto& e : other_thread)
    EXPECT_NE(e.find("other than the one that made the Runtime"), std::string::npos) << e;
  DistArray<double> ok(rt(), n, {.periodic = true});  // and the job is still in step
  ok.exchange_halos();
}

TEST(DistArrayErrors, ElementTypesThatDifferBetweenProcessesAreRefusedEverywhere) {
  if (rt().processes() == 1) GTEST_SKIP() << "needs two processes";
  const index n = 4 * rt().processes();
  try {
    if (rt().process() == 1)
      DistArray<std::int64_t> u(rt(), n);
    else
      DistArray<double> u(rt(), n);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("rank 0 a 1-D [0, " + std::to_string(n) + ") of 8-byte elements (double)"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("rank 1 a 1-D [0, " + std::to_string(n) + ") of 8-byte elements (long)"),
              std::string::npos)
        << msg;
  }
}

TEST(DistArrayErrors, FunneledExchangeFromAnotherThreadOrInsideRunIsRefused) {
  DistArray<double> u(rt(), 4 * rt().processes());
  std::string error;
  std::thread other([&] {
    try {
      u.exchange_halos();
    } catch (const std::logic_error& e) {
      error = e.what();
    }
  });
  other.join();
  EXPECT_NE(error.find("other than the one that made the Runtime"), std::string::npos) << error;
  rt().run([&](compas::ThreadCtx& t) {
    if (t.is_leader()) {
      EXPECT_THROW(u.exchange_halos(), std::logic_error);
    }
  });
  u.exchange_halos();  // and the job is still in step
}

}  // namespace
