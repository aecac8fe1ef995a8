// Process groups (group.hpp): compas::split, group_of, grid_rows and grid_cols, and every
// collective of collectives.hpp on a Group. Every rank of a compas-run job runs this with
// test_runtime (P = 1..5, a 2 x 2 grid at P = 4). Every value received is checked against what its
// sender contributed (a formula of its job rank), the orders against a serial reference of the
// grouping, and bad input ends the call with the same error on every process of the group.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "../common/job_main.hpp"
#include "compas/compas.hpp"

namespace {

// What job rank `from` sends to job rank `to` as its i-th element of call `k`.
std::int64_t code(int from, int to, std::size_t i, int k) {
  return 1000000 * from + 1000 * (to + 1) + 10 * static_cast<std::int64_t>(i) + k;
}

template <class F>
std::string error_of(F&& call) {
  try {
    call();
  } catch (const compas::CollectiveError& e) {
    return e.what();
  }
  return "";
}

// The serial reference of split: the job ranks of `colour` by key, then rank.
std::vector<int> expected_members(const std::vector<int>& colours, const std::vector<int>& keys,
                                  int colour) {
  std::vector<int> m;
  for (int r = 0; r < P(); ++r)
    if (colours[static_cast<std::size_t>(r)] == colour) m.push_back(r);
  std::stable_sort(m.begin(), m.end(), [&](int a, int b) {
    return keys[static_cast<std::size_t>(a)] < keys[static_cast<std::size_t>(b)];
  });
  return m;
}

void check_shape(const compas::Group& g, const std::vector<int>& want) {
  ASSERT_EQ(g.members(), want);
  ASSERT_EQ(g.processes(), static_cast<int>(want.size()));
  ASSERT_EQ(g.job_rank(g.process()), me());
  for (int i = 0; i < g.processes(); ++i)
    EXPECT_EQ(g.job_rank(i), want[static_cast<std::size_t>(i)]);
}

void check_broadcast(compas::Group& g, int k) {
  for (int root = 0; root < g.processes(); ++root) {
    std::vector<std::int64_t> v(3, -1);
    if (g.process() == root)
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = code(me(), -1, i, k);
    compas::broadcast(g, std::span<std::int64_t>(v), root);
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], code(g.job_rank(root), -1, i, k));
  }
}

void check_gathers(compas::Group& g, int k) {
  const auto n = static_cast<std::size_t>(g.processes());
  const auto all = compas::allgather(g, code(me(), -1, 0, k));
  ASSERT_EQ(all.size(), n);
  for (std::size_t s = 0; s < n; ++s) EXPECT_EQ(all[s], code(g.job_rank(int(s)), -1, 0, k));
  // Lengths that differ by group rank (0 on group rank 0).
  std::vector<std::int64_t> mine(static_cast<std::size_t>(g.process()));
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = code(me(), -1, i, k);
  const auto v = compas::allgatherv(g, std::span<const std::int64_t>(mine));
  const auto at_root = compas::gather(g, std::span<const std::int64_t>(mine), g.processes() - 1);
  ASSERT_EQ(at_root.data.empty(), g.process() != g.processes() - 1 || n == 1);
  for (std::size_t s = 0; s < n; ++s) {
    ASSERT_EQ(v.counts[s], s);
    for (std::size_t i = 0; i < s; ++i) {
      EXPECT_EQ(v.data[v.offsets[s] + i], code(g.job_rank(int(s)), -1, i, k));
      if (!at_root.data.empty()) {
        EXPECT_EQ(at_root.data[at_root.offsets[s] + i], code(g.job_rank(int(s)), -1, i, k));
      }
    }
  }
}

void check_alltoalls(compas::Group& g, int k) {
  const auto n = static_cast<std::size_t>(g.processes());
  std::vector<std::int64_t> send, recv(2 * n);
  for (std::size_t d = 0; d < n; ++d)
    for (std::size_t i = 0; i < 2; ++i) send.push_back(code(me(), g.job_rank(int(d)), i, k));
  compas::alltoall(g, std::span<const std::int64_t>(send), std::span<std::int64_t>(recv));
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t i = 0; i < 2; ++i)
      EXPECT_EQ(recv[2 * s + i], code(g.job_rank(int(s)), me(), i, k));
  // alltoallv: group rank d gets d elements from everyone.
  std::vector<std::size_t> counts(n);
  std::vector<std::int64_t> sendv;
  for (std::size_t d = 0; d < n; ++d) {
    counts[d] = d;
    for (std::size_t i = 0; i < d; ++i) sendv.push_back(code(me(), g.job_rank(int(d)), i, k));
  }
  const auto got = compas::alltoallv(g, std::span<const std::int64_t>(sendv), counts);
  for (std::size_t s = 0; s < n; ++s) {
    ASSERT_EQ(got.counts[s], static_cast<std::size_t>(g.process()));
    for (std::size_t i = 0; i < got.counts[s]; ++i)
      EXPECT_EQ(got.data[got.offsets[s] + i], code(g.job_rank(int(s)), me(), i, k));
  }
}

// An associative operator that is not commutative (appending decimal digits): its result lists
// the members in the order they were combined.
struct Digits {
  std::int64_t v, scale;
};
Digits append(const Digits& a, const Digits& b) {
  return {a.v * b.scale + b.v, a.scale * b.scale};
}

void check_reductions(compas::Group& g, int k) {
  std::int64_t sum = 0, order = 0;
  for (int r : g.members()) {
    sum += code(r, -1, 0, k);
    order = order * 10 + r;
  }
  EXPECT_EQ(compas::allreduce(g, code(me(), -1, 0, k), compas::op::sum{}), sum);
  EXPECT_EQ(compas::allreduce(g, Digits{me(), 10}, append).v, order);
  std::vector<double> in = {double(me()), -double(me())}, out(2);
  compas::allreduce<double>(g, in, std::span<double>(out), compas::comm::Op::max);
  EXPECT_EQ(out[0], *std::max_element(g.members().begin(), g.members().end()));
  const auto r = compas::reduce(g, Digits{me(), 10}, append, 0);
  if (g.process() == 0) {
    EXPECT_EQ(r.v, order);
  }
  // MPI_Exscan within the group: the members before this one, in group order.
  std::int64_t before = 0, scale = 1;
  for (int i = 0; i < g.process(); ++i) {
    before = before * 10 + g.job_rank(i);
    scale *= 10;
  }
  const Digits scan = compas::exclusive_scan(g, Digits{me(), 10}, Digits{0, 1}, append);
  EXPECT_EQ(scan.v, before);
  EXPECT_EQ(scan.scale, scale);
  compas::barrier(g);
}

void check_all(compas::Group& g, int k) {
  check_broadcast(g, k);
  check_gathers(g, k);
  check_alltoalls(g, k);
  check_reductions(g, k);
}

TEST(Groups, SplitByParityInRankOrder) {
  std::vector<int> colours, keys;
  for (int r = 0; r < P(); ++r) {
    colours.push_back(r % 2);
    keys.push_back(0);
  }
  compas::Group g = compas::split(rt(), me() % 2);
  check_shape(g, expected_members(colours, keys, me() % 2));
  check_all(g, 1);
}

TEST(Groups, SplitByAKeyThatReversesTheOrder) {
  std::vector<int> colours(static_cast<std::size_t>(P()), 7), keys;
  for (int r = 0; r < P(); ++r) keys.push_back(-r);
  compas::Group g = compas::split(rt(), 7, -me());
  check_shape(g, expected_members(colours, keys, 7));
  EXPECT_EQ(g.process(), P() - 1 - me());
  check_all(g, 2);
}

TEST(Groups, AnUndefinedColourIsInNoGroup) {
  const int colour = me() == 0 ? compas::undefined : 1;
  compas::Group g = compas::split(rt(), colour, me());
  if (me() == 0) {
    EXPECT_TRUE(g.empty());
    EXPECT_EQ(g.process(), -1);
    EXPECT_THROW(compas::barrier(g), std::logic_error);
    EXPECT_THROW(compas::broadcast(g, 1, 0), std::logic_error);
  } else {
    std::vector<int> want;
    for (int r = 1; r < P(); ++r) want.push_back(r);
    check_shape(g, want);
    check_all(g, 3);
  }
}

// The rows and columns of the grids that fit P ({2, 2} at P = 4), as a serial reference.
TEST(Groups, RowsAndColumnsOfProcessGrids) {
  std::vector<compas::ProcessGrid> grids = {{1, P()}, {P(), 1}, {0, 0}};
  if (P() == 4) grids.push_back({2, 2});
  for (const auto asked : grids) {
    const compas::Runtime::Grid chosen = rt().process_grid();
    const int rows = asked.rows ? asked.rows : chosen.rows, cols = P() / rows;
    std::vector<int> row, col;
    for (int c = 0; c < cols; ++c) row.push_back(me() / cols * cols + c);
    for (int r = 0; r < rows; ++r) col.push_back(r * cols + me() % cols);
    compas::Group gr = compas::grid_rows(rt(), asked), gc = compas::grid_cols(rt(), asked);
    check_shape(gr, row);
    check_shape(gc, col);
    check_all(gr, 4);
    check_all(gc, 5);
  }
}

// The row and the column group used alternately, and groups running different collectives at
// the same time (row 0 broadcasts while row 1 gathers).
TEST(Groups, RowAndColumnGroupsAlternatelyAndDifferentCollectivesAtOnce) {
  compas::Group row = compas::grid_rows(rt()), col = compas::grid_cols(rt());
  for (int k = 0; k < 6; ++k) {
    if ((me() / (P() / rt().process_grid().rows) + k) % 2 == 0)
      check_broadcast(row, 10 + k);
    else
      check_gathers(row, 10 + k);
    check_reductions(col, 20 + k);
    check_alltoalls(row, 30 + k);
  }
}

TEST(GroupsBadInput, RootOutsideTheGroupIsNamed) {
  compas::Group g = compas::split(rt(), me() % 2, -me());
  const std::string err = error_of([&] { compas::broadcast(g, 1, g.processes()); });
  std::string want = "compas::broadcast on the group of processes " + [&] {
    std::string s = "{";
    for (int i = 0; i < g.processes(); ++i) s += (i ? ", " : "") + std::to_string(g.job_rank(i));
    return s + "}";
  }();
  want += ": root " + std::to_string(g.processes()) + " on group rank 0 (process " +
          std::to_string(g.job_rank(0)) + ") is outside the group: group ranks are 0.." +
          std::to_string(g.processes() - 1);
  EXPECT_EQ(err, want);
  check_all(g, 6);  // the group still works
}

TEST(GroupsBadInput, LengthsThatDifferWithinAGroupNameBoth) {
  if (P() < 3) GTEST_SKIP() << "needs a group of two";
  compas::Group g = compas::split(rt(), me() % 2, -me());
  if (g.processes() < 2) GTEST_SKIP() << "this process's group has one member";
  std::vector<int> data(g.process() == 1 ? 5 : 4, 1);
  const std::string err = error_of([&] { compas::broadcast(g, std::span<int>(data), 0); });
  EXPECT_NE(err.find("group rank 0 (process " + std::to_string(g.job_rank(0)) +
                     ") passes 4 elements, group rank 1 (process " + std::to_string(g.job_rank(1)) +
                     ") passes 5"),
            std::string::npos)
      << err;
  check_all(g, 7);
}

// Rank 1 lists {0, 1}, rank 0 every rank: every process throws the same error naming both.
TEST(GroupsBadInput, MemberListsThatDisagreeAreNamedEverywhere) {
  if (P() < 3) GTEST_SKIP() << "needs three processes";
  std::vector<int> m = {me()};
  if (me() == 1) m = {0, 1};
  if (me() == 0)
    for (int r = 1; r < P(); ++r) m.push_back(r);
  const std::string err = error_of([&] { compas::group_of(rt(), m); });
  EXPECT_NE(err.find("compas::group_of: "), std::string::npos) << err;
  EXPECT_NE(err.find("rank 0 has group {0, 1, 2"), std::string::npos) << err;
  EXPECT_NE(err.find("rank 1, a member of it, has {0, 1}"), std::string::npos) << err;
  compas::Group g = compas::group_of(rt(), {me()});  // the job goes on
  check_all(g, 8);
}

TEST(GroupsBadInput, GridSidesThatDoNotMakeTheJob) {
  const std::string err = error_of([&] { compas::grid_rows(rt(), {P() + 1, 0}); });
  EXPECT_EQ(err, "compas::grid_rows: process grid " + std::to_string(P() + 1) + " x 0 for " +
                     std::to_string(P()) + " processes: the sides must multiply to the " +
                     std::to_string(P()) + " processes");
}

// Making a group is collective over the whole job: on a Group each form is refused on every
// member with an error naming the call, the group and why, before anything collective (the
// others, which do not call it, go on), and the group stays usable.
TEST(GroupsBadInput, MakingAGroupOnAGroupIsRefusedNamingWhy) {
  compas::Group g = compas::split(rt(), me() % 2, me());
  const std::string where = " on a group on the group of processes " + [&] {
    std::string s = "{";
    for (int i = 0; i < g.processes(); ++i) s += (i ? ", " : "") + std::to_string(g.job_rank(i));
    return s + "}";
  }();
  const std::string why =
      ": making a group is collective over the whole job (each group's scratch window is a "
      "job-wide allocation); call it with the Runtime";
  const auto refused = [&](const char* call, auto&& f) {
    try {
      f();
      ADD_FAILURE() << call << " on a group was accepted";
    } catch (const std::logic_error& e) {
      EXPECT_EQ(std::string(e.what()), call + where + why);
    }
  };
  refused("compas::split", [&] { compas::split(g, 0); });
  refused("compas::group_of", [&] { compas::group_of(g, {me()}); });
  refused("compas::grid_rows", [&] { compas::grid_rows(g); });
  refused("compas::grid_cols", [&] { compas::grid_cols(g, {1, 0}); });
  check_all(g, 10);
}

TEST(GroupsBadInput, CallsFromAnotherThreadAreRefused) {
  compas::Group g = compas::grid_rows(rt());
  std::vector<std::string> errors;
  std::thread([&] {
    auto attempt = [&](auto&& call) {
      try {
        call();
        errors.emplace_back("returned");
      } catch (const std::logic_error& e) {
        errors.emplace_back(e.what());
      }
    };
    attempt([&] { compas::split(rt(), 0); });
    attempt([&] { compas::grid_cols(rt()); });
    attempt([&] { compas::group_of(rt(), {me()}); });
    attempt([&] { compas::barrier(g); });
    attempt([&] { compas::broadcast(g, 1, 0); });
    attempt([&] { compas::allreduce(g, 1, compas::op::sum{}); });
  }).join();
  for (const auto& e : errors)
    EXPECT_NE(e.find("other than the one that made the Runtime"), std::string::npos) << e;
  check_all(g, 9);
}

}  // namespace
