// Process collectives over groups of a job's processes (ProcessCollectives with a member list),
// across real processes: CTest starts this program through compas-run with P = 1..4. Every rank
// runs every test in the same order; results are checked against serial references computed
// from what each job rank contributes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "compas/comm/comm.hpp"

namespace {

using namespace compas::comm;

std::unique_ptr<Bootstrap> g_boot;
std::unique_ptr<Comm> g_comm;

int rank() {
  return g_comm->rank();
}
int nranks() {
  return g_comm->size();
}

// This rank's group when the job is split by rank % 2, members in rank order (reversed when
// `reverse`).
std::vector<int> parity_group(bool reverse) {
  std::vector<int> m;
  for (int r = 0; r < nranks(); ++r)
    if (r % 2 == rank() % 2) m.push_back(r);
  if (reverse) std::reverse(m.begin(), m.end());
  return m;
}

std::int64_t value_of(int job_rank, std::size_t i, int call) {
  return 1000 * job_rank + static_cast<std::int64_t>(i) * 7 + call;
}

// Every collective on `c`, checked against what its members (job ranks) contribute.
void check_group(ProcessCollectives& c, int call) {
  const std::vector<int>& m = c.members();
  const auto n = static_cast<std::size_t>(c.size());
  ASSERT_EQ(m[static_cast<std::size_t>(c.rank())], rank());
  for (int root = 0; root < c.size(); ++root) {
    std::vector<std::int64_t> v(5, -1);
    if (c.rank() == root)
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = value_of(rank(), i, call);
    c.broadcast(std::span<std::int64_t>(v), root);
    for (std::size_t i = 0; i < v.size(); ++i)
      ASSERT_EQ(v[i], value_of(m[static_cast<std::size_t>(root)], i, call)) << "root " << root;
  }
  std::vector<std::int64_t> sum(3);
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = value_of(rank(), i, call);
  c.allreduce(std::span<std::int64_t>(sum), Op::sum);
  for (std::size_t i = 0; i < sum.size(); ++i) {
    std::int64_t want = 0;
    for (int r : m) want += value_of(r, i, call);
    ASSERT_EQ(sum[i], want);
  }
  const std::int64_t mine = value_of(rank(), 0, call);
  std::vector<std::int64_t> all(n);
  c.allgather(std::span<const std::int64_t>(&mine, 1), std::span<std::int64_t>(all));
  for (std::size_t g = 0; g < n; ++g) ASSERT_EQ(all[g], value_of(m[g], 0, call));
  // alltoallv: group index d gets d + 1 values from each member.
  std::vector<std::size_t> sc(n), rc(n, static_cast<std::size_t>(c.rank()) + 1);
  std::vector<std::int64_t> send, recv((static_cast<std::size_t>(c.rank()) + 1) * n);
  for (std::size_t d = 0; d < n; ++d) {
    sc[d] = d + 1;
    for (std::size_t k = 0; k <= d; ++k) send.push_back(value_of(rank(), d * 10 + k, call));
  }
  c.alltoallv(std::span<const std::int64_t>(send), std::span<const std::size_t>(sc),
              std::span<std::int64_t>(recv), std::span<const std::size_t>(rc));
  const auto me = static_cast<std::size_t>(c.rank());
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t k = 0; k <= me; ++k)
      ASSERT_EQ(recv[s * (me + 1) + k], value_of(m[s], me * 10 + k, call));
  // A caller's operator that is associative but not commutative (appending decimal digits): the
  // result lists the members' job ranks in group order.
  struct Digits {
    std::int64_t v, scale;
  };
  const Digits d = c.allreduce(Digits{rank(), 10}, [](const Digits& a, const Digits& b) {
    return Digits{a.v * b.scale + b.v, a.scale * b.scale};
  });
  std::int64_t want = 0;
  for (int r : m) want = want * 10 + r;
  EXPECT_EQ(d.v, want);
  c.barrier();
}

TEST(Group, ParityGroupsInRankOrder) {
  ProcessCollectives c(*g_comm, parity_group(false));
  EXPECT_EQ(c.size(), (nranks() - rank() % 2 + 1) / 2);
  for (int call = 0; call < 3; ++call) check_group(c, call);
}

TEST(Group, ParityGroupsInReverseOrder) {
  ProcessCollectives c(*g_comm, parity_group(true));
  for (int call = 0; call < 3; ++call) check_group(c, call);
}

TEST(Group, EveryoneReversed) {
  std::vector<int> m;
  for (int r = nranks() - 1; r >= 0; --r) m.push_back(r);
  CollectivesOptions o;
  for (int r = 0; r < nranks(); ++r) o.hosts.push_back({r});  // one host per process
  ProcessCollectives c(*g_comm, m, o);
  EXPECT_EQ(c.rank(), nranks() - 1 - rank());
  // Every process, but not in rank order: the hosts are in group indices all the same.
  for (std::size_t h = 0; h < c.hosts().size(); ++h)
    EXPECT_EQ(c.hosts()[h], std::vector<int>{nranks() - 1 - static_cast<int>(h)});
  check_group(c, 5);
}

// Two groups per process used alternately: the rows and the columns of a 2 x (P/2) grid (P even),
// else the parity groups and the whole job reversed.
TEST(Group, TwoGroupsAlternately) {
  std::vector<int> a, b;
  if (nranks() % 2 == 0) {
    const int cols = nranks() / 2;
    for (int c = 0; c < cols; ++c) a.push_back(rank() / cols * cols + c);
    for (int r = 0; r < 2; ++r) b.push_back(r * cols + rank() % cols);
  } else {
    a = parity_group(false);
    for (int r = nranks() - 1; r >= 0; --r) b.push_back(r);
  }
  ProcessCollectives ca(*g_comm, a), cb(*g_comm, b);
  for (int call = 0; call < 4; ++call) {
    check_group(ca, call);
    check_group(cb, 100 + call);
  }
}

TEST(Group, HostsAreGroupIndices) {
  CollectivesOptions o;
  for (int r = 0; r < nranks(); ++r) o.hosts.push_back({r});  // one host per process
  ProcessCollectives c(*g_comm, parity_group(true), o);
  ASSERT_EQ(c.hosts().size(), static_cast<std::size_t>(c.size()));
  for (std::size_t h = 0; h < c.hosts().size(); ++h)
    EXPECT_EQ(c.hosts()[h], std::vector<int>{c.size() - 1 - static_cast<int>(h)});
  check_group(c, 7);
}

// Rank 1 thinks its group is {0, 1}, rank 0 that it is every rank: every process throws the same
// message naming both and their lists, and no window is left half made.
TEST(GroupErrors, DisagreeingListsNameBothRanks) {
  if (nranks() < 3) GTEST_SKIP() << "needs three processes";
  std::vector<int> m;
  if (rank() == 1) {
    m = {0, 1};
  } else if (rank() == 0) {
    for (int r = 0; r < nranks(); ++r) m.push_back(r);
  } else {
    m = {rank()};
  }
  try {
    ProcessCollectives c(*g_comm, m);
    ADD_FAILURE() << "lists that disagree were accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 0 has group {0, 1, 2"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 1, a member of it, has {0, 1}"), std::string::npos) << what;
  }
  ProcessCollectives after(*g_comm, parity_group(false));  // the job goes on
  check_group(after, 9);
}

TEST(GroupErrors, ListWithoutThisProcessOrOutsideTheJob) {
  std::vector<int> m = parity_group(false);
  if (rank() == nranks() - 1) m = {nranks()};
  try {
    ProcessCollectives c(*g_comm, m);
    ADD_FAILURE() << "a bad list was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(
        what.find("rank " + std::to_string(nranks() - 1) + "'s group {" + std::to_string(nranks()) +
                  "} names rank " + std::to_string(nranks()) + ", outside the job"),
        std::string::npos)
        << what;
  }
}

// Members of a group disagreeing on a size: the receivers name the sender by its job rank.
TEST(GroupErrors, SizesDisagreeingNameJobRanks) {
  if (nranks() < 3) GTEST_SKIP() << "needs three processes (a group of two)";
  const std::vector<int> m = parity_group(true);
  ProcessCollectives c(*g_comm, m);
  if (c.size() < 2) GTEST_SKIP() << "this rank's group has one process";
  const std::size_t n = 1 + static_cast<std::size_t>(c.rank());
  std::vector<std::int64_t> mine(n), all(n * static_cast<std::size_t>(c.size()));
  try {
    c.allgather(std::span<const std::int64_t>(mine), std::span<std::int64_t>(all));
    ADD_FAILURE() << "allgather with different sizes did not throw";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    const int other = m[c.rank() == 0 ? 1 : 0];
    EXPECT_NE(what.find("rank " + std::to_string(other) + " sends"), std::string::npos) << what;
    EXPECT_NE(what.find("to rank " + std::to_string(rank()) + ", which expects"), std::string::npos)
        << what;
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  try {
    g_boot = Bootstrap::from_environment();
    g_comm = std::make_unique<Comm>(*g_boot);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_collectives_group: cannot form the job: %s\n", e.what());
    return 1;
  }
  const int rc = RUN_ALL_TESTS();
  g_comm.reset();
  g_boot.reset();
  return rc;
}
