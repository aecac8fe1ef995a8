// Topology: the real host and hwloc synthetic machines.
#include <gtest/gtest.h>
#include <sched.h>

#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "affinity_guard.hpp"
#include "compas/threads/topology.hpp"

namespace ct = compas::threads;

namespace {

// The CacheLevel of the given level that holds data (data or unified), or nullptr.
const ct::CacheLevel* data_cache(const ct::Topology& topo, int level) {
  for (const auto& c : topo.caches())
    if (c.level == level && c.type != "instruction") return &c;
  return nullptr;
}

}  // namespace

TEST(Topology, HostBasics) {
  const ct::Topology topo = ct::Topology::host();
  EXPECT_FALSE(topo.is_synthetic());
  EXPECT_GE(topo.sockets(), 1);
  EXPECT_GE(topo.numa_nodes(), 1);
  EXPECT_GE(topo.cores(), 1);
  EXPECT_GE(topo.pus(), 1);
  EXPECT_LE(topo.cores(), topo.pus());
  EXPECT_LE(topo.sockets(), topo.cores());
  EXPECT_EQ(static_cast<std::size_t>(topo.pus()), topo.pu_list().size());
  EXPECT_FALSE(topo.cpu_model().empty());
  // host() is restricted to the PUs this process may use: exactly the affinity mask's CPUs.
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  EXPECT_EQ(topo.pus(), CPU_COUNT(&mask));
  for (const ct::Pu& p : topo.pu_list()) EXPECT_TRUE(CPU_ISSET(p.os_index, &mask)) << p.os_index;
}

// topology.hpp: host() is "restricted to the PUs this process is allowed to use". A process
// started under taskset, numactl --physcpubind or an MPI launcher's binding is allowed only the
// CPUs of its affinity mask, so host() must contain exactly those.
TEST(Topology, HostIsRestrictedToTheAffinityMask) {
  OneCpuAffinity one;
  if (!one.restricted()) GTEST_SKIP() << "needs at least two CPUs to restrict to one";
  const ct::Topology topo = ct::Topology::host();
  EXPECT_EQ(topo.pus(), 1);
  EXPECT_EQ(topo.cores(), 1);
  ASSERT_FALSE(topo.pu_list().empty());
  EXPECT_EQ(topo.pu_list()[0].os_index, one.cpu());
  for (int other = 0; other < one.cpu(); ++other) EXPECT_EQ(topo.find_pu(other), -1) << other;
}

TEST(Topology, HostPuListIsConsistent) {
  const ct::Topology topo = ct::Topology::host();
  std::set<int> os;
  std::set<int> cores;
  for (const ct::Pu& p : topo.pu_list()) {
    EXPECT_TRUE(os.insert(p.os_index).second) << "os_index " << p.os_index << " twice";
    EXPECT_GE(p.os_index, 0);
    EXPECT_GE(p.core, 0);
    EXPECT_LT(p.core, topo.cores());
    EXPECT_GE(p.socket, 0);
    EXPECT_LT(p.socket, topo.sockets());
    EXPECT_GE(p.numa, 0);
    EXPECT_LT(p.numa, topo.numa_nodes());
    EXPECT_GE(p.smt, 0);
    cores.insert(p.core);
  }
  EXPECT_EQ(static_cast<int>(cores.size()), topo.cores());
}

TEST(Topology, HostCaches) {
  const ct::Topology topo = ct::Topology::host();
  ASSERT_FALSE(topo.caches().empty());
  for (const auto& c : topo.caches()) {
    EXPECT_GE(c.level, 1);
    EXPECT_GT(c.size_bytes, 0u) << "L" << c.level;
    EXPECT_GE(c.shared_by, 1);
    EXPECT_GE(c.count, 1);
    EXPECT_TRUE(c.type == "data" || c.type == "unified" || c.type == "instruction") << c.type;
  }
  EXPECT_GT(topo.cache_bytes(1), 0u);
  const ct::CacheLevel* l1 = data_cache(topo, 1);
  ASSERT_NE(l1, nullptr);
  EXPECT_EQ(topo.cache_bytes(1), l1->size_bytes);
  EXPECT_EQ(topo.cache_bytes(9), 0u);
}

TEST(Topology, HostFindPu) {
  const ct::Topology topo = ct::Topology::host();
  for (int i = 0; i < topo.pus(); ++i)
    EXPECT_EQ(topo.find_pu(topo.pu_list()[static_cast<std::size_t>(i)].os_index), i);
  EXPECT_EQ(topo.find_pu(-1), -1);
  EXPECT_EQ(topo.find_pu(1 << 20), -1);
}

TEST(Topology, HostBindAndReadBack) {
  const ct::Topology topo = ct::Topology::host();
  // Bind a thread of our own so the test process itself keeps its affinity.
  std::vector<std::vector<int>> got(topo.pu_list().size());
  std::vector<int> before;
  std::thread worker([&] {
    before = topo.current_thread_binding();
    for (std::size_t i = 0; i < topo.pu_list().size(); ++i)
      got[i] = topo.bind_current_thread(topo.pu_list()[i].os_index);
  });
  worker.join();
  EXPECT_EQ(static_cast<int>(before.size()), topo.pus());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], std::vector<int>{topo.pu_list()[i].os_index});
}

TEST(Topology, SyntheticTwoSocketsSmt) {
  const std::string desc = "pack:2 numa:1 l3:1 core:8 pu:2";
  const ct::Topology topo = ct::Topology::synthetic(desc);
  EXPECT_TRUE(topo.is_synthetic());
  EXPECT_EQ(topo.description(), desc);
  EXPECT_EQ(topo.sockets(), 2);
  EXPECT_EQ(topo.numa_nodes(), 2);
  EXPECT_EQ(topo.cores(), 16);
  EXPECT_EQ(topo.pus(), 32);

  const auto& pus = topo.pu_list();
  ASSERT_EQ(pus.size(), 32u);
  std::set<int> os;
  std::vector<std::set<int>> smt_of_core(16);
  std::vector<int> pus_of_core(16, 0);
  for (std::size_t i = 0; i < pus.size(); ++i) {
    const ct::Pu& p = pus[i];
    EXPECT_TRUE(os.insert(p.os_index).second);
    ASSERT_GE(p.core, 0);
    ASSERT_LT(p.core, 16);
    smt_of_core[static_cast<std::size_t>(p.core)].insert(p.smt);
    ++pus_of_core[static_cast<std::size_t>(p.core)];
    const int expected_socket = i < 16 ? 0 : 1;
    EXPECT_EQ(p.socket, expected_socket) << "pu " << i;
    EXPECT_EQ(p.numa, expected_socket) << "pu " << i;          // one NUMA node per package
    EXPECT_EQ(p.core, static_cast<int>(i / 2)) << "pu " << i;  // topology order
    EXPECT_EQ(p.smt, static_cast<int>(i % 2)) << "pu " << i;
  }
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(pus_of_core[static_cast<std::size_t>(c)], 2) << "core " << c;
    EXPECT_EQ(smt_of_core[static_cast<std::size_t>(c)], (std::set<int>{0, 1})) << "core " << c;
  }
  // Each socket's PUs 0..15 and 16..31 by OS index as well.
  for (int os_index = 0; os_index < 32; ++os_index) {
    const int i = topo.find_pu(os_index);
    ASSERT_GE(i, 0) << os_index;
    EXPECT_EQ(pus[static_cast<std::size_t>(i)].socket, os_index < 16 ? 0 : 1) << os_index;
  }

  const ct::CacheLevel* l3 = data_cache(topo, 3);
  ASSERT_NE(l3, nullptr);
  EXPECT_EQ(l3->shared_by, 16);
  EXPECT_EQ(l3->count, 2);
  EXPECT_GT(l3->size_bytes, 0u);
  EXPECT_EQ(topo.cache_bytes(3), l3->size_bytes);
  EXPECT_EQ(topo.cache_bytes(1), 0u);  // the description has no L1
}

TEST(Topology, SyntheticSmallNoSmt) {
  const ct::Topology topo = ct::Topology::synthetic("pack:1 core:4 pu:1");
  EXPECT_EQ(topo.sockets(), 1);
  EXPECT_EQ(topo.numa_nodes(), 1);
  EXPECT_EQ(topo.cores(), 4);
  EXPECT_EQ(topo.pus(), 4);
  for (std::size_t i = 0; i < topo.pu_list().size(); ++i) {
    const ct::Pu& p = topo.pu_list()[i];
    EXPECT_EQ(p.os_index, static_cast<int>(i));
    EXPECT_EQ(p.core, static_cast<int>(i));
    EXPECT_EQ(p.smt, 0);
    EXPECT_EQ(p.socket, 0);
    EXPECT_EQ(p.numa, 0);
  }
}

TEST(Topology, SyntheticWithoutCoreLevel) {
  // No core level: every PU counts as a core of its own.
  const ct::Topology topo = ct::Topology::synthetic("pack:2 pu:3");
  EXPECT_EQ(topo.sockets(), 2);
  EXPECT_EQ(topo.pus(), 6);
  EXPECT_EQ(topo.cores(), 6);
  for (std::size_t i = 0; i < topo.pu_list().size(); ++i) {
    EXPECT_EQ(topo.pu_list()[i].core, static_cast<int>(i));
    EXPECT_EQ(topo.pu_list()[i].smt, 0);
    EXPECT_EQ(topo.pu_list()[i].socket, i < 3 ? 0 : 1);
  }
}

TEST(Topology, SyntheticInvalidNamesDescription) {
  for (const std::string bad : {"pack:2 bogus:3 pu:2", "not a topology", "core:x pu:2"}) {
    try {
      (void)ct::Topology::synthetic(bad);
      ADD_FAILURE() << "no exception for '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(Topology, SyntheticFindPu) {
  const ct::Topology topo = ct::Topology::synthetic("pack:2 core:4 pu:2");
  for (int os_index = 0; os_index < 16; ++os_index) {
    const int i = topo.find_pu(os_index);
    ASSERT_GE(i, 0);
    EXPECT_EQ(topo.pu_list()[static_cast<std::size_t>(i)].os_index, os_index);
  }
  EXPECT_EQ(topo.find_pu(16), -1);
  EXPECT_EQ(topo.find_pu(-1), -1);
}

TEST(Topology, SyntheticCannotBind) {
  const ct::Topology topo = ct::Topology::synthetic("pack:1 core:2 pu:1");
  EXPECT_ANY_THROW(topo.bind_current_thread(0));
}

TEST(Topology, MoveKeepsContents) {
  ct::Topology a = ct::Topology::synthetic("pack:2 core:4 pu:2");
  ct::Topology b = std::move(a);
  EXPECT_EQ(b.pus(), 16);
  EXPECT_EQ(b.sockets(), 2);
  EXPECT_NE(b.native_handle(), nullptr);
  EXPECT_FALSE(ct::hwloc_version().empty());
}
