// compas::transpose across real processes: every rank of a compas-run job (P = 1..4, threads 1 and
// 2, load/store between processes, UCX's shared-memory RMA, tcp) runs these cases, each checking
// every element this process owns against the serial definition b(i, j) = op(b(i, j), a(j, i)).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "../common/job_main.hpp"
#include "compas/port/transpose.hpp"

namespace {

double value(compas::index r, compas::index c) {
  return static_cast<double>(r) * 1000.0 + static_cast<double>(c);
}

template <class T>
void fill(compas::DistArray<T, 2>& a) {
  for (compas::index r = a.rows().lo; r < a.rows().hi; ++r)
    for (compas::index c = a.cols().lo; c < a.cols().hi; ++c) a(r, c) = static_cast<T>(value(r, c));
}

// The number of owned elements of b that differ from `expect(i, j)`.
template <class T, class F>
long wrong(compas::DistArray<T, 2>& b, F expect) {
  long bad = 0;
  for (compas::index i = b.rows().lo; i < b.rows().hi; ++i)
    for (compas::index j = b.cols().lo; j < b.cols().hi; ++j) bad += b(i, j) != expect(i, j);
  return rt().allreduce(bad, compas::op::sum{});
}

// Not square, sizes no process count divides, domains not starting at 0, halos of 0 and 2.
TEST(Transpose, RectangularWithOffsetsAndHalos) {
  const compas::Range rows{3, 40}, cols{-2, 51};
  compas::DistArray<double, 2> a(rt(), {rows, cols}, {.halo = 2});
  compas::DistArray<double, 2> b(rt(), {cols, rows}, {.halo = 0});
  fill(a);
  compas::transpose(a, b);
  EXPECT_EQ(wrong(b, [](auto i, auto j) { return value(j, i); }), 0);
}

// With an operator: b(i, j) += a(j, i), twice, and a changes in between (read after the
// transpose's closing meeting on every process).
TEST(Transpose, AccumulatesWithAnOperator) {
  const compas::index n = 64;
  compas::DistArray<std::int64_t, 2> a(rt(), n, n), b(rt(), n, n);
  fill(a);
  for (compas::index i = b.rows().lo; i < b.rows().hi; ++i)
    for (compas::index j = 0; j < n; ++j) b(i, j) = 7;
  compas::transpose(a, b, compas::op::sum{});
  for (compas::index r = a.rows().lo; r < a.rows().hi; ++r)
    for (compas::index c = 0; c < n; ++c) a(r, c) += 1;
  compas::transpose(a, b, compas::op::sum{});
  EXPECT_EQ(
      wrong(b, [](auto i, auto j) { return 7 + 2 * static_cast<std::int64_t>(value(j, i)) + 1; }),
      0);
}

// With an update: b(i, j) += a(j, i), then a(j, i) += 1, every element of a updated exactly once
// (in place for the block this process reads of its own a, afterwards for the rest), three times
// over, the value read each time the one before the update. Rectangular, offset domains, halos.
TEST(Transpose, UpdatesEveryElementOfAOnceAfterReadingIt) {
  const compas::Range rows{-3, 37}, cols{5, 66};
  compas::DistArray<std::int64_t, 2> a(rt(), {rows, cols}, {.halo = 1});
  compas::DistArray<std::int64_t, 2> b(rt(), {cols, rows}, {.halo = 0});
  fill(a);
  for (compas::index i = b.rows().lo; i < b.rows().hi; ++i)
    for (compas::index j = b.cols().lo; j < b.cols().hi; ++j) b(i, j) = 7;
  int calls = 0;
  for (int k = 0; k < 3; ++k)
    compas::transpose(a, b, compas::op::sum{}, [&calls](std::int64_t& x) {
#pragma omp atomic
      ++calls;
      x += 1;
    });
  // b = 7 + (v) + (v + 1) + (v + 2); a = v + 3.
  EXPECT_EQ(
      wrong(b, [](auto i, auto j) { return 7 + 3 * static_cast<std::int64_t>(value(j, i)) + 3; }),
      0);
  EXPECT_EQ(wrong(a, [](auto i, auto j) { return static_cast<std::int64_t>(value(i, j)) + 3; }), 0);
  EXPECT_EQ(calls, 3 * a.rows().size() * a.cols().size());
}

// Parts as small as they get: one or two rows of a per process (P + 1 rows), b narrow.
TEST(Transpose, OneOrTwoRowsPerProcess) {
  const compas::index rows = rt().processes() + 1;
  compas::DistArray<double, 2> a(rt(), rows, rows + 3, {.halo = 0});
  compas::DistArray<double, 2> b(rt(), rows + 3, rows, {.halo = 1});
  fill(a);
  compas::transpose(a, b);
  EXPECT_EQ(wrong(b, [](auto i, auto j) { return value(j, i); }), 0);
}

TEST(Transpose, ShapesThatAreNotTransposesAreNamed) {
  compas::DistArray<double, 2> a(rt(), 6, 8), b(rt(), 6, 8);
  try {
    compas::transpose(a, b);
    FAIL() << "a 6 x 8 transposed into a 6 x 8";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("a is [0, 6) x [0, 8), b is [0, 6) x [0, 8): b must be "
                                         "[0, 8) x [0, 6)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(compas::transpose(a, a), std::invalid_argument);
}

TEST(Transpose, AnArrayCutByColumnsIsRefused) {
  const int p = rt().processes();
  if (p == 1) GTEST_SKIP() << "one process holds whole rows whatever the grid";
  compas::DistArray<double, 2> a(rt(), 8, 8,
                                 {.decomposition = compas::Decomposition::grid, .grid = {1, p}});
  compas::DistArray<double, 2> b(rt(), 8, 8);
  try {
    compas::transpose(a, b);
    FAIL() << "a column-cut array was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("a is not cut by rows (process 1 holds columns"),
              std::string::npos)
        << e.what();
  }
}

TEST(Transpose, InsideRunIsRefused) {
  compas::DistArray<double, 2> a(rt(), 4, 4), b(rt(), 4, 4);
  bool refused = false;
  rt().run([&](compas::ThreadCtx& t) {
    if (!t.is_leader()) return;
    try {
      compas::transpose(a, b);
    } catch (const std::logic_error&) {
      refused = true;
    }
  });
  EXPECT_TRUE(refused);
}

}  // namespace
