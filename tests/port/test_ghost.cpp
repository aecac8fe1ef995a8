// Partition (user partitions) and GhostPlan / GhostedVector (ghost.hpp): every rank of a
// compas-run job (P = 1..4, T = 1..2) runs this. Local counts are unequal (5 + 3 r on rank r);
// each rank's ghost list comes from a seed of its rank, so every rank can rebuild every other's
// and compute the serial result (a ghost holds its owner's entry; after accumulate an owned entry
// is its value plus every rank's ghosts of it) and compare.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/job_main.hpp"
#include "alike_errors.hpp"
#include "compas/compas.hpp"

namespace {

using compas::index;

compas::Runtime& rt() {
  return *g_rt;
}
int me() {
  return rt().process();
}
int P() {
  return rt().processes();
}

index count_of(int rank) {
  return 5 + 3 * rank;
}
index total() {
  index n = 0;
  for (int r = 0; r < P(); ++r) n += count_of(r);
  return n;
}
compas::Partition unequal() {
  return compas::Partition::from_local(rt(), count_of(me()));
}
double f(index i) {
  return 0.5 * static_cast<double>(i) + 3.0;
}

// Rank r's ghosts: any global indices (own ones and duplicates included), empty on rank 1.
template <class I>
std::vector<I> ghosts_of(int rank) {
  if (rank == 1) return {};
  std::mt19937_64 gen(77 + static_cast<std::uint64_t>(rank));
  std::uniform_int_distribution<index> pick(0, total() - 1);
  std::vector<I> g(static_cast<std::size_t>(11 + 4 * rank));
  for (auto& i : g) i = static_cast<I>(pick(gen));
  g.push_back(g.front());  // a duplicate for sure
  return g;
}

TEST(Partition, BlockSplitIsTheFormula) {
  const auto d = compas::Partition::block(rt(), {3, 103});
  const index n = 100, base = n / P(), extra = n % P();
  for (int r = 0; r < P(); ++r) {
    const index lo = 3 + r * base + std::min<index>(r, extra);
    EXPECT_EQ(d.part(r), (compas::Range{lo, lo + base + (r < extra ? 1 : 0)})) << r;
  }
  for (index i = 3; i < 103; ++i) EXPECT_TRUE(d.part(d.owner(i)).contains(i)) << i;
  EXPECT_TRUE(d.is_block());
}

TEST(Partition, FromLocalCountsAndSplitsAgree) {
  const auto d = unequal();
  EXPECT_EQ(d.domain(), (compas::Range{0, total()}));
  EXPECT_EQ(d.owned().size(), count_of(me()));
  index lo = 0;
  for (int r = 0; r < P(); ++r) {
    EXPECT_EQ(d.part(r), (compas::Range{lo, lo + count_of(r)}));
    lo += count_of(r);
  }
  for (index i = 0; i < total(); ++i) EXPECT_TRUE(d.part(d.owner(i)).contains(i)) << i;
  const auto s = compas::Partition::from_splits(rt(), d.starts());
  EXPECT_TRUE(s == d);
  EXPECT_EQ(s.digest(), d.digest());
}

TEST(Partition, BadCountsFailAlikeEverywhere) {
  std::string e =
      alike::error_of([] { (void)compas::Partition::from_local(rt(), me() == P() - 1 ? 0 : 4); });
  EXPECT_NE(e.find("process " + std::to_string(P() - 1) + " holds 0 indices: 1 or more"),
            std::string::npos)
      << e;
  alike::expect_everywhere(e);
  e = alike::error_of([] {
    (void)compas::Partition::from_local(rt(), count_of(me()), compas::Range{0, total() + 1});
  });
  EXPECT_NE(e.find("add up to " + std::to_string(total()) + ", not to the " +
                   std::to_string(total() + 1)),
            std::string::npos)
      << e;
  alike::expect_everywhere(e);
  std::vector<index> starts{0};
  for (int r = 0; r < P(); ++r)
    starts.push_back(starts.back() + 2 + (me() == 0 && P() > 1 ? 1 : 0));
  e = alike::error_of([&] { (void)compas::Partition::from_splits(rt(), starts); });
  if (P() > 1) {
    EXPECT_NE(e.find("every process passes the same"), std::string::npos) << e;
  }
  alike::expect_everywhere(e);
  starts.push_back(starts.back() + 1);
  if (P() == 1) {
    e = alike::error_of([&] { (void)compas::Partition::from_splits(rt(), starts); });
    EXPECT_NE(e.find("3 split points: 2 (one more than the processes)"), std::string::npos) << e;
  }
}

TEST(Partition, DistArrayOnUnequalParts) {
  const auto d = unequal();
  compas::DistArray<double> u(rt(), d);
  EXPECT_EQ(u.owned(), d.owned());
  for (index i = u.lo(); i < u.hi(); ++i) u[i] = f(i);
  u.exchange_halos();
  if (u.lo() > 0) {
    EXPECT_EQ(u[u.lo() - 1], f(u.lo() - 1));
  }
  if (u.hi() < total()) {
    EXPECT_EQ(u[u.hi()], f(u.hi()));
  }
  for (index i = 0; i < total(); ++i) EXPECT_EQ(u.owner(i), d.owner(i)) << i;
  EXPECT_TRUE(u.like().partition() == d);
  // GatherPlan finds owners by the same split points.
  std::vector<index> all(static_cast<std::size_t>(total()));
  for (index i = 0; i < total(); ++i) all[static_cast<std::size_t>(i)] = total() - 1 - i;
  compas::GatherPlan plan(u, all);
  std::vector<double> got(all.size());
  plan.gather(got);
  for (std::size_t k = 0; k < all.size(); ++k) EXPECT_EQ(got[k], f(all[k])) << k;
  // An UpdateBatch routes by them too.
  compas::DistArray<std::int64_t> t(rt(), d);
  compas::UpdateBatch<std::int64_t> batch(t, compas::comm::AtomicOp::add);
  for (index i = 0; i < total(); ++i) batch.add(i, 1);
  batch.flush();
  for (index i = t.lo(); i < t.hi(); ++i) EXPECT_EQ(t[i], P()) << i;
}

template <class I>
void check_update() {
  const auto d = unequal();
  const std::vector<I> mine = ghosts_of<I>(me());
  compas::GhostPlan plan(d, mine);
  EXPECT_EQ(plan.ghost_count(), static_cast<index>(mine.size()));
  compas::GhostedVector<double> v(plan), w(plan, -1.0);
  for (index k = 0; k < v.owned_size(); ++k) v[k] = f(d.owned().lo + k), w[k] = 2 * f(k);
  v.update_ghosts();
  w.update_ghosts();  // one plan, several vectors
  for (std::size_t k = 0; k < mine.size(); ++k) {
    EXPECT_EQ(v.ghosts()[k], f(mine[k])) << k;
    EXPECT_EQ(w.ghosts()[k], 2 * f(mine[k] - d.part(d.owner(mine[k])).lo)) << k;
  }
  // A DistArray of the partition, its ghosts into a buffer.
  compas::DistArray<double> u(rt(), d);
  for (index i = u.lo(); i < u.hi(); ++i) u[i] = -f(i);
  std::vector<double> g(mine.size());
  plan.update(u, std::span<double>(g));
  for (std::size_t k = 0; k < mine.size(); ++k) EXPECT_EQ(g[k], -f(mine[k])) << k;
}

// One plan, vectors of several element types in turn (each has its own staging area).
TEST(GhostPlan, ElementTypesInTurn) {
  const auto d = unequal();
  const std::vector<std::int64_t> mine = ghosts_of<std::int64_t>(me());
  compas::GhostPlan plan(d, mine);
  compas::GhostedVector<double> a(plan);
  compas::GhostedVector<float> b(plan);
  compas::GhostedVector<std::int32_t> c(plan);
  for (int round = 0; round < 3; ++round) {
    for (index k = 0; k < a.owned_size(); ++k) {
      const index g = d.owned().lo + k;
      a[k] = f(g) + round, b[k] = static_cast<float>(g + round), c[k] = static_cast<int>(2 * g);
    }
    a.update_ghosts();
    b.update_ghosts();
    if (round != 1) c.update_ghosts();
    a.update_ghosts();
    for (std::size_t k = 0; k < mine.size(); ++k) {
      EXPECT_EQ(a.ghosts()[k], f(mine[k]) + round) << k;
      EXPECT_EQ(b.ghosts()[k], static_cast<float>(mine[k] + round)) << k;
      EXPECT_EQ(c.ghosts()[k], static_cast<int>(2 * mine[k])) << k;
    }
  }
}

TEST(GhostPlan, UpdateFillsGhostsInt32) {
  check_update<std::int32_t>();
}
TEST(GhostPlan, UpdateFillsGhostsInt64) {
  check_update<std::int64_t>();
}

TEST(GhostPlan, AccumulateAddsIntoOwners) {
  const auto d = unequal();
  const std::vector<std::int64_t> mine = ghosts_of<std::int64_t>(me());
  compas::GhostPlan plan(d, mine);
  compas::GhostedVector<std::int64_t> v(plan);
  for (index k = 0; k < v.owned_size(); ++k) v[k] = 7 * (d.owned().lo + k);
  for (std::size_t k = 0; k < mine.size(); ++k) v.ghosts()[k] = 1000 * (me() + 1) + k;
  v.accumulate_ghosts();
  std::vector<std::int64_t> want(static_cast<std::size_t>(total()));
  for (index i = 0; i < total(); ++i) want[static_cast<std::size_t>(i)] = 7 * i;
  for (int r = 0; r < P(); ++r) {
    const auto g = ghosts_of<std::int64_t>(r);
    for (std::size_t k = 0; k < g.size(); ++k)
      want[static_cast<std::size_t>(g[k])] += 1000 * (r + 1) + static_cast<std::int64_t>(k);
  }
  for (index k = 0; k < v.owned_size(); ++k)
    EXPECT_EQ(v[k], want[static_cast<std::size_t>(d.owned().lo + k)]) << k;
  for (std::size_t k = 0; k < mine.size(); ++k)
    EXPECT_EQ(v.ghosts()[k], 1000 * (me() + 1) + static_cast<std::int64_t>(k));
}

// A CSR's columns of this process's rows: neighbours and a far column, global.
template <class I>
std::vector<I> columns(const compas::Partition& d) {
  std::vector<I> c;
  for (index i = d.owned().lo; i < d.owned().hi; ++i)
    for (index j : {i - 1, i, i + 1, (i * 7 + 3) % total()})
      if (j >= 0 && j < total()) c.push_back(static_cast<I>(j));
  return c;
}

template <class I>
void check_columns() {
  const auto d = unequal();
  const std::vector<I> global = columns<I>(d);
  std::vector<I> cols = global;
  auto plan = compas::GhostPlan::for_columns(d, cols);
  if (P() == 1) {
    EXPECT_EQ(plan.ghost_count(), 0);
  }
  compas::GhostedVector<double> x(plan);
  for (index k = 0; k < x.owned_size(); ++k) x[k] = f(d.owned().lo + k);
  x.update_ghosts();
  for (std::size_t e = 0; e < cols.size(); ++e) {
    ASSERT_GE(cols[e], 0);
    ASSERT_LT(cols[e], x.size());
    EXPECT_EQ(x[cols[e]], f(global[e])) << e;
  }
  std::vector<index> seen;  // every ghost distinct and off-process
  for (index k = x.owned_size(); k < x.size(); ++k)
    seen.push_back(static_cast<index>(x[k] * 2 - 6));
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_TRUE(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
  for (index g : seen) EXPECT_FALSE(d.owned().contains(g)) << g;
}

TEST(GhostPlan, ForColumnsRenumbersInt32) {
  check_columns<std::int32_t>();
}
TEST(GhostPlan, ForColumnsRenumbersInt64) {
  check_columns<std::int64_t>();
}

// Over 64 Ki columns for_columns splits its passes over the OpenMP team (two threads here, one
// part each): the plan and the rewritten columns are what one pass over the whole list gives, a
// column off-process in both parts is one ghost, and a bad column in the second part is named at
// its position in the whole list.
TEST(GhostPlan, ForColumnsSplitOverTheTeamAsOnePass) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "libgomp's fork and join are not instrumented: tsan would report them";
#endif
  const index rows = 40000 + 10 * me();
  const auto d = compas::Partition::from_local(rt(), rows);
  const index n = d.domain().size(), lo = d.owned().lo;
  std::vector<std::int32_t> cols;
  for (index i = lo; i < lo + rows; ++i)
    for (index j : {i - 1, i, i + 1, (i * 7919 + 11) % n, (lo + rows) % n})
      if (j >= 0 && j < n) cols.push_back(static_cast<std::int32_t>(j));
  ASSERT_GT(cols.size(), std::size_t{1} << 17);
  std::vector<std::int32_t> want = cols, ghosts;  // one pass, by hand
  for (auto c : cols)
    if (!d.owned().contains(c)) ghosts.push_back(c);
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  for (auto& c : want)
    c = static_cast<std::int32_t>(
        d.owned().contains(c)
            ? c - lo
            : rows + (std::lower_bound(ghosts.begin(), ghosts.end(), c) - ghosts.begin()));
  const int threads = omp_get_max_threads();
  omp_set_num_threads(2);
  std::vector<std::int32_t> got = cols;
  auto plan = compas::GhostPlan::for_columns(d, got);
  EXPECT_EQ(plan.ghost_count(), static_cast<index>(ghosts.size()));
  EXPECT_EQ(got, want);
  std::vector<std::int32_t> bad = cols;
  const std::size_t at = bad.size() - 3;  // in the second part
  if (me() == 0) bad[at] = static_cast<std::int32_t>(n + 5);
  const std::string c = alike::error_of([&] { (void)compas::GhostPlan::for_columns(d, bad); });
  omp_set_num_threads(threads);
  const std::string where = me() == 0 ? std::to_string(at) + " is outside" : "";  // 0's list
  EXPECT_NE(c.find("process 0: column " + std::to_string(n + 5) + " at position " + where),
            std::string::npos)
      << c;
}

// for_columns looks at the columns in blocks and skips a block of owned ones with one range
// check: one column outside the owned range, at a block's edges or in the last, short block, is
// still found, as a ghost when another process owns it and as an error outside the domain.
template <class I>
void check_one_column_off(std::size_t at, index value) {
  const auto d = unequal();
  std::vector<I> cols(2600, static_cast<I>(d.owned().lo));
  const bool inside = d.domain().contains(value);
  if (me() == 0) cols[at] = static_cast<I>(value);
  if (inside) {
    auto plan = compas::GhostPlan::for_columns(d, cols);
    EXPECT_EQ(plan.ghost_count(), me() == 0 && !d.owned().contains(value) ? 1 : 0) << at;
    return;
  }
  const std::string c = alike::error_of([&] { (void)compas::GhostPlan::for_columns(d, cols); });
  EXPECT_NE(c.find("process 0: column " + std::to_string(value) + " at position " +
                   std::to_string(at) + " is outside"),
            std::string::npos)
      << c;
}
template <class I>
void check_columns_off_everywhere() {
  const index n = unequal().domain().size(), top = std::numeric_limits<I>::max();
  for (std::size_t at : {std::size_t{0}, std::size_t{1023}, std::size_t{1024}, std::size_t{2047},
                         std::size_t{2048}, std::size_t{2599}})
    for (index value : {index{-1}, index{std::numeric_limits<I>::min()}, n, top, count_of(0),
                        count_of(0) - 1, n - 1})  // process 0 owns [0, count_of(0))
      check_one_column_off<I>(at, value);
}
TEST(GhostPlan, ForColumnsFindsOneColumnOffInAnyBlock) {
  check_columns_off_everywhere<std::int32_t>();
  check_columns_off_everywhere<std::int64_t>();
}

// A GhostedVector made from owned values holds them, its ghosts T{} until the first update, and
// refuses a count other than owned_size(), naming both.
TEST(GhostedVector, FromOwnedValues) {
  const auto d = unequal();
  std::vector<std::int64_t> mine = ghosts_of<std::int64_t>(me());
  compas::GhostPlan plan(d, mine);
  std::vector<double> owned(static_cast<std::size_t>(plan.owned_size()));
  for (std::size_t k = 0; k < owned.size(); ++k) owned[k] = f(d.owned().lo + static_cast<index>(k));
  compas::GhostedVector<double> v(plan, std::span<const double>(owned));
  ASSERT_EQ(v.size(), plan.local_size());
  for (index k = 0; k < v.owned_size(); ++k) EXPECT_EQ(v[k], owned[static_cast<std::size_t>(k)]);
  for (index k = v.owned_size(); k < v.size(); ++k) EXPECT_EQ(v[k], 0.0) << k;
  owned.push_back(1.0);
  try {
    compas::GhostedVector<double> w(plan, std::span<const double>(owned));
    ADD_FAILURE() << "a wrong count was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(owned.size()) + " owned values given, " +
                                         std::to_string(plan.owned_size()) + " are needed"),
              std::string::npos)
        << e.what();
  }
}

// From 64 Ki entries on a GhostedVector's constructors write it on the OpenMP team: every entry,
// once (owned values copied, ghosts T{}; or every entry the fill value).
TEST(GhostedVector, LargeVectorsAreWrittenWholeOnTheTeam) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "libgomp's fork and join are not instrumented: tsan would report them";
#endif
  const index n = (index{1} << 17) + 3 * me();
  const auto d = compas::Partition::from_local(rt(), n);
  std::vector<std::int64_t> ghosts;
  for (index k = 0; k < (index{1} << 16) + 5; ++k)
    ghosts.push_back((d.owned().hi + 7 * k) % d.domain().hi);  // others' entries when P > 1
  compas::GhostPlan plan(d, ghosts);
  std::vector<double> owned(static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < owned.size(); ++k) owned[k] = f(static_cast<index>(k));
  compas::GhostedVector<double> v(plan, std::span<const double>(owned)), w(plan, -2.5);
  ASSERT_EQ(v.size(), plan.local_size());
  ASSERT_EQ(w.size(), plan.local_size());
  int wrong = 0;
  for (index k = 0; k < v.size(); ++k) {
    const double want = k < n ? owned[static_cast<std::size_t>(k)] : 0.0;
    if (v[k] != want && ++wrong <= 3)
      ADD_FAILURE() << "v[" << k << "] = " << v[k] << ", want " << want;
    if (w[k] != -2.5 && ++wrong <= 3) ADD_FAILURE() << "w[" << k << "] = " << w[k];
  }
}

TEST(GhostPlan, IndexOutsideTheDomainFailsEverywhere) {
  const auto d = unequal();
  std::vector<std::int64_t> mine = ghosts_of<std::int64_t>(me());
  if (me() == P() - 1) mine.push_back(total() + 4);
  const std::string e = alike::error_of([&] { compas::GhostPlan plan(d, mine); });
  EXPECT_NE(e.find("process " + std::to_string(P() - 1) + ": index " + std::to_string(total() + 4) +
                   " at position " + std::to_string(ghosts_of<std::int64_t>(P() - 1).size())),
            std::string::npos)
      << e;
  alike::expect_everywhere(e);
  std::vector<std::int32_t> cols = columns<std::int32_t>(d);
  if (me() == 0) cols[1] = -3;
  const std::vector<std::int32_t> before = cols;
  const std::string c = alike::error_of([&] { (void)compas::GhostPlan::for_columns(d, cols); });
  EXPECT_NE(c.find("process 0: column -3 at position 1 is outside the domain"), std::string::npos)
      << c;
  alike::expect_everywhere(c);
  EXPECT_EQ(cols, before);  // unchanged on an error
}

TEST(GhostPlan, DifferentPartitionsFailEverywhere) {
  const auto a = unequal();
  const auto b = compas::Partition::block(rt(), a.domain());
  const std::vector<std::int64_t> none;
  if (P() > 1) {
    const std::string e = alike::error_of([&] { compas::GhostPlan p(me() == 0 ? a : b, none); });
    EXPECT_NE(e.find("every process passes the same partition"), std::string::npos) << e;
    alike::expect_everywhere(e);
  }
  // At a call: a DistArray of another partition, or a vector of another length, on one process.
  compas::GhostPlan plan(a, ghosts_of<std::int64_t>(me()));
  compas::DistArray<double> on_a(rt(), a), on_b(rt(), b);
  std::vector<double> g(static_cast<std::size_t>(plan.ghost_count()));
  std::string e = alike::error_of([&] { plan.update(on_a, std::span<double>(g)); });
  EXPECT_EQ(e, "");
  e = alike::error_of([&] { plan.update(me() == 0 ? on_b : on_a, std::span<double>(g)); });
  if (P() > 1 || !(a == b)) {
    EXPECT_NE(e.find("process 0: the DistArray's partition is not the plan's"), std::string::npos)
        << e;
    alike::expect_everywhere(e);
  }
  std::vector<double> raw(static_cast<std::size_t>(plan.local_size() + (me() == P() - 1 ? 1 : 0)));
  e = alike::error_of([&] { plan.update(std::span<double>(raw)); });
  EXPECT_NE(e.find("process " + std::to_string(P() - 1) + ": a vector of " +
                   std::to_string(count_of(P() - 1) +
                                  static_cast<index>(ghosts_of<std::int64_t>(P() - 1).size()) + 1) +
                   " elements"),
            std::string::npos)
      << e;
  alike::expect_everywhere(e);
  // Still usable after refusals (nothing moved).
  compas::GhostedVector<double> x(plan);
  for (index k = 0; k < x.owned_size(); ++k) x[k] = f(a.owned().lo + k);
  x.update_ghosts();
  const auto mine = ghosts_of<std::int64_t>(me());
  for (std::size_t k = 0; k < mine.size(); ++k) EXPECT_EQ(x.ghosts()[k], f(mine[k]));
}

}  // namespace
