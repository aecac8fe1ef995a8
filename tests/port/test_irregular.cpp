// GatherPlan (irregular.hpp): every rank of a compas-run job (P = 1..4, T = 1..2) runs this. Each
// rank's index list comes from a seed of its rank, so every rank can rebuild every other's and
// compute the serial result (the values gathered, the sums and xors after a scatter, the old
// values of fetch_add in rank-then-position order) and compare with what the plan did.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/job_main.hpp"
#include "compas/compas.hpp"

namespace {

using compas::index;

constexpr index kN = 37;  // uneven over 2..4 processes

// Rank r's index list: empty on ranks 1, 4, ...; duplicates and every owner otherwise.
std::vector<index> list_of(int rank, index n = kN) {
  if (rank % 3 == 1) return {};
  std::mt19937_64 gen(1234 + static_cast<std::uint64_t>(rank));
  std::uniform_int_distribution<index> pick(0, n - 1);
  std::vector<index> idx(static_cast<std::size_t>(25 + 9 * rank));
  for (auto& i : idx) i = pick(gen);
  idx.push_back(idx.front());  // a duplicate for sure
  return idx;
}
// What rank r adds at its position k.
std::int64_t value_of(int rank, std::size_t k) {
  return 1000 * (rank + 1) + static_cast<std::int64_t>(k);
}
std::int64_t initial(index i) {
  return 7 * i + 3;
}

template <class T, class F>
void fill(compas::DistArray<T>& u, F f) {
  for (index i = u.lo(); i < u.hi(); ++i) u[i] = f(i);
}

template <class F>
std::string error_of(F&& call) {
  try {
    call();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(Irregular, GatherMatchesTheSerialReference) {
  compas::DistArray<std::int64_t> u(rt(), kN);
  fill(u, initial);
  const auto idx = list_of(me());
  compas::GatherPlan plan(u, idx);
  ASSERT_EQ(plan.size(), idx.size());
  std::vector<std::int64_t> out(idx.size(), -1);
  plan.gather(out);
  for (std::size_t k = 0; k < idx.size(); ++k) EXPECT_EQ(out[k], initial(idx[k])) << "k " << k;
}

TEST(Irregular, GatherOfOwnedIndicesOnly) {
  compas::DistArray<double> u(rt(), kN);
  fill(u, [](index i) { return 0.5 * static_cast<double>(i); });
  std::vector<index> idx;
  for (index i = u.hi() - 1; i >= u.lo(); --i) idx.push_back(i);
  std::vector<double> out(idx.size());
  compas::gather_indexed(u, std::span<const index>(idx), std::span<double>(out));
  for (std::size_t k = 0; k < idx.size(); ++k) EXPECT_EQ(out[k], 0.5 * static_cast<double>(idx[k]));
}

TEST(Irregular, PlanReusedSeesTheArrayChange) {
  compas::DistArray<std::int64_t> u(rt(), kN), v(rt(), kN);
  fill(u, initial);
  fill(v, [](index i) { return -i; });
  const auto idx = list_of(me());
  compas::GatherPlan plan(u, idx);
  std::vector<std::int64_t> out(idx.size());
  plan.gather(out);
  for (index i = u.lo(); i < u.hi(); ++i) u[i] += 100;
  plan.gather(out);
  for (std::size_t k = 0; k < idx.size(); ++k) EXPECT_EQ(out[k], initial(idx[k]) + 100);
  swap(u, v);  // the plan follows what u holds
  plan.gather(out);
  for (std::size_t k = 0; k < idx.size(); ++k) EXPECT_EQ(out[k], -idx[k]);
}

// Every rank's additions in rank then position order, applied serially.
std::vector<std::int64_t> serial_sums() {
  std::vector<std::int64_t> x(kN);
  for (index i = 0; i < kN; ++i) x[static_cast<std::size_t>(i)] = initial(i);
  for (int r = 0; r < P(); ++r) {
    const auto idx = list_of(r);
    for (std::size_t k = 0; k < idx.size(); ++k)
      x[static_cast<std::size_t>(idx[k])] += value_of(r, k);
  }
  return x;
}
std::vector<std::int64_t> my_values(std::size_t n) {
  std::vector<std::int64_t> v(n);
  for (std::size_t k = 0; k < n; ++k) v[k] = value_of(me(), k);
  return v;
}

TEST(Irregular, ScatterAddSumsDuplicatesAcrossRanks) {
  compas::DistArray<std::int64_t> u(rt(), kN);
  fill(u, initial);
  const auto idx = list_of(me());
  compas::GatherPlan plan(u, idx);
  plan.scatter_add(my_values(idx.size()));
  const auto x = serial_sums();
  for (index i = u.lo(); i < u.hi(); ++i) EXPECT_EQ(u[i], x[static_cast<std::size_t>(i)]) << i;
  // The one-shot form adds the same again.
  compas::scatter_add_indexed(u, std::span<const index>(idx),
                              std::span<const std::int64_t>(my_values(idx.size())));
  for (index i = u.lo(); i < u.hi(); ++i)
    EXPECT_EQ(u[i], 2 * x[static_cast<std::size_t>(i)] - initial(i)) << i;
}

TEST(Irregular, XorScatterMatchesTheSerialXor) {
  compas::DistArray<std::uint64_t> u(rt(), kN);
  fill<std::uint64_t>(
      u, [](index i) { return static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL; });
  const auto idx = list_of(me());
  std::vector<std::uint64_t> bits(idx.size());
  for (std::size_t k = 0; k < bits.size(); ++k)
    bits[k] = static_cast<std::uint64_t>(value_of(me(), k)) << 20;
  compas::GatherPlan plan(u, idx);
  plan.scatter(bits, [](std::uint64_t a, std::uint64_t b) { return a ^ b; });
  std::vector<std::uint64_t> x(kN);
  for (index i = 0; i < kN; ++i)
    x[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL;
  for (int r = 0; r < P(); ++r) {
    const auto l = list_of(r);
    for (std::size_t k = 0; k < l.size(); ++k)
      x[static_cast<std::size_t>(l[k])] ^= static_cast<std::uint64_t>(value_of(r, k)) << 20;
  }
  for (index i = u.lo(); i < u.hi(); ++i) EXPECT_EQ(u[i], x[static_cast<std::size_t>(i)]) << i;
}

TEST(Irregular, OneShotXorScatterMatchesTheSerialXor) {
  compas::DistArray<std::uint64_t> u(rt(), kN);
  fill(u, [](index i) { return static_cast<std::uint64_t>(i); });
  const auto idx = list_of(me());
  std::vector<std::uint64_t> bits(idx.size());
  for (std::size_t k = 0; k < bits.size(); ++k) bits[k] = 1ULL << (k % 63);
  const auto xor_into = [](std::uint64_t a, std::uint64_t b) { return a ^ b; };
  compas::scatter_indexed(u, std::span<const index>(idx), std::span<const std::uint64_t>(bits),
                          xor_into);
  std::vector<std::uint64_t> x(kN);
  for (index i = 0; i < kN; ++i) x[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(i);
  for (int r = 0; r < P(); ++r) {
    const auto l = list_of(r);
    for (std::size_t k = 0; k < l.size(); ++k)
      x[static_cast<std::size_t>(l[k])] ^= 1ULL << (k % 63);
  }
  for (index i = u.lo(); i < u.hi(); ++i) EXPECT_EQ(u[i], x[static_cast<std::size_t>(i)]) << i;
  // values of the wrong length on one rank: the same error everywhere, nothing applied.
  const int bad = P() - 1;
  const std::vector<index> three = {0, 1, kN - 1};
  const std::vector<std::uint64_t> v(me() == bad ? 2 : 3, 1);
  EXPECT_EQ(error_of([&] {
              compas::scatter_indexed(u, std::span<const index>(three),
                                      std::span<const std::uint64_t>(v), xor_into);
            }),
            "compas::GatherPlan: process " + std::to_string(bad) +
                ": values holds 2 elements, 3 are needed");
  for (index i = u.lo(); i < u.hi(); ++i) EXPECT_EQ(u[i], x[static_cast<std::size_t>(i)]) << i;
}

TEST(Irregular, FetchAddOldValuesInRankThenPositionOrder) {
  compas::DistArray<std::int64_t> u(rt(), kN);
  fill(u, initial);
  const auto idx = list_of(me());
  compas::GatherPlan plan(u, idx);
  std::vector<std::int64_t> old(idx.size(), -1);
  plan.fetch_add(my_values(idx.size()), old);
  // Serially: ranks in order, each one's list in order; keep what rank me() saw.
  std::vector<std::int64_t> x(kN), expected;
  for (index i = 0; i < kN; ++i) x[static_cast<std::size_t>(i)] = initial(i);
  for (int r = 0; r < P(); ++r) {
    const auto l = list_of(r);
    for (std::size_t k = 0; k < l.size(); ++k) {
      if (r == me()) expected.push_back(x[static_cast<std::size_t>(l[k])]);
      x[static_cast<std::size_t>(l[k])] += value_of(r, k);
    }
  }
  EXPECT_EQ(old, expected);
  for (index i = u.lo(); i < u.hi(); ++i) EXPECT_EQ(u[i], x[static_cast<std::size_t>(i)]) << i;
}

// Sorted lists (a sparse code's columns) are moved in blocks: the same results.
TEST(Irregular, SortedListsGiveTheSameResults) {
  compas::DistArray<std::int64_t> u(rt(), kN);
  fill(u, initial);
  std::vector<index> idx;
  for (index i = me() % 2; i < kN; ++i) idx.push_back(i);
  compas::GatherPlan plan(u, idx);
  std::vector<std::int64_t> out(idx.size()), old(idx.size());
  plan.gather(out);
  for (std::size_t k = 0; k < idx.size(); ++k) ASSERT_EQ(out[k], initial(idx[k])) << k;
  plan.fetch_add(my_values(idx.size()), old);
  plan.gather(out);
  for (std::size_t k = 0; k < idx.size(); ++k) {
    std::int64_t before = initial(idx[k]), total = before;
    for (int r = 0; r < P(); ++r) {
      if (idx[k] < r % 2) continue;
      const auto k_r = static_cast<std::size_t>(idx[k] - r % 2);  // its position on rank r
      if (r < me()) before += value_of(r, k_r);
      total += value_of(r, k_r);
    }
    EXPECT_EQ(old[k], before) << k;
    EXPECT_EQ(out[k], total) << k;
  }
}

// A long sorted list (every index of the array, 100,003 of them, and a second copy of it): its
// copies are blocks cut at 16,384 entries, shared by the team; every value lands where it must,
// across the cuts.
TEST(Irregular, LongRunsAreCopiedWholeAcrossTheirCuts) {
  const index n = 100003;
  compas::DistArray<std::int64_t> u(rt(), n);
  fill(u, initial);
  std::vector<index> idx;
  for (int copy = 0; copy < 2; ++copy)
    for (index i = 0; i < n; ++i) idx.push_back(i);
  compas::GatherPlan plan(u, idx);
  std::vector<std::int64_t> out(idx.size(), -1);
  plan.gather(out);
  int wrong = 0;
  for (std::size_t k = 0; k < idx.size(); ++k)
    if (out[k] != initial(idx[k]) && ++wrong <= 3)
      ADD_FAILURE() << "out[" << k << "] = " << out[k] << ", want " << initial(idx[k]);
}

TEST(Irregular, IndexOutOfRangeOnOneRankThrowsTheSameEverywhere) {
  compas::DistArray<double> u(rt(), kN);
  const int bad = P() - 1;
  std::vector<index> idx = {0, kN - 1, 1};
  if (me() == bad) idx[2] = kN + 5;
  const std::string msg = error_of([&] { compas::GatherPlan plan(u, idx); });
  EXPECT_EQ(msg, "compas::GatherPlan: process " + std::to_string(bad) + ": index " +
                     std::to_string(kN + 5) +
                     " at position 2 is outside the array's global range [0, " +
                     std::to_string(kN) + ")");
  EXPECT_THROW(compas::GatherPlan(u, std::vector<index>{-1}), std::out_of_range);
  // Nothing was left half-done: a good plan works after.
  std::vector<double> out(1);
  compas::GatherPlan(u, std::vector<index>{kN - 1}).gather(out);
}

TEST(Irregular, PlansOnDifferentArraysAreRefusedEverywhere) {
  if (P() == 1) GTEST_SKIP() << "needs two processes";
  compas::DistArray<double> a(rt(), kN), b(rt(), kN + 3);
  const std::vector<index> idx = {1, 2};
  const std::string msg = error_of([&] { compas::GatherPlan plan(me() == 0 ? a : b, idx); });
  const std::string parts = " in 1 x " + std::to_string(P()) + " parts and elements of 8 bytes";
  EXPECT_NE(msg.find("process 0 passes a 1-D array of [0, 37)" + parts), std::string::npos) << msg;
  EXPECT_NE(msg.find("process 1 a 1-D array of [0, 40)" + parts), std::string::npos) << msg;
}

TEST(Irregular, PlanAgainstOneShotOrAnotherCutIsRefusedEverywhere) {
  if (P() == 1) GTEST_SKIP() << "needs two processes";
  compas::DistArray<std::int64_t> u(rt(), kN);
  const std::vector<index> idx = {1, 2};
  const std::vector<std::int64_t> ones = {1, 1};
  const std::string msg = error_of([&] {
    if (me() == 0)
      compas::GatherPlan plan(u, idx);
    else
      compas::scatter_indexed(u, std::span<const index>(idx), std::span<const std::int64_t>(ones),
                              std::plus<>{});
  });
  EXPECT_NE(msg.find("process 0 makes a GatherPlan, process 1 calls compas::scatter_indexed"),
            std::string::npos)
      << msg;
  // The same domain cut over rows on one process and over the process grid on the others.
  compas::DistArray<std::int64_t, 2> rows(rt(), 8, 8),
      grid(rt(), 8, 8, {.decomposition = compas::Decomposition::grid});
  const std::vector<std::array<index, 2>> ij = {{0, 0}};
  const std::string cut = error_of([&] { compas::GatherPlan p(me() == 0 ? rows : grid, ij); });
  EXPECT_NE(cut.find("process 0 passes a 2-D array of [0, 8) x [0, 8) in " + std::to_string(P()) +
                     " x 1 parts"),
            std::string::npos)
      << cut;
}

TEST(Irregular, WrongSpanOrCallOnOneRankThrowsTheSameEverywhere) {
  compas::DistArray<std::int64_t> u(rt(), kN);
  const std::vector<index> idx = {0, 3, kN - 1};
  compas::GatherPlan plan(u, idx);
  const int bad = P() - 1;
  std::vector<std::int64_t> out(me() == bad ? 2 : 3);
  EXPECT_EQ(error_of([&] { plan.gather(out); }), "compas::GatherPlan::gather: process " +
                                                     std::to_string(bad) +
                                                     ": out holds 2 elements, 3 are needed");
  out.resize(3);
  std::vector<std::int64_t> old(3);
  if (P() > 1) {
    const std::string msg = error_of([&] {
      if (me() == 0)
        plan.gather(out);
      else
        plan.fetch_add(out, old);
    });
    EXPECT_NE(msg.find("process 0 calls gather, process 1 calls fetch_add"), std::string::npos)
        << msg;
  }
  plan.gather(out);  // still usable
  EXPECT_EQ(out[1], 0);
}

TEST(Irregular, GatherAndScatterOnA2DArray) {
  for (const auto d : {compas::Decomposition::rows, compas::Decomposition::grid}) {
    compas::DistArray<std::int64_t, 2> u(rt(), 9, 11, {.decomposition = d});
    const auto f = [](index i, index j) { return 100 * i + j; };
    for (index i = u.rows().lo; i < u.rows().hi; ++i)
      for (index j = u.cols().lo; j < u.cols().hi; ++j) u(i, j) = f(i, j);
    std::vector<std::array<index, 2>> idx;
    for (const index k : list_of(me(), 99)) idx.push_back({k / 11, k % 11});
    compas::GatherPlan plan(u, idx);
    std::vector<std::int64_t> out(idx.size());
    plan.gather(out);
    for (std::size_t k = 0; k < idx.size(); ++k) EXPECT_EQ(out[k], f(idx[k][0], idx[k][1]));
    std::vector<std::int64_t> ones(idx.size(), 1);
    plan.scatter_add(ones);
    std::vector<std::int64_t> hits(99, 0);
    for (int r = 0; r < P(); ++r)
      for (const index k : list_of(r, 99)) ++hits[static_cast<std::size_t>(k)];
    // The one-shot form on pairs: subtracts the ones again, then adds them back as a plan did.
    const std::vector<std::int64_t> minus(idx.size(), -1);
    compas::scatter_indexed(u, std::span<const std::array<index, 2>>(idx),
                            std::span<const std::int64_t>(minus), std::plus<>{});
    plan.scatter_add(ones);
    for (index i = u.rows().lo; i < u.rows().hi; ++i)
      for (index j = u.cols().lo; j < u.cols().hi; ++j)
        EXPECT_EQ(u(i, j), f(i, j) + hits[static_cast<std::size_t>(i * 11 + j)]);
    const std::vector<std::array<index, 2>> bad = {{9, 0}};
    EXPECT_EQ(error_of([&] { compas::GatherPlan p(u, bad); }),
              "compas::GatherPlan: process 0: index (9, 0) at position 0 is outside the array's "
              "global range [0, 9) x [0, 11)");
  }
}

// A raw column list (any order, duplicates: a sparse matrix's) made a plan of its distinct
// entries and rewritten in place to positions in the gathered buffer. Long enough that the copies
// and the rewriting run on the OpenMP team (4096 elements or more) under -t 2.
TEST(Irregular, PositionsRewriteARawListInPlace) {
  constexpr index n = 40000;
  compas::DistArray<std::int64_t> u(rt(), n);
  fill(u, initial);
  std::mt19937_64 gen(99 + static_cast<std::uint64_t>(me()));
  std::uniform_int_distribution<index> pick(0, n - 1);
  std::vector<index> col(30000);
  for (auto& c : col) c = pick(gen);
  const std::vector<index> raw = col;
  std::vector<index> distinct = raw;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  compas::GatherPlan plan(u, col, col);
  ASSERT_EQ(plan.size(), distinct.size());
  std::vector<std::int64_t> xs(plan.size(), -1);
  plan.gather(xs);
  for (std::size_t e = 0; e < raw.size(); ++e) {
    ASSERT_EQ(col[e], std::lower_bound(distinct.begin(), distinct.end(), raw[e]) - distinct.begin())
        << "e " << e;
    ASSERT_EQ(xs[static_cast<std::size_t>(col[e])], initial(raw[e])) << "e " << e;
  }
}

TEST(Irregular, PositionsOfPairsIntoTheirOwnSpan) {
  compas::DistArray<std::int64_t, 2> u(rt(), 9, 11, {.decomposition = compas::Decomposition::grid});
  const auto f = [](index i, index j) { return 100 * i + j; };
  for (index i = u.rows().lo; i < u.rows().hi; ++i)
    for (index j = u.cols().lo; j < u.cols().hi; ++j) u(i, j) = f(i, j);
  std::vector<std::array<index, 2>> idx;
  for (const index k : list_of(me(), 99)) idx.push_back({k / 11, k % 11});
  std::vector<index> at(idx.size(), -1);
  compas::GatherPlan plan(u, std::span<const std::array<index, 2>>(idx), std::span<index>(at));
  EXPECT_LT(plan.size(), idx.size() + (idx.empty() ? 1 : 0));  // the duplicate is listed once
  std::vector<std::int64_t> xs(plan.size());
  plan.gather(xs);
  for (std::size_t k = 0; k < idx.size(); ++k)
    EXPECT_EQ(xs[static_cast<std::size_t>(at[k])], f(idx[k][0], idx[k][1])) << "k " << k;
}

TEST(Irregular, PositionsOfTheWrongLengthOnOneRankAreRefusedEverywhere) {
  compas::DistArray<std::int64_t> u(rt(), kN);
  const std::vector<index> idx = {5, 0, 5, kN - 1};
  const int bad = P() - 1;
  std::vector<index> at(me() == bad ? 3 : 4, -1);
  EXPECT_EQ(error_of([&] { compas::GatherPlan p(u, std::span<const index>(idx), std::span(at)); }),
            "compas::GatherPlan: process " + std::to_string(bad) +
                ": positions holds 3 elements, 4 are needed");
  EXPECT_EQ(at[0], -1);  // nothing written
  at.resize(4);
  compas::GatherPlan plan(u, std::span<const index>(idx), std::span(at));  // still usable
  EXPECT_EQ(at, (std::vector<index>{1, 0, 1, 2}));
}

// The one-shot forms' old names forward to the _indexed ones for one release: the same values
// gathered, the same cells after the same additions and operator.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(Irregular, DeprecatedNamesForwardToTheIndexedForms) {
  compas::DistArray<std::int64_t> u(rt(), kN), v(rt(), kN);
  fill(u, initial);
  fill(v, initial);
  const auto idx = list_of(me());
  const std::span<const index> at(idx);
  std::vector<std::int64_t> old_form(idx.size(), -1), new_form(idx.size(), -2);
  compas::gather(u, at, std::span<std::int64_t>(old_form));
  compas::gather_indexed(v, at, std::span<std::int64_t>(new_form));
  EXPECT_EQ(old_form, new_form);
  std::vector<std::int64_t> add(idx.size());
  for (std::size_t k = 0; k < add.size(); ++k) add[k] = value_of(me(), k);
  compas::scatter_add(u, at, std::span<const std::int64_t>(add));
  compas::scatter_add_indexed(v, at, std::span<const std::int64_t>(add));
  const auto times = [](std::int64_t a, std::int64_t b) { return a * 3 + b; };
  compas::scatter(u, at, std::span<const std::int64_t>(add), times);
  compas::scatter_indexed(v, at, std::span<const std::int64_t>(add), times);
  bool changed = idx.empty();
  for (index i = u.lo(); i < u.hi(); ++i) {
    EXPECT_EQ(u[i], v[i]) << i;
    changed = changed || u[i] != initial(i);
  }
  EXPECT_TRUE(compas::allreduce(rt(), static_cast<int>(changed), compas::op::max{}) == 1);
}
#pragma GCC diagnostic pop

}  // namespace
