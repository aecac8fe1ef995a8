// 3-D partitions the program controls, across real processes (every rank of a compas-run job;
// P = 1, 2, 3, 4, 6, 8 and 2 threads): the block split's formula, arrays over split points the
// program gives, levels coarsened from one another (aligned: a coarse cell on the process owning
// the fine cells under it) with periodic halos, and the errors, alike on every process.
#include <gtest/gtest.h>

#include <algorithm>
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

// The formula of partition3.hpp, written out: part p of n cells over g begins at p q + min(p, e).
TEST(Partition3, BlockSplitIsTheDocumentedFormula) {
  const compas::Partition3 p = compas::block_partition({{0, 10}, {5, 12}, {-3, 3}}, 12, {4, 3, 1});
  EXPECT_EQ(p.splits[0], (std::vector<index>{0, 3, 6, 8, 10}));
  EXPECT_EQ(p.splits[1], (std::vector<index>{5, 8, 10, 12}));
  EXPECT_EQ(p.splits[2], (std::vector<index>{-3, 3}));
  for (index n = 1; n < 40; ++n)
    for (int g = 1; g <= n && g < 9; ++g) {
      const auto b = compas::block_partition({{0, n}, {0, 1}, {0, 1}}, g, {g, 1, 1}).splits[0];
      const index q = n / g, e = n % g;
      for (int part = 0; part <= g; ++part)
        ASSERT_EQ(b[static_cast<std::size_t>(part)], part * q + std::min<index>(part, e))
            << n << " cells over " << g << ", boundary " << part;
    }
  // The default array is cut so.
  Array u(rt(), {{0, 10}, {0, 9}, {0, 7}});
  EXPECT_EQ(u.partition(), compas::block_partition(u.domain(), rt().processes()));
}

TEST(Partition3, CoarsenedAndRefinedAreInverse) {
  const compas::Partition3 base = compas::block_partition({{1, 8}, {0, 5}, {0, 3}}, 6, {3, 2, 1});
  const compas::Partition3 top = base.refined(4);
  EXPECT_EQ(top.splits[0], (std::vector<index>{1, 13, 21, 29}));  // 1 + 4 (b - 1)
  EXPECT_EQ(top.domain(), (compas::Range3{{1, 29}, {0, 20}, {0, 12}}));
  EXPECT_EQ(top.coarsened(2).coarsened(2), base);
  const std::string m = alike::error_of([&] { (void)base.coarsened(2); });
  EXPECT_NE(m.find("boundary 1 of the planes {1, 4, 6, 8} is 4, 3 cells from the first (1), not a "
                   "multiple of 2"),
            std::string::npos)
      << m;
  EXPECT_NE(alike::error_of([&] { (void)base.refined(0); }).find("refined(0): the factor is 1"),
            std::string::npos);
}

// A partition with uneven parts: part p of dimension d holds p + 2 cells (d = 0), 3 (d = 1) or
// 2 p + 2 (d = 2), on the grid the block split would use.
compas::Partition3 uneven(index lo) {
  const std::array<int, 3> g =
      compas::block_partition({{0, 64}, {0, 64}, {0, 64}}, rt().processes()).grid();
  compas::Partition3 p;
  for (int d = 0; d < 3; ++d) {
    index at = lo;
    p.splits[d].push_back(at);
    for (int q = 0; q < g[d]; ++q)
      p.splits[d].push_back(at += d == 0 ? q + 2 : d == 1 ? 3 : 2 * q + 2);
  }
  return p;
}

TEST(UserSplits, PartsAreTheSplitsAndHalosTheGlobalFunction) {
  for (const index lo : {index{0}, index{-4}})
    for (const std::array<bool, 3>& periodic :
         {std::array<bool, 3>{false, false, false}, std::array<bool, 3>{true, true, true},
          std::array<bool, 3>{true, false, true}})
      for (const std::array<index, 3>& halo :
           {std::array<index, 3>{1, 1, 1}, std::array<index, 3>{2, 1, 0}}) {
        const compas::Partition3 p = uneven(lo);
        const compas::DistOptions3 o{.halo = halo, .periodic = periodic, .partition = p};
        Array u(rt(), p.domain(), o);
        const std::array<int, 3> g = p.grid();
        const int me = rt().process();
        EXPECT_EQ(u.owned(), p.part({me / (g[1] * g[2]), me / g[2] % g[1], me % g[2]}));
        EXPECT_EQ(dist3::owned_over_job(u), p.domain().size());
        for (int step = 0; step < 3; ++step) {
          dist3::fill(u, step);
          u.exchange_halos();
          std::string first;
          EXPECT_EQ(dist3::wrong_halos(u, periodic, step, &first), 0)
              << compas::partition_text(p) << ", exchange " << step << ": " << first;
        }
      }
}

TEST(UserSplits, TeamAndOverlappedExchanges) {
  const compas::Partition3 p = uneven(0);
  const compas::DistOptions3 o{.periodic = {true, true, false}, .partition = p};
  Array u(rt(), p.domain(), o);
  dist3::fill(u, 1);
  auto x = u.begin_exchange();
  x.wait();
  std::string first;
  EXPECT_EQ(dist3::wrong_halos(u, o.periodic, 1, &first), 0) << first;
  dist3::fill(u, 2);
  rt().run([&](compas::ThreadCtx& t) { u.exchange_halos(t); });
  EXPECT_EQ(dist3::wrong_halos(u, o.periodic, 2, &first), 0) << first;
}

// What making an array over `p` throws, checked to be the same on every process.
std::string refusal(const compas::Partition3& p, const compas::Range3& dom,
                    std::array<int, 3> grid = {0, 0, 0}) {
  const std::string m =
      alike::error_of([&] { Array u(rt(), dom, {.grid = grid, .partition = p}); });
  alike::expect_everywhere(m);
  return m;
}

TEST(UserSplits, BadSplitsAreNamedAlikeEverywhere) {
  const compas::Partition3 good = uneven(0);
  const compas::Range3 dom = good.domain();
  compas::Partition3 p = good;
  p.splits[1].back() += 1;  // past the domain's end
  EXPECT_NE(refusal(p, dom).find("boundary " + std::to_string(p.splits[1].size() - 1) +
                                 " of the rows is " + std::to_string(p.splits[1].back()) +
                                 ": the last boundary is the domain's end, " +
                                 std::to_string(dom.rows.hi)),
            std::string::npos);
  p = good;
  p.splits[2].front() = 1;
  EXPECT_NE(refusal(p, dom).find("boundary 0 of the columns is 1: the first boundary is the "
                                 "domain's first index, 0"),
            std::string::npos);
  p = good;
  p.splits[0].insert(p.splits[0].begin() + 1, 0);  // an empty part
  EXPECT_NE(refusal(p, dom).find("boundary 1 of the planes is 0, not above boundary 0 (0): "
                                 "boundaries rise"),
            std::string::npos);
  p = good;
  p.splits[0].insert(p.splits[0].begin() + 1, 1);  // one part too many
  EXPECT_NE(refusal(p, dom).find("parts for " + std::to_string(rt().processes()) +
                                 " processes: one part per process"),
            std::string::npos);
  p = good;
  p.splits[2].clear();
  EXPECT_NE(refusal(p, dom).find("0 boundaries of the columns given: at least 2"),
            std::string::npos);
  EXPECT_NE(refusal(good, dom, {0, good.grid()[1] + 1, 0}).find("the grid asks"),
            std::string::npos);
  // A halo wider than the smallest part the splits make (2 planes).
  const std::string m = alike::error_of([&] {
    Array u(rt(), dom, {.halo = {3, 1, 1}, .periodic = {true, false, false}, .partition = good});
  });
  EXPECT_NE(m.find("halo 3 of the planes is wider than the smallest part (2 planes)"),
            std::string::npos)
      << m;
}

TEST(UserSplits, SplitsThatDifferBetweenProcessesAreNamed) {
  const int p = rt().processes();
  if (p == 1) GTEST_SKIP() << "needs two processes";
  compas::Partition3 mine;  // planes over the P processes, two each: {0, 2, ..., 2P}
  for (int q = 0; q <= p; ++q) mine.splits[0].push_back(2 * q);
  mine.splits[1] = {0, 3};
  mine.splits[2] = {0, 4};
  if (rt().process() == p - 1) mine.splits[0][static_cast<std::size_t>(p - 1)] -= 1;
  const std::string m = alike::error_of([&] { Array u(rt(), mine.domain(), {.partition = mine}); });
  alike::expect_everywhere(m);
  const std::string last = std::to_string(2 * (p - 1) - 1) + ", " + std::to_string(2 * p) + "}";
  EXPECT_NE(m.find("rank 0 a 3-D [0, " + std::to_string(2 * p) + ")"), std::string::npos) << m;
  EXPECT_NE(m.find("rank " + std::to_string(p - 1) + " a 3-D"), std::string::npos) << m;
  EXPECT_NE(m.find(last), std::string::npos) << m;
}

}  // namespace
