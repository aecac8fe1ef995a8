// Affinity domains and workgroups (domain.hpp) on hwloc synthetic topologies: two sockets with
// two NUMA nodes each, an L3 per NUMA node, SMT; and the host as it is.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/threads/domain.hpp"

namespace ct = compas::threads;

namespace {

// 2 sockets x 2 NUMA nodes x 1 L3 x 4 cores x 2 PUs: PU i is core i / 2, hardware thread i % 2.
const ct::Topology& two_by_two() {
  static const ct::Topology t = ct::Topology::synthetic("pack:2 numa:2 l3:1 core:4 pu:2");
  return t;
}

std::vector<int> os_of_cores(int first_core, int cores, int smt) {
  std::vector<int> v;
  for (int c = first_core; c < first_core + cores; ++c)
    v.push_back(two_by_two().pu_list()[static_cast<std::size_t>(2 * c + smt)].os_index);
  return v;
}

std::vector<int> cat(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST(Domain, NamesParseAndPrint) {
  for (const std::string name : {"N", "S0", "S1", "M3", "C12"})
    EXPECT_EQ(ct::parse_domain(name).name(), name);
  EXPECT_EQ(ct::parse_domain("M3").kind, 'M');
  EXPECT_EQ(ct::parse_domain("M3").index, 3);
}

TEST(Domain, BadNamesSayWhatIsAllowed) {
  for (const std::string bad : {"", "S", "X0", "s0", "S-1", "S0x", "N0", "S1234567"}) {
    try {
      ct::parse_domain(bad);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("S<i> (socket)"), std::string::npos) << e.what();
    }
  }
}

TEST(Domain, CountsOnTwoSocketsWithTwoNumaNodesEach) {
  const auto& t = two_by_two();
  EXPECT_EQ(ct::domain_count(t, 'N'), 1);
  EXPECT_EQ(ct::domain_count(t, 'S'), 2);
  EXPECT_EQ(ct::domain_count(t, 'M'), 4);
  EXPECT_EQ(ct::domain_count(t, 'C'), 4);
}

TEST(Domain, ThreadsFillPhysicalCoresFirstSocketBySocket) {
  const auto& t = two_by_two();
  // The node: the 16 cores' first hardware threads, socket 0's first, then the second ones.
  EXPECT_EQ(ct::domain_pus(t, {'N', 0}), cat(os_of_cores(0, 16, 0), os_of_cores(0, 16, 1)));
  // Socket 1: cores 8-15.
  EXPECT_EQ(ct::domain_pus(t, {'S', 1}), cat(os_of_cores(8, 8, 0), os_of_cores(8, 8, 1)));
  // NUMA node 1: the second half of socket 0, cores 4-7; node 2 the first half of socket 1.
  EXPECT_EQ(ct::domain_pus(t, {'M', 1}), cat(os_of_cores(4, 4, 0), os_of_cores(4, 4, 1)));
  EXPECT_EQ(ct::domain_pus(t, {'M', 2}), cat(os_of_cores(8, 4, 0), os_of_cores(8, 4, 1)));
  // One L3 per NUMA node here: C3 is cores 12-15.
  EXPECT_EQ(ct::domain_pus(t, {'C', 3}), cat(os_of_cores(12, 4, 0), os_of_cores(12, 4, 1)));
}

TEST(Domain, ADomainThatIsNotThereNamesTheOnesThatAre) {
  try {
    ct::domain_pus(two_by_two(), {'S', 2});
    ADD_FAILURE() << "S2 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'S2'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("S0-S1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ct::domain_pus(two_by_two(), {'M', 4}), std::invalid_argument);
}

TEST(Domain, TheHostsNodeDomainHoldsEveryPuOnce) {
  const ct::Topology host = ct::Topology::host();
  auto pus = ct::domain_pus(host, {'N', 0});
  EXPECT_EQ(static_cast<int>(pus.size()), host.pus());
  std::sort(pus.begin(), pus.end());
  EXPECT_EQ(std::adjacent_find(pus.begin(), pus.end()), pus.end());
  // Every socket's PUs together are the node's.
  std::vector<int> sockets;
  for (int i = 0; i < ct::domain_count(host, 'S'); ++i) {
    const auto s = ct::domain_pus(host, {'S', i});
    EXPECT_FALSE(s.empty()) << "S" << i;
    sockets.insert(sockets.end(), s.begin(), s.end());
  }
  std::sort(sockets.begin(), sockets.end());
  EXPECT_EQ(sockets, pus);
}

TEST(Workgroup, ParsesLikeLikwidBench) {
  const ct::Workgroup w = ct::parse_workgroup("S0:1GB:4");
  EXPECT_EQ(w.domain.name(), "S0");
  EXPECT_EQ(w.size_bytes, 1000000000u);
  EXPECT_EQ(w.threads, 4);
  const ct::Workgroup all = ct::parse_workgroup("M1:512MiB");
  EXPECT_EQ(all.domain.name(), "M1");
  EXPECT_EQ(all.size_bytes, 512u << 20);
  EXPECT_EQ(all.threads, 0);
}

TEST(Workgroup, BadPartsAreNamed) {
  for (const std::string bad :
       {"", "S0", "S0:", "Q0:1GB", "S0:1GB:", "S0:1GB:0", "S0:1GB:x", "S0:lots", "S0:0"}) {
    try {
      ct::parse_workgroup(bad);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("workgroup '" + bad + "'"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("DOMAIN:SIZE[:THREADS]"), std::string::npos) << e.what();
    }
  }
}

TEST(NumaMatrix, EveryPairOfNodesWithTheThreadsOnTheRowsNode) {
  const auto cells = ct::numa_matrix_cells(two_by_two());
  ASSERT_EQ(cells.size(), 16u);
  for (std::size_t k = 0; k < cells.size(); ++k) {
    const auto& c = cells[k];
    EXPECT_EQ(c.threads_on, static_cast<int>(k / 4));
    EXPECT_EQ(c.memory_on, static_cast<int>(k % 4));
    // One thread per core of the node (4 cores), on the node's first hardware threads.
    EXPECT_EQ(c.pus, os_of_cores(4 * c.threads_on, 4, 0)) << "cell " << k;
  }
  const auto two = ct::numa_matrix_cells(two_by_two(), 2);
  EXPECT_EQ(two[5].pus, os_of_cores(4, 2, 0));
  EXPECT_EQ(ct::numa_matrix_cells(two_by_two(), 99)[0].pus.size(), 8u);  // at most every PU
}

TEST(NumaMatrix, MemoryBindsOnlyWhereTheNodeExists) {
  std::vector<char> buf(4096);
  EXPECT_THROW(ct::bind_memory_to_numa(two_by_two(), buf.data(), buf.size(), 4),
               std::invalid_argument);
  EXPECT_THROW(ct::bind_memory_to_numa(two_by_two(), buf.data(), buf.size(), 0),
               std::runtime_error);  // synthetic: nothing to bind
  const ct::Topology host = ct::Topology::host();
  EXPECT_THROW(ct::bind_memory_to_numa(host, buf.data(), buf.size(), ct::domain_count(host, 'M')),
               std::invalid_argument);
}
