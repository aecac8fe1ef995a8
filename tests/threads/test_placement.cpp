// Placement policies on synthetic machines (expected values derived from placement.hpp), cpu
// lists, bind specs and process slices.
//
// The synthetic machines number PUs in topology order:
//   one socket  "pack:1 core:4 pu:2": core c holds PUs 2c (smt 0) and 2c+1 (smt 1), c = 0..3
//   two sockets "pack:2 core:4 pu:2": socket 0 = cores 0..3 = PUs 0..7, socket 1 = PUs 8..15
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/threads/placement.hpp"
#include "compas/threads/topology.hpp"

namespace ct = compas::threads;

namespace {

const ct::Topology& one_socket() {
  static const ct::Topology t = ct::Topology::synthetic("pack:1 core:4 pu:2");
  return t;
}
const ct::Topology& two_sockets() {
  static const ct::Topology t = ct::Topology::synthetic("pack:2 core:4 pu:2");
  return t;
}

ct::BindSpec spec(ct::BindPolicy p, std::vector<int> cpus = {}) {
  ct::BindSpec s;
  s.policy = p;
  s.cpus = std::move(cpus);
  return s;
}

std::vector<int> sockets_of(const ct::Topology& topo, const std::vector<int>& os) {
  std::vector<int> out;
  for (int cpu : os)
    out.push_back(topo.pu_list()[static_cast<std::size_t>(topo.find_pu(cpu))].socket);
  return out;
}

// Prefix of a vector.
std::vector<int> first(const std::vector<int>& v, std::size_t n) {
  return std::vector<int>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
}

// Expects place_threads to throw std::invalid_argument whose message contains every needle.
void expect_invalid(const ct::Topology& topo, int threads, const ct::BindSpec& s,
                    const std::vector<std::string>& needles, bool allow = false) {
  try {
    (void)ct::place_threads(topo, threads, s, allow);
    ADD_FAILURE() << "no exception for " << threads << " threads, bind " << s.to_string();
  } catch (const std::invalid_argument& e) {
    for (const auto& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "'" << e.what() << "' does not mention '" << n << "'";
  }
}

}  // namespace

// ---- compact ----------------------------------------------------------------------------------

TEST(Placement, CompactOneSocket) {
  const std::vector<int> all = {0, 2, 4, 6, 1, 3, 5, 7};  // cores first, SMT siblings last
  for (std::size_t t = 1; t <= all.size(); ++t) {
    const auto p =
        ct::place_threads(one_socket(), static_cast<int>(t), spec(ct::BindPolicy::compact));
    EXPECT_EQ(p.pu_of_thread, first(all, t)) << t << " threads";
    EXPECT_EQ(p.socket_of_thread, std::vector<int>(t, 0));
    EXPECT_FALSE(p.oversubscribed);
    EXPECT_EQ(p.sockets_used(), 1);
  }
}

TEST(Placement, CompactTwoSockets) {
  const std::vector<int> all = {0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15};
  for (std::size_t t = 1; t <= all.size(); ++t) {
    const auto p =
        ct::place_threads(two_sockets(), static_cast<int>(t), spec(ct::BindPolicy::compact));
    EXPECT_EQ(p.pu_of_thread, first(all, t)) << t << " threads";
    EXPECT_EQ(p.socket_of_thread, sockets_of(two_sockets(), first(all, t)));
    EXPECT_FALSE(p.oversubscribed);
  }
  // Four threads fill socket 0 first.
  const auto p4 = ct::place_threads(two_sockets(), 4, spec(ct::BindPolicy::compact));
  EXPECT_EQ(p4.socket_of_thread, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(p4.sockets_used(), 1);
  EXPECT_EQ(p4.describe(), "t0->cpu0 t1->cpu2 t2->cpu4 t3->cpu6");
}

// ---- scatter ----------------------------------------------------------------------------------

TEST(Placement, ScatterOneSocket) {
  // One socket: round robin over one socket is the compact order.
  const std::vector<int> all = {0, 2, 4, 6, 1, 3, 5, 7};
  for (std::size_t t = 1; t <= all.size(); ++t) {
    const auto p =
        ct::place_threads(one_socket(), static_cast<int>(t), spec(ct::BindPolicy::scatter));
    EXPECT_EQ(p.pu_of_thread, first(all, t)) << t << " threads";
    EXPECT_FALSE(p.oversubscribed);
  }
}

TEST(Placement, ScatterTwoSockets) {
  const std::vector<int> all = {0, 8, 2, 10, 4, 12, 6, 14, 1, 9, 3, 11, 5, 13, 7, 15};
  for (std::size_t t = 1; t <= all.size(); ++t) {
    const auto p =
        ct::place_threads(two_sockets(), static_cast<int>(t), spec(ct::BindPolicy::scatter));
    EXPECT_EQ(p.pu_of_thread, first(all, t)) << t << " threads";
    std::vector<int> alternating;
    for (std::size_t i = 0; i < t; ++i) alternating.push_back(static_cast<int>(i % 2));
    EXPECT_EQ(p.socket_of_thread, alternating) << t << " threads";
    EXPECT_EQ(p.sockets_used(), t >= 2 ? 2 : 1);
    EXPECT_FALSE(p.oversubscribed);
  }
}

// ---- sockets ----------------------------------------------------------------------------------

TEST(Placement, SocketsOneSocket) {
  const std::vector<int> all = {0, 2, 4, 6, 1, 3, 5, 7};
  for (std::size_t t = 1; t <= all.size(); ++t) {
    const auto p =
        ct::place_threads(one_socket(), static_cast<int>(t), spec(ct::BindPolicy::sockets));
    EXPECT_EQ(p.pu_of_thread, first(all, t)) << t << " threads";
    EXPECT_EQ(p.socket_of_thread, std::vector<int>(t, 0));
  }
}

TEST(Placement, SocketsTwoSockets) {
  struct Case {
    int threads;
    std::vector<int> cpus;
    std::vector<int> sockets;
  };
  const std::vector<Case> cases = {
      {1, {0}, {0}},
      {2, {0, 8}, {0, 1}},
      {3, {0, 2, 8}, {0, 0, 1}},  // T%S = 1: socket 0 gets one more
      {4, {0, 2, 8, 10}, {0, 0, 1, 1}},
      {5, {0, 2, 4, 8, 10}, {0, 0, 0, 1, 1}},
      {8, {0, 2, 4, 6, 8, 10, 12, 14}, {0, 0, 0, 0, 1, 1, 1, 1}},
      {11, {0, 2, 4, 6, 1, 3, 8, 10, 12, 14, 9}, {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1}},
      {16,
       {0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15},
       {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}},
  };
  for (const auto& c : cases) {
    const auto p = ct::place_threads(two_sockets(), c.threads, spec(ct::BindPolicy::sockets));
    EXPECT_EQ(p.pu_of_thread, c.cpus) << c.threads << " threads";
    EXPECT_EQ(p.socket_of_thread, c.sockets) << c.threads << " threads";
    EXPECT_FALSE(p.oversubscribed);
  }
}

// ---- list -------------------------------------------------------------------------------------

TEST(Placement, ListThreadTakesTthCpu) {
  const auto p = ct::place_threads(two_sockets(), 4, spec(ct::BindPolicy::list, {15, 0, 9, 3}));
  EXPECT_EQ(p.pu_of_thread, (std::vector<int>{15, 0, 9, 3}));
  EXPECT_EQ(p.socket_of_thread, (std::vector<int>{1, 0, 1, 0}));
  EXPECT_FALSE(p.oversubscribed);
  // Fewer threads than cpus: the first ones.
  const auto p2 = ct::place_threads(one_socket(), 2, spec(ct::BindPolicy::list, {7, 1, 5}));
  EXPECT_EQ(p2.pu_of_thread, (std::vector<int>{7, 1}));
  EXPECT_EQ(p2.socket_of_thread, (std::vector<int>{0, 0}));
}

TEST(Placement, ListUnknownCpuThrows) {
  expect_invalid(one_socket(), 2, spec(ct::BindPolicy::list, {0, 8}), {"8"});
  expect_invalid(one_socket(), 1, spec(ct::BindPolicy::list, {42}), {"42"});
  expect_invalid(one_socket(), 1, spec(ct::BindPolicy::list, {42}), {"42"}, true);
}

TEST(Placement, ListDuplicateCpu) {
  // Two threads on cpu 3: refused unless oversubscription is allowed.
  expect_invalid(two_sockets(), 2, spec(ct::BindPolicy::list, {3, 3, 5}), {"3"});
  expect_invalid(two_sockets(), 3, spec(ct::BindPolicy::list, {3, 5, 3}), {"3"});
  expect_invalid(two_sockets(), 2, spec(ct::BindPolicy::list, {3, 3}), {"2"});
  const auto p = ct::place_threads(two_sockets(), 3, spec(ct::BindPolicy::list, {3, 5, 3}), true);
  EXPECT_EQ(p.pu_of_thread, (std::vector<int>{3, 5, 3}));
  EXPECT_EQ(p.socket_of_thread, (std::vector<int>{0, 0, 0}));
  EXPECT_TRUE(p.oversubscribed);
  const auto q = ct::place_threads(two_sockets(), 2, spec(ct::BindPolicy::list, {3, 3, 5}), true);
  EXPECT_EQ(q.pu_of_thread, (std::vector<int>{3, 3}));
  EXPECT_TRUE(q.oversubscribed);
  // A duplicate beyond the threads used does not matter.
  const auto r = ct::place_threads(two_sockets(), 2, spec(ct::BindPolicy::list, {3, 5, 3}));
  EXPECT_EQ(r.pu_of_thread, (std::vector<int>{3, 5}));
  EXPECT_FALSE(r.oversubscribed);
}

TEST(Placement, ListTooShortThrowsUnlessOversubscribed) {
  expect_invalid(one_socket(), 3, spec(ct::BindPolicy::list, {4, 6}), {"3", "2"});
  const auto p = ct::place_threads(one_socket(), 5, spec(ct::BindPolicy::list, {4, 6}), true);
  EXPECT_EQ(p.pu_of_thread, (std::vector<int>{4, 6, 4, 6, 4}));
  EXPECT_TRUE(p.oversubscribed);
}

// ---- oversubscription -------------------------------------------------------------------------

TEST(Placement, OversubscriptionThrowsWithCounts) {
  expect_invalid(one_socket(), 9, spec(ct::BindPolicy::compact), {"9", "8"});
  expect_invalid(one_socket(), 9, spec(ct::BindPolicy::scatter), {"9", "8"});
  expect_invalid(one_socket(), 9, spec(ct::BindPolicy::sockets), {"9", "8"});
  expect_invalid(two_sockets(), 17, spec(ct::BindPolicy::compact), {"17", "16"});
  expect_invalid(two_sockets(), 17, spec(ct::BindPolicy::scatter), {"17", "16"});
  expect_invalid(two_sockets(), 17, spec(ct::BindPolicy::sockets), {"17"});
  expect_invalid(two_sockets(), 0, spec(ct::BindPolicy::compact), {"0"});
}

TEST(Placement, OversubscriptionWrapsWhenAllowed) {
  {
    const auto p = ct::place_threads(one_socket(), 10, spec(ct::BindPolicy::compact), true);
    EXPECT_EQ(p.pu_of_thread, (std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7, 0, 2}));
    EXPECT_TRUE(p.oversubscribed);
  }
  {
    const auto p = ct::place_threads(two_sockets(), 18, spec(ct::BindPolicy::scatter), true);
    EXPECT_EQ(p.pu_of_thread,
              (std::vector<int>{0, 8, 2, 10, 4, 12, 6, 14, 1, 9, 3, 11, 5, 13, 7, 15, 0, 8}));
    EXPECT_EQ(p.socket_of_thread.size(), 18u);
    EXPECT_TRUE(p.oversubscribed);
  }
  {
    const auto p = ct::place_threads(two_sockets(), 18, spec(ct::BindPolicy::sockets), true);
    EXPECT_EQ(p.pu_of_thread,
              (std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7, 0, 8, 10, 12, 14, 9, 11, 13, 15, 8}));
    EXPECT_EQ(p.socket_of_thread,
              (std::vector<int>{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
    EXPECT_TRUE(p.oversubscribed);
  }
  {
    // Allowed but not needed: not oversubscribed.
    const auto p = ct::place_threads(two_sockets(), 16, spec(ct::BindPolicy::compact), true);
    EXPECT_FALSE(p.oversubscribed);
  }
}

// ---- cpu lists and bind specs ------------------------------------------------------------------

TEST(Placement, ParseCpuList) {
  EXPECT_EQ(ct::parse_cpu_list("0,2,4-7"), (std::vector<int>{0, 2, 4, 5, 6, 7}));
  EXPECT_EQ(ct::parse_cpu_list("3"), (std::vector<int>{3}));
  EXPECT_EQ(ct::parse_cpu_list("0-3"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(ct::parse_cpu_list("5-5"), (std::vector<int>{5}));
  EXPECT_EQ(ct::parse_cpu_list("7,1"), (std::vector<int>{7, 1}));
  EXPECT_EQ(ct::parse_cpu_list("10-12,1"), (std::vector<int>{10, 11, 12, 1}));
}

TEST(Placement, ParseCpuListRejectsBadLists) {
  for (const std::string bad : {"", "a", "3-1", "1,,2", "1,", ",1", "1-", "-1", "1-2-3", "1 2",
                                " 1", "1;2", "x-3", "2-y", "1.5"}) {
    EXPECT_THROW((void)ct::parse_cpu_list(bad), std::invalid_argument) << "'" << bad << "'";
  }
  try {
    (void)ct::parse_cpu_list("0,zz,3");
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("zz"), std::string::npos) << e.what();
  }
}

TEST(Placement, FormatCpuListRoundTrip) {
  EXPECT_EQ(ct::format_cpu_list({0, 2, 4, 5, 6, 7}), "0,2,4-7");
  EXPECT_EQ(ct::format_cpu_list({3}), "3");
  EXPECT_EQ(ct::format_cpu_list({}), "");
  const std::vector<std::vector<int>> lists = {{0},
                                               {0, 1},
                                               {0, 1, 2},
                                               {4, 5},
                                               {0, 2, 4, 5, 6, 7},
                                               {0, 1, 2, 3, 8, 9, 10, 15},
                                               {7, 3, 1},
                                               {1, 2, 3, 1, 2, 3},
                                               {100, 101, 102, 103, 5}};
  for (const auto& l : lists) {
    const std::string text = ct::format_cpu_list(l);
    EXPECT_EQ(ct::parse_cpu_list(text), l) << text;
  }
  for (const std::string text : {"0,2,4-7", "1", "0-15", "3,1,8-10", "4,5"})
    EXPECT_EQ(ct::format_cpu_list(ct::parse_cpu_list(text)), text);
}

TEST(Placement, BindSpecParse) {
  const auto c = ct::BindSpec::parse("compact");
  EXPECT_EQ(c.policy, ct::BindPolicy::compact);
  EXPECT_TRUE(c.cpus.empty());
  EXPECT_EQ(c.to_string(), "compact");
  const auto s = ct::BindSpec::parse("scatter");
  EXPECT_EQ(s.policy, ct::BindPolicy::scatter);
  EXPECT_EQ(s.to_string(), "scatter");
  const auto k = ct::BindSpec::parse("sockets");
  EXPECT_EQ(k.policy, ct::BindPolicy::sockets);
  EXPECT_EQ(k.to_string(), "sockets");
  const auto l = ct::BindSpec::parse("0,2,4-7");
  EXPECT_EQ(l.policy, ct::BindPolicy::list);
  EXPECT_EQ(l.cpus, (std::vector<int>{0, 2, 4, 5, 6, 7}));
  EXPECT_EQ(l.to_string(), "0,2,4-7");
  EXPECT_EQ(ct::BindSpec::parse(l.to_string()).cpus, l.cpus);
  EXPECT_EQ(ct::BindSpec{}.policy, ct::BindPolicy::compact);
}

TEST(Placement, BindSpecParseRejectsBadNames) {
  for (const std::string bad :
       {"", "Compact", "SCATTER", "socket", "list", "foo", "compact ", "0,a", "-1", "3-1"}) {
    try {
      (void)ct::BindSpec::parse(bad);
      ADD_FAILURE() << "no exception for '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("'" + bad), std::string::npos) << e.what();
    }
  }
}

// ---- process slices -----------------------------------------------------------------------------

namespace {

// Slices of `count` processes are disjoint, cover the machine, consist of whole cores, and the
// core counts differ by at most one.
void check_partition(const ct::Topology& topo, int count) {
  std::vector<int> owner(static_cast<std::size_t>(topo.pus()), -1);
  std::vector<int> ncores;
  for (int i = 0; i < count; ++i) {
    const ct::PuSet s = ct::process_slice(topo, i, count);
    EXPECT_FALSE(s.shared) << i << "/" << count;
    EXPECT_FALSE(s.pu_indices.empty()) << i << "/" << count;
    EXPECT_TRUE(std::is_sorted(s.pu_indices.begin(), s.pu_indices.end())) << i << "/" << count;
    std::set<int> cores;
    for (int pu : s.pu_indices) {
      ASSERT_GE(pu, 0);
      ASSERT_LT(pu, topo.pus());
      EXPECT_EQ(owner[static_cast<std::size_t>(pu)], -1) << "pu " << pu << " in two slices";
      owner[static_cast<std::size_t>(pu)] = i;
      cores.insert(topo.pu_list()[static_cast<std::size_t>(pu)].core);
    }
    // Whole cores: every PU of each of its cores is in the slice.
    for (std::size_t pu = 0; pu < topo.pu_list().size(); ++pu) {
      if (cores.count(topo.pu_list()[pu].core)) {
        EXPECT_TRUE(std::count(s.pu_indices.begin(), s.pu_indices.end(), static_cast<int>(pu)))
            << "slice " << i << "/" << count << " lacks pu " << pu;
      }
    }
    ncores.push_back(static_cast<int>(cores.size()));
  }
  for (std::size_t pu = 0; pu < owner.size(); ++pu)
    EXPECT_GE(owner[pu], 0) << "pu " << pu << " in no slice of " << count;
  const auto [lo, hi] = std::minmax_element(ncores.begin(), ncores.end());
  EXPECT_LE(*hi - *lo, 1) << count;
}

}  // namespace

TEST(Placement, ProcessSlicesPartitionTheMachine) {
  for (int k = 1; k <= one_socket().cores(); ++k) check_partition(one_socket(), k);
  for (int k = 1; k <= two_sockets().cores(); ++k) check_partition(two_sockets(), k);
  const ct::Topology host = ct::Topology::host();
  for (int k = 1; k <= host.cores(); ++k) check_partition(host, k);
}

TEST(Placement, ProcessSlicesWholeSockets) {
  const auto& topo = two_sockets();
  for (int i = 0; i < 2; ++i) {
    const ct::PuSet s = ct::process_slice(topo, i, 2);
    EXPECT_EQ(s.pu_indices.size(), 8u);
    for (int pu : s.pu_indices) EXPECT_EQ(topo.pu_list()[static_cast<std::size_t>(pu)].socket, i);
  }
  const ct::PuSet all = ct::process_slice(topo, 0, 1);
  EXPECT_EQ(all.pu_indices, ct::whole_machine(topo).pu_indices);
  EXPECT_EQ(all.pu_indices.size(), 16u);
  EXPECT_FALSE(ct::whole_machine(topo).shared);
}

TEST(Placement, ProcessSlicesSharedWhenMoreProcessesThanCores) {
  const auto& topo = one_socket();  // 4 cores
  for (int count : {5, 8, 9}) {
    std::set<int> covered;
    for (int i = 0; i < count; ++i) {
      const ct::PuSet s = ct::process_slice(topo, i, count);
      EXPECT_TRUE(s.shared) << i << "/" << count;
      ASSERT_FALSE(s.pu_indices.empty());
      // One core each.
      std::set<int> cores;
      for (int pu : s.pu_indices) cores.insert(topo.pu_list()[static_cast<std::size_t>(pu)].core);
      EXPECT_EQ(cores.size(), 1u);
      covered.insert(s.pu_indices.begin(), s.pu_indices.end());
    }
    EXPECT_EQ(static_cast<int>(covered.size()), topo.pus()) << count;
  }
}

TEST(Placement, OversubscriptionNoteSaysProcessesThreadsAndCores) {
  EXPECT_EQ(ct::oversubscription_note({3, 3}, 2, 2),
            "2 processes × 3 threads on 2 cores: oversubscribed, waits will back off");
  EXPECT_EQ(ct::oversubscription_note({1}, 4, 8),
            "1 process × 1 thread on 4 cores (8 PUs): oversubscribed, waits will back off");
  EXPECT_EQ(ct::oversubscription_note({2, 3, 2}, 1, 1),
            "3 processes × 2-3 threads on 1 core: oversubscribed, waits will back off");
}

// Bound to one of its cpus, the process sees one PU in host() and all of them in machine().
TEST(Placement, MachineShowsThePusOutsideThisProcesssBinding) {
  cpu_set_t before;
  ASSERT_EQ(::sched_getaffinity(0, sizeof before, &before), 0);
  if (CPU_COUNT(&before) < 2) GTEST_SKIP() << "needs 2 cpus";
  // host() reads the process's binding, the union over its threads: another thread (a sanitizer's
  // background thread) keeps its own.
  if (std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                    std::filesystem::directory_iterator{}) > 1)
    GTEST_SKIP() << "another thread of this process keeps its binding";
  int first = 0;
  while (!CPU_ISSET(first, &before)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
  const ct::Topology host = ct::Topology::host();
  const ct::Topology machine = ct::Topology::machine();
  ASSERT_EQ(::sched_setaffinity(0, sizeof before, &before), 0);
  EXPECT_EQ(host.pus(), 1);
  EXPECT_GE(machine.pus(), CPU_COUNT(&before));
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &before)) {
      EXPECT_GE(machine.find_pu(c), 0) << "cpu " << c;
    }
  }
}

TEST(Placement, ProcessSliceBadArguments) {
  const auto& topo = two_sockets();
  EXPECT_THROW((void)ct::process_slice(topo, 0, 0), std::invalid_argument);
  EXPECT_THROW((void)ct::process_slice(topo, 0, -1), std::invalid_argument);
  EXPECT_THROW((void)ct::process_slice(topo, -1, 2), std::invalid_argument);
  EXPECT_THROW((void)ct::process_slice(topo, 2, 2), std::invalid_argument);
  EXPECT_THROW((void)ct::process_slice(topo, 40, 40 - 1), std::invalid_argument);
}

TEST(Placement, WithinKeepsThreadsInside) {
  const auto& topo = two_sockets();
  for (int k : {2, 3, 4}) {
    for (int i = 0; i < k; ++i) {
      const ct::PuSet s = ct::process_slice(topo, i, k);
      std::set<int> os;
      for (int pu : s.pu_indices) os.insert(topo.pu_list()[static_cast<std::size_t>(pu)].os_index);
      std::set<int> sockets;
      for (int pu : s.pu_indices)
        sockets.insert(topo.pu_list()[static_cast<std::size_t>(pu)].socket);
      std::vector<ct::BindPolicy> policies = {ct::BindPolicy::compact, ct::BindPolicy::scatter};
      // `sockets` puts T/S threads on each socket: only when the slice has equal shares of them.
      if (sockets.size() == 1 || s.pu_indices.size() == 16)
        policies.push_back(ct::BindPolicy::sockets);
      for (auto policy : policies) {
        const int threads = static_cast<int>(s.pu_indices.size());
        const auto p = ct::place_threads(topo, s, threads, spec(policy));
        ASSERT_EQ(p.pu_of_thread.size(), static_cast<std::size_t>(threads));
        EXPECT_EQ(std::set<int>(p.pu_of_thread.begin(), p.pu_of_thread.end()), os)
            << "slice " << i << "/" << k << " bind " << spec(policy).to_string();
        EXPECT_FALSE(p.oversubscribed);
        EXPECT_THROW((void)ct::place_threads(topo, s, threads + 1, spec(policy)),
                     std::invalid_argument);
        const auto over = ct::place_threads(topo, s, 2 * threads + 1, spec(policy), true);
        for (int cpu : over.pu_of_thread) EXPECT_TRUE(os.count(cpu)) << cpu;
        EXPECT_TRUE(over.oversubscribed);
      }
    }
  }
  // Socket 1 only, compact: its cores, then its SMT siblings.
  const auto p =
      ct::place_threads(topo, ct::process_slice(topo, 1, 2), 8, spec(ct::BindPolicy::compact));
  EXPECT_EQ(p.pu_of_thread, (std::vector<int>{8, 10, 12, 14, 9, 11, 13, 15}));
  EXPECT_EQ(p.socket_of_thread, std::vector<int>(8, 1));
  // A cpu list outside the slice is refused.
  EXPECT_THROW((void)ct::place_threads(topo, ct::process_slice(topo, 1, 2), 1,
                                       spec(ct::BindPolicy::list, {0})),
               std::invalid_argument);
  const auto l = ct::place_threads(topo, ct::process_slice(topo, 1, 2), 2,
                                   spec(ct::BindPolicy::list, {9, 15}));
  EXPECT_EQ(l.pu_of_thread, (std::vector<int>{9, 15}));
  // Empty set: nothing to place on.
  EXPECT_THROW((void)ct::place_threads(topo, ct::PuSet{}, 1, spec(ct::BindPolicy::compact)),
               std::invalid_argument);
}
