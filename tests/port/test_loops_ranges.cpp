// The range loops and Range's helpers across real processes: every rank of a compas-run job runs
// these with test_dist_array's cases (same program, same shapes). parallel_for and reduce cover
// a range once and reduce over the job; the funneled scan, part and array allreduce; intersect,
// inner and rim; sizes an index cannot hold.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/job_main.hpp"
#include "compas/compas.hpp"

namespace {

using compas::DistArray;
using compas::index;
using compas::Range;
using compas::Range2;

TEST(Loops, ParallelForCoversTheRangeOnceAndReduceIsJobWide) {
  const index n = 1000 * rt().processes() + 17;
  const Range mine = compas::block_of(Range{0, n}, rt().processes(), rt().process());
  std::vector<int> hits(static_cast<std::size_t>(mine.size()), 0);
  rt().parallel_for(mine, [&](index i) { ++hits[static_cast<std::size_t>(i - mine.lo)]; });
  for (int h : hits) ASSERT_EQ(h, 1);
  const auto sum =
      rt().transform_reduce(mine, index{0}, compas::op::sum{}, [](index i) { return i; });
  EXPECT_EQ(sum, n * (n - 1) / 2);
  const Range2 grid{{0, 3 * rt().processes()}, {0, 5}};
  const Range2 part{compas::block_of(grid.rows, rt().processes(), rt().process()), grid.cols};
  const auto top = rt().transform_reduce(part, index{-1}, compas::op::max{},
                                         [](index i, index j) { return i * 10 + j; });
  EXPECT_EQ(top, (3 * rt().processes() - 1) * 10 + 4);
  index inside = 0;
  rt().run([&](compas::ThreadCtx& t) {
    const index c = rt().transform_reduce(t, part, index{0}, compas::op::sum{},
                                          [](index, index) { return index{1}; });
    if (t.is_leader()) inside = c;
  });
  EXPECT_EQ(inside, grid.size());
}

// The funneled process-level forms: part() is the DistArray split, exclusive_scan sums the
// processes before this one, the array allreduce combines element by element in rank order (a
// non-commutative op shows the order).
TEST(Loops, FunneledScanPartAndArrayAllreduce) {
  const int p = rt().processes(), me = rt().process();
  EXPECT_EQ(rt().part({5, 5 + 7 * p + 3}), compas::block_of({5, 5 + 7 * p + 3}, p, me));
  const index before = compas::exclusive_scan(rt(), index{me + 1}, index{0}, compas::op::sum{});
  EXPECT_EQ(before, index{me} * (me + 1) / 2);
  std::array<index, 5> in{}, out{};
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = me * 10 + static_cast<index>(i);
  compas::allreduce<index>(rt(), in, out, compas::op::sum{});
  for (std::size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(out[i], 10 * index{p} * (p - 1) / 2 + static_cast<index>(i) * p) << i;
  // Pairs (s, x) under (s1, x1) op (s2, x2) = (s1 s2, 2^k x1 + x2) with s2 = 2^k: associative,
  // not commutative; the x of the result is the left fold x = 2x + x_r, so rank order shows.
  struct Lean {
    index s, x;
  };
  auto lean = [](Lean a, Lean b) { return Lean{a.s * b.s, a.x * b.s + b.x}; };
  std::array<Lean, 5> lin{}, lout{};
  for (std::size_t i = 0; i < lin.size(); ++i) lin[i] = {2, in[i]};
  compas::allreduce<Lean>(rt(), lin, lout, lean);
  for (std::size_t i = 0; i < in.size(); ++i) {
    index want = static_cast<index>(i);
    for (int r = 1; r < p; ++r) want = 2 * want + r * 10 + static_cast<index>(i);
    EXPECT_EQ(lout[i].x, want) << i;
    EXPECT_EQ(lout[i].s, index{1} << p) << i;
  }
}

// intersect: the common indices; the processes' parts of an inner region cover it once.
TEST(Ranges, IntersectKeepsTheCommonIndicesAndThePartsCoverAnInnerRegion) {
  EXPECT_EQ(compas::intersect(Range{0, 10}, Range{3, 12}), (Range{3, 10}));
  EXPECT_EQ(compas::intersect(Range{3, 12}, Range{0, 10}), (Range{3, 10}));
  EXPECT_EQ(compas::intersect(Range{0, 10}, Range{2, 5}), (Range{2, 5}));
  EXPECT_EQ(compas::intersect(Range{0, 4}, Range{6, 9}), (Range{6, 6}));
  EXPECT_TRUE(compas::intersect(Range{6, 9}, Range{0, 4}).empty());
  EXPECT_EQ(compas::intersect(Range2{{0, 5}, {2, 8}}, Range2{{1, 9}, {0, 4}}),
            (Range2{{1, 5}, {2, 4}}));
  const index n = 23, r = 3;
  DistArray<double, 2> u(rt(), Range2{{0, n}, {0, n}},
                         {.halo = 1, .decomposition = compas::Decomposition::grid});
  const Range2 inner{{r, n - r}, {r, n - r}}, mine = compas::intersect(u.owned(), inner);
  for (index i = mine.rows.lo; i < mine.rows.hi; ++i)
    for (index j = mine.cols.lo; j < mine.cols.hi; ++j) {
      EXPECT_TRUE(inner.contains(i, j) && u.owned().contains(i, j)) << i << ", " << j;
    }
  EXPECT_EQ(rt().allreduce(mine.size(), compas::op::sum{}), inner.size());
}

// inner and rim: the inner part and the slabs cover every cell of the box exactly once, and the
// inner cells are at least w from every side; thin boxes have an empty inner part.
TEST(Ranges, InnerAndRimCoverTheBoxOnce) {
  for (index w : {0, 1, 2})
    for (const compas::Range3 box :
         {compas::Range3{{0, 6}, {2, 9}, {-3, 4}}, compas::Range3{{0, 1}, {0, 5}, {0, 5}},
          compas::Range3{{4, 7}, {0, 2}, {0, 9}}}) {
      std::vector<int> seen(static_cast<std::size_t>(box.size()), 0);
      auto mark = [&](const compas::Range3& b) {
        for (index i = b.planes.lo; i < b.planes.hi; ++i)
          for (index j = b.rows.lo; j < b.rows.hi; ++j)
            for (index k = b.cols.lo; k < b.cols.hi; ++k) {
              ASSERT_TRUE(box.contains(i, j, k)) << i << ", " << j << ", " << k;
              ++seen[static_cast<std::size_t>(
                  ((i - box.planes.lo) * box.rows.size() + (j - box.rows.lo)) * box.cols.size() +
                  (k - box.cols.lo))];
            }
      };
      const compas::Range3 in = compas::inner(box, w);
      mark(in);
      for (int d = 0; d < 3 && !in.empty(); ++d) {
        EXPECT_GE(in.dim(d).lo - box.dim(d).lo, w);
        EXPECT_GE(box.dim(d).hi - in.dim(d).hi, w);
      }
      for (const compas::Range3& b : compas::rim(box, w)) mark(b);
      for (int n : seen) ASSERT_EQ(n, 1) << "w " << w;
    }
  EXPECT_TRUE(compas::inner(compas::Range3{{0, 2}, {0, 9}, {0, 9}}, 1).empty());
  const compas::Range2 flat{{0, 5}, {0, 7}};
  index cells = compas::inner(flat, 1).size();
  for (const Range2& b : compas::rim(flat, 1)) cells += b.size();
  EXPECT_EQ(cells, flat.size());
  EXPECT_EQ(compas::inner(flat, 1), (Range2{{1, 4}, {1, 6}}));
}

// Sizes an index cannot hold: a length_error naming the range, never a wrapped size.
TEST(Ranges, SizesBeyondAnIndexAreRefusedNamingTheRange) {
  const index min = std::numeric_limits<index>::min(), max = std::numeric_limits<index>::max();
  const index half = index{1} << 62;
  for (const Range r : {Range{min, max}, Range{-half, half}}) {
    std::string text = "[";  // appended, not a chain of +: GCC 12 misreads those (-Wrestrict)
    text += std::to_string(r.lo);
    text += ", ";
    text += std::to_string(r.hi);
    text += ")";
    try {
      ADD_FAILURE() << text << ": size " << r.size();
    } catch (const std::length_error& e) {
      EXPECT_NE(std::string(e.what()).find("Range " + text), std::string::npos) << e.what();
    }
    try {
      DistArray<double> u(rt(), r);
      ADD_FAILURE() << text << ": made an array";
    } catch (const std::length_error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ((Range{-half, half - 1}).size(), max);  // the largest that fits
  EXPECT_EQ((Range{max, min}).size(), 0);
  const Range big{0, index{1} << 32};
  try {
    ADD_FAILURE() << "size " << (Range2{big, big}).size();
  } catch (const std::length_error& e) {
    EXPECT_NE(std::string(e.what()).find("Range2 [0, 4294967296) x [0, 4294967296)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
