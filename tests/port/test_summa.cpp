// compas::Summa across real processes: every rank of a compas-run job (P = 1..4, 1 and 2 OpenMP
// threads) multiplies distributed matrices of non-square, uneven shapes and compares its block of
// C with the product every rank computes serially; and the bad calls, refused alike on every
// process before anything moves (never a hang: the job goes on to the next case).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../common/job_main.hpp"
#include "compas/port/dist_array.hpp"
#include "compas/port/summa.hpp"

namespace {

using Matrix = compas::DistArray<double, 2>;
using compas::index;

// Small integers, so that every sum is exact whatever the order.
double a_at(index i, index j) {
  return static_cast<double>((3 * i + 5 * j) % 7 - 3);
}
double b_at(index i, index j) {
  return static_cast<double>((2 * i + 7 * j) % 5 - 2);
}
double c_at(index i, index j) {
  return static_cast<double>((i + 2 * j) % 3);
}

// x(j, i) = f(i - row0, j - col0): the matrix element (i, j) of an array indexed (column, row)
// whose domain starts at (col0, row0).
template <class F>
void fill(Matrix& x, F f) {
  const compas::Range2 d = x.domain();
  for (index j = x.rows().lo; j < x.rows().hi; ++j)
    for (index i = x.cols().lo; i < x.cols().hi; ++i) x(j, i) = f(i - d.cols.lo, j - d.rows.lo);
}

// The naive local product: C(m x n) += A(m x k) B(k x n), column-major, threads over columns.
void local_product(const compas::SummaPanels<double>& p) {
#pragma omp parallel for
  for (index j = 0; j < p.n; ++j)
    for (index l = 0; l < p.k; ++l)
      for (index i = 0; i < p.m; ++i) p.c[i + j * p.ldc] += p.a[i + l * p.lda] * p.b[l + j * p.ldb];
}

struct Shape {
  index m, n, k;
  compas::Range2 da, db, dc;  // each (matrix columns, matrix rows)
};

Shape shape_at(index m, index n, index k, index origin) {
  const compas::Range rm{origin, origin + m}, rn{2 * origin, 2 * origin + n},
      rk{3 * origin, 3 * origin + k};
  return {m, n, k, {rk, rm}, {rn, rk}, {rn, rm}};
}

// C = C0 + times * A B, with C0, A and B the functions above, checked on this process's block.
void check_product(const Shape& s, index width, int times, compas::DistOptions o) {
  Matrix a(rt(), s.da, o), b(rt(), s.db, o), c(rt(), s.dc, o);
  fill(a, a_at);
  fill(b, b_at);
  fill(c, c_at);
  compas::Summa summa(a, b, c, width);
  for (int t = 0; t < times; ++t) summa(local_product);
  int wrong = 0;
  for (index j = c.rows().lo; j < c.rows().hi; ++j)
    for (index i = c.cols().lo; i < c.cols().hi; ++i) {
      const index mi = i - s.dc.cols.lo, mj = j - s.dc.rows.lo;
      double want = 0;
      for (index l = 0; l < s.k; ++l) want += a_at(mi, l) * b_at(l, mj);
      want = c_at(mi, mj) + times * want;
      if (c(j, i) != want && ++wrong <= 3)
        ADD_FAILURE() << "C(" << mi << ", " << mj << ") = " << c(j, i) << ", want " << want;
    }
  EXPECT_EQ(wrong, 0) << s.m << " x " << s.n << " x " << s.k << ", width " << width;
}

const compas::DistOptions kGrid{.halo = 0, .decomposition = compas::Decomposition::grid};

TEST(Summa, MatchesTheSerialProductForUnevenShapesAndWidths) {
  for (const index width : {1, 3, 32})
    for (const Shape& s : {shape_at(7, 5, 9, 0), shape_at(13, 4, 6, 0), shape_at(5, 11, 17, 4)})
      check_product(s, width, 1, kGrid);
}

TEST(Summa, AddsToCEveryCallAndTakesHalosAndARowCut) {
  check_product(shape_at(9, 6, 10, 1), 4, 2,
                {.halo = 1, .decomposition = compas::Decomposition::grid});
  check_product(shape_at(6, 8, 5, 0), 2, 1, {.halo = 0});  // Decomposition::rows: a P x 1 grid
}

TEST(Summa, TheOneShotFormMultipliesOnce) {
  const Shape s = shape_at(6, 7, 8, 0);
  Matrix a(rt(), s.da, kGrid), b(rt(), s.db, kGrid), c(rt(), s.dc, kGrid);
  fill(a, a_at);
  fill(b, b_at);
  fill(c, [](index, index) { return 0.0; });
  compas::summa(a, b, c, 5, local_product);
  double mine = 0, want = 0;
  for (index j = c.rows().lo; j < c.rows().hi; ++j)
    for (index i = c.cols().lo; i < c.cols().hi; ++i) mine += c(j, i);
  for (index i = 0; i < s.m; ++i)
    for (index j = 0; j < s.n; ++j)
      for (index l = 0; l < s.k; ++l) want += a_at(i, l) * b_at(l, j);
  EXPECT_EQ(rt().allreduce(mine, compas::op::sum{}), want);
}

// What Summa's constructor throws here (the same on every process), "" when nothing.
template <class F>
std::string refusal(F make) {
  try {
    make();
  } catch (const compas::CollectiveError& e) {
    return e.what();
  }
  return "";
}

TEST(Summa, RefusesShapesThatMakeNoProductAndAWidthBelowOne) {
  const Shape s = shape_at(6, 5, 7, 0);
  Matrix a(rt(), s.da, kGrid), b(rt(), s.db, kGrid), c(rt(), s.dc, kGrid);
  Matrix b_short(rt(), compas::Range2{s.db.rows, {0, s.k - 1}}, kGrid);
  std::string e = refusal([&] { compas::Summa(a, b_short, c, 4); });
  EXPECT_NE(e.find("make no product"), std::string::npos) << e;
  EXPECT_NE(e.find("b [0, 5) x [0, 6)"), std::string::npos) << e;  // names the arrays
  e = refusal([&] { compas::Summa(a, b, c, 0); });
  EXPECT_NE(e.find("panel width 0: 1 or more is needed"), std::string::npos) << e;
  e = refusal([&] { compas::Summa(a, b, a, 4); });
  EXPECT_NE(e.find("c is also a or b"), std::string::npos) << e;
}

TEST(Summa, RefusesArraysCutOverDifferentGrids) {
  const Shape s = shape_at(6, 5, 7, 0);
  Matrix a(rt(), s.da, {.halo = 0}), b(rt(), s.db, kGrid), c(rt(), s.dc, kGrid);
  const compas::ProcessGrid ga = a.process_grid(), gc = c.process_grid();
  if (ga.rows == gc.rows && ga.cols == gc.cols) GTEST_SKIP() << "one process: one grid";
  const std::string e = refusal([&] { compas::Summa(a, b, c, 4); });
  EXPECT_NE(e.find("different process grids"), std::string::npos) << e;
}

TEST(Summa, RefusesProcessesThatPassDifferentArgumentsNamingBoth) {
  if (rt().processes() == 1) GTEST_SKIP() << "one process";
  const Shape s = shape_at(6, 5, 7, 0);
  Matrix a(rt(), s.da, kGrid), b(rt(), s.db, kGrid), c(rt(), s.dc, kGrid);
  const index width = rt().process() == 1 ? 5 : 4;
  const std::string e = refusal([&] { compas::Summa(a, b, c, width); });
  EXPECT_NE(e.find("rank 0 a [0, 7) x [0, 6)"), std::string::npos) << e;
  EXPECT_NE(e.find("panel width 4"), std::string::npos) << e;
  EXPECT_NE(e.find("rank 1 a"), std::string::npos) << e;
  EXPECT_NE(e.find("panel width 5"), std::string::npos) << e;
  // Nothing was left half-done: the same arrays multiply right after.
  check_product(s, 4, 1, kGrid);
}

TEST(Summa, RefusesAnotherThreadBeforeAnythingCollective) {
  const Shape s = shape_at(6, 5, 7, 0);
  Matrix a(rt(), s.da, kGrid), b(rt(), s.db, kGrid), c(rt(), s.dc, kGrid);
  bool refused = false;
  std::thread([&] {
    try {
      compas::Summa(a, b, c, 4);
    } catch (const std::logic_error&) {
      refused = true;
    }
  }).join();
  EXPECT_TRUE(refused);
}

}  // namespace
