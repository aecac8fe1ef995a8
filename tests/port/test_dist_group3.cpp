// 3-D arrays on a group of processes and compas::redistribute, across real processes: a group
// array's cells are its members' alone, its exchanges run among them (the others hold nothing and
// are refused), a whole level moves between the job and a subset and back (agglomeration and
// redistribution) with every cell checked against the global function, and the coarse levels of
// a multigrid hierarchy continue on the subset. Mismatches are the same error on every process.
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

// The groups these tests put arrays on: the first process, the first half (rounded up), the last
// processes in reverse order, and every process.
std::vector<std::vector<int>> subsets() {
  const int p = rt().processes();
  std::vector<int> half, last, all;
  for (int r = 0; r < (p + 1) / 2; ++r) half.push_back(r);
  for (int r = p - 1; r >= p / 2; --r) last.push_back(r);
  for (int r = 0; r < p; ++r) all.push_back(r);
  return {{0}, half, last, all};
}

// This process's group of `members` (empty when it is not one of them).
compas::Group group_on(const std::vector<int>& members) {
  for (int r : members)
    if (r == rt().process()) return compas::group_of(rt(), members);
  return compas::group_of(rt(), {});
}

std::string text(const std::vector<int>& v) {
  std::string t;
  for (int r : v) t += std::to_string(r) + " ";
  return t;
}

TEST(GroupArray, OnlyTheMembersHoldCellsAndExchange) {
  const compas::DistOptions3 o{.periodic = {true, false, true}};
  for (const std::vector<int>& members : subsets()) {
    compas::Group g = group_on(members);
    Array u(g, {{0, 6}, {0, 5}, {0, 4}}, o);
    const bool in = !g.empty();
    EXPECT_EQ(u.member(), in);
    EXPECT_EQ(u.members(), members);
    EXPECT_EQ(u.owned().empty(), !in);
    EXPECT_EQ(dist3::owned_over_job(u), u.domain().size()) << "group " << text(members);
    for (int step = 0; step < 3; ++step) {
      dist3::fill(u, step);
      if (in) u.exchange_halos();
      std::string first;
      EXPECT_EQ(dist3::wrong_halos(u, o.periodic, step, &first), 0)
          << "group " << text(members) << ", exchange " << step << ": " << first;
    }
    if (in) {
      rt().run([&](compas::ThreadCtx& t) { u.exchange_halos(t); });
      std::string first;
      EXPECT_EQ(dist3::wrong_halos(u, o.periodic, 2, &first), 0) << "team: " << first;
    } else {
      EXPECT_EQ(dist3::wrong_halos(u, o.periodic, 2, nullptr), 0);
    }
  }
}

TEST(GroupArray, UseByANonMemberIsRefused) {
  const int p = rt().processes();
  if (p == 1) GTEST_SKIP() << "needs two processes";
  compas::Group g = group_on({0});
  Array u(g, {{0, 4}, {0, 4}, {0, 4}});
  if (rt().process() == 0) {
    u.exchange_halos();
    return;
  }
  const std::string m = alike::error_of([&] { u.exchange_halos(); });
  EXPECT_NE(m.find("lives on the group of processes {0}: process " +
                   std::to_string(rt().process()) + " is not a member"),
            std::string::npos)
      << m;
  EXPECT_NE(alike::error_of([&] { u.accumulate_halos(); }).find("is not a member"),
            std::string::npos);
  EXPECT_NE(alike::error_of([&] { (void)u.begin_exchange(); }).find("is not a member"),
            std::string::npos);
}

TEST(GroupArray, GroupsThatDifferAreNamedAlikeEverywhere) {
  const int p = rt().processes();
  if (p == 1) GTEST_SKIP() << "needs two processes";
  // Every process in a group of its own parity: two groups, not one and the rest empty.
  compas::Group g = compas::split(rt(), rt().process() % 2);
  const std::string m = alike::error_of([&] { Array u(g, {{0, 4}, {0, 4}, {0, 4}}); });
  alike::expect_everywhere(m);
  EXPECT_NE(m.find("process 0 passes the group {0"), std::string::npos) << m;
  EXPECT_NE(m.find("process 1 the group {1"), std::string::npos) << m;
  EXPECT_NE(m.find("the members pass one group, every other process an empty one"),
            std::string::npos)
      << m;
  // A group array on some processes, a job array on others.
  compas::Group first = group_on({0});
  const std::string n = alike::error_of([&] {
    if (rt().process() == 0)
      Array u(first, {{0, 4}, {0, 4}, {0, 4}});
    else
      Array u(rt(), {{0, 4}, {0, 4}, {0, 4}});
  });
  alike::expect_everywhere(n);
  EXPECT_NE(n.find("on a group"), std::string::npos) << n;
}

// Agglomeration and back: a level on every process (an uneven split of its own) onto each subset,
// checked there, changed, and redistributed onto a third distribution on every process.
TEST(Redistribute, AgglomerateOntoASubsetAndBack) {
  const compas::Range3 dom{{0, 7}, {-2, 5}, {0, 8}};
  for (const std::vector<int>& members : subsets()) {
    Array full(rt(), dom, {.periodic = {true, true, true}});
    Array back(rt(), dom, {.grid = {1, 1, rt().processes()}});
    compas::Group g = group_on(members);
    Array few(g, dom, {.periodic = {true, true, true}});
    dist3::fill(full, 1);
    compas::redistribute(full, few);
    std::string first;
    EXPECT_EQ(dist3::wrong_owned(few, 1, &first), 0) << "onto " << text(members) << ": " << first;
    if (few.member()) {
      dist3::fill(few, 2);  // the coarse solve's result, and its halos on the subset
      few.exchange_halos();
    }
    EXPECT_EQ(dist3::wrong_halos(few, {true, true, true}, 2, &first), 0) << first;
    compas::redistribute(few, back);
    EXPECT_EQ(dist3::wrong_owned(back, 2, &first), 0) << "from " << text(members) << ": " << first;
    compas::redistribute(back, full);  // job to job, another split
    EXPECT_EQ(dist3::wrong_owned(full, 2, &first), 0) << first;
  }
}

// The pattern of a V-cycle whose coarse levels have fewer cells than the process grid: the job's
// levels coarsened while they align, the coarsest of them agglomerated onto one process, the
// levels below on it, and the correction sent back.
TEST(Redistribute, CoarseLevelsContinueOnASubset) {
  const int p = rt().processes();
  const compas::Partition3 lowest =
      compas::block_partition({{0, 2 * p}, {0, 4}, {0, 4}}, p, {p, 1, 1});
  const compas::DistOptions3 o{.periodic = {true, true, true}, .partition = lowest.refined(4)};
  std::vector<Array> level;
  level.emplace_back(rt(), o.partition.domain(), o);
  while (level.size() < 3) level.push_back(level.back().coarsened(2));
  compas::Group one = group_on({0});
  Array gathered(one, level.back().domain(), {.periodic = {true, true, true}});
  std::vector<Array> below;
  below.push_back(gathered.coarsened(2));
  dist3::fill(level.back(), 3);
  compas::redistribute(level.back(), gathered);
  std::string first;
  EXPECT_EQ(dist3::wrong_owned(gathered, 3, &first), 0) << first;
  EXPECT_EQ(below.back().domain(), (compas::Range3{{0, p}, {0, 2}, {0, 2}}));
  EXPECT_EQ(below.back().member(), rt().process() == 0);
  if (below.back().member()) {
    dist3::fill(below.back(), 4);
    below.back().exchange_halos();
  }
  EXPECT_EQ(dist3::wrong_halos(below.back(), {true, true, true}, 4, &first), 0) << first;
  dist3::fill(gathered, 5);
  compas::redistribute(gathered, level.back());
  EXPECT_EQ(dist3::wrong_owned(level.back(), 5, &first), 0) << first;
}

TEST(Redistribute, MismatchesAreNamedAlikeEverywhere) {
  Array a(rt(), {{0, 8}, {0, 8}, {0, 8}}), b = a.like();
  Array c(rt(), {{0, 8}, {0, 8}, {0, 9}});
  std::string m = alike::error_of([&] { compas::redistribute(a, c); });
  alike::expect_everywhere(m);
  EXPECT_NE(m.find("DistArray #" + std::to_string(a.number()) +
                   " covers [0, 8) x [0, 8) x [0, 8), "
                   "DistArray #" +
                   std::to_string(c.number()) +
                   " [0, 8) x [0, 8) x [0, 9): "
                   "redistribute copies between arrays of one domain"),
            std::string::npos)
      << m;
  auto x = b.begin_exchange();
  m = alike::error_of([&] { compas::redistribute(a, b); });
  alike::expect_everywhere(m);
  EXPECT_NE(m.find("has a halo exchange pending"), std::string::npos) << m;
  x.wait();
  if (rt().processes() == 1) return;
  Array& to = rt().process() == 0 ? b : a;  // process 0 copies a into b, the others a into a
  m = alike::error_of([&] { compas::redistribute(a, to); });
  alike::expect_everywhere(m);
  EXPECT_NE(m.find("calls redistribute (to) on DistArray #" + std::to_string(b.number())),
            std::string::npos)
      << m;
}

}  // namespace
