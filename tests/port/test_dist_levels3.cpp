// The levels of a 3-D multigrid hierarchy across real processes: the coarsest distributed level
// cut by the block split, every finer level its refinement, and each coarser array made from the
// finer one by coarsened(2). Checked: a coarse cell lies on the process owning the fine cells
// under it (lo + 2c and lo + 2c + 1 per dimension: 2c and 2c + 1 from 0, 2c - 1 and 2c from 1),
// every level's periodic halos hold the global function, and coarsening past an odd boundary is
// refused alike everywhere.
#include <gtest/gtest.h>

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "alike_errors.hpp"
#include "dist3_check.hpp"

namespace {

using compas::index;
using dist3::Array;

compas::Runtime& rt() {
  return *g_rt;
}

// The coarsest distributed level: 2 g + 1 cells per dimension of g processes (uneven parts).
compas::Partition3 base_level(index lo) {
  const std::array<int, 3> g =
      compas::block_partition({{0, 64}, {0, 64}, {0, 64}}, rt().processes()).grid();
  compas::Range3 dom;
  for (int d = 0; d < 3; ++d) dom.dim(d) = {lo, lo + 2 * g[d] + 1};
  return compas::block_partition(dom, rt().processes());
}

// Fine cells under this process's coarse cells that this process does not own (over the job).
long children_elsewhere(const Array& fine, const Array& coarse) {
  const compas::Range3 c = coarse.owned(), f = fine.owned();
  const index lo = coarse.domain().planes.lo;  // every dimension starts at lo here
  long bad = 0;
  for (index i = c.planes.lo; i < c.planes.hi; ++i)
    for (index j = c.rows.lo; j < c.rows.hi; ++j)
      for (index k = c.cols.lo; k < c.cols.hi; ++k)
        for (int child = 0; child < 8; ++child) {
          const index fi = lo + 2 * (i - lo) + (child >> 2),
                      fj = lo + 2 * (j - lo) + (child >> 1 & 1),
                      fk = lo + 2 * (k - lo) + (child & 1);
          if (!f.contains(fi, fj, fk)) ++bad;
        }
  return compas::allreduce(rt(), bad, compas::op::sum{});
}

TEST(Levels, CoarsenedLevelsAlignAndExchangePeriodicHalos) {
  for (const index lo : {index{0}, index{1}}) {
    const compas::Partition3 base = base_level(lo);
    const compas::Partition3 top = base.refined(8);
    const compas::DistOptions3 o{.periodic = {true, true, true}, .partition = top};
    std::vector<Array> level;
    level.emplace_back(rt(), top.domain(), o);
    while (level.size() < 4) level.push_back(level.back().coarsened(2));
    EXPECT_EQ(level.back().partition(), base);
    for (std::size_t l = 0; l < level.size(); ++l) {
      Array& u = level[l];
      EXPECT_EQ(dist3::owned_over_job(u), u.domain().size()) << "level " << l;
      if (l > 0) {
        EXPECT_EQ(children_elsewhere(level[l - 1], u), 0) << "level " << l;
      }
      for (int step = 0; step < 2; ++step) {
        dist3::fill(u, step);
        u.exchange_halos();
        std::string first;
        EXPECT_EQ(dist3::wrong_halos(u, o.periodic, step, &first), 0)
            << "from " << lo << ", level " << l << ", exchange " << step << ": " << first;
      }
    }
    // 2 g + 1 cells: the last boundary is odd from lo, so no coarser aligned level exists.
    const std::string m = alike::error_of([&] { (void)level.back().coarsened(2); });
    alike::expect_everywhere(m);
    EXPECT_NE(m.find("Partition3::coarsened(2): boundary"), std::string::npos) << m;
    EXPECT_NE(m.find("not a multiple of 2"), std::string::npos) << m;
  }
}

// NAS MG's numbering, 1-based: coarse cell c lies with fine cells 2c - 1 and 2c.
TEST(Levels, OneBasedCoarseCellLiesWithFineCellsTwoCMinusOneAndTwoC) {
  const compas::Partition3 top = base_level(1).refined(2);
  Array fine(rt(), top.domain(), {.partition = top});
  Array coarse = fine.coarsened(2);
  EXPECT_EQ(coarse.domain().planes.lo, 1);
  for (int d = 0; d < 3; ++d) {
    const compas::Range c = coarse.owned().dim(d), f = fine.owned().dim(d);
    EXPECT_EQ(f.lo, 2 * c.lo - 1) << "dimension " << d;        // coarse c.lo over fine 2 c.lo - 1
    EXPECT_EQ(f.hi - 1, 2 * (c.hi - 1)) << "dimension " << d;  // the last coarse over fine 2c
  }
}

// A block split that is not a refinement cannot be coarsened where its boundaries are odd; the
// error names the boundary and is the same on every process.
TEST(Levels, CoarseningAnOddSplitIsRefused) {
  Array u(rt(), {{0, 9}, {0, 8}, {0, 8}}, {.grid = {1, 1, rt().processes()}});
  const std::string m = alike::error_of([&] { (void)u.coarsened(2); });
  alike::expect_everywhere(m);
  EXPECT_NE(m.find("boundary 1 of the planes {0, 9} is 9, 9 cells from the first (0), not a "
                   "multiple of 2"),
            std::string::npos)
      << m;
}

}  // namespace
