// Topology: the machine as hwloc sees it (packages, NUMA nodes, cores, PUs, caches), either the
// real host or an hwloc synthetic description, so placement logic can be exercised for machines
// this one is not (two sockets, SMT). Only a real-host topology can bind threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace compas::threads {

namespace detail {
struct TopologyInternals;  // threads/src/topology.cpp: the name of Topology's implementation
}  // namespace detail

struct CacheLevel {
  int level = 0;                 // 1, 2, 3, ...
  std::string type;              // "data", "unified", "instruction"
  std::uint64_t size_bytes = 0;  // size of one cache instance
  int line_bytes = 0;            // 0 when hwloc does not know
  int shared_by = 0;             // PUs sharing one instance
  int count = 0;                 // instances in the machine
};

// One processing unit (hardware thread) and where it sits.
struct Pu {
  int os_index = 0;  // the number the OS uses (sched_setaffinity, /proc/cpuinfo)
  int core = 0;      // logical core index, 0..cores-1, in topology order
  int socket = 0;    // logical package index
  int numa = 0;      // logical NUMA node index (0 when unknown)
  int smt = 0;       // rank of this PU among the PUs of its core
};

class Topology {
 public:
  // The host this process runs on, restricted to the PUs this process is allowed to use.
  static Topology host();
  // The whole host, every PU the system lets this process see whatever its binding: for describing
  // what a launcher gave several processes. Placement uses host().
  static Topology machine();
  // An hwloc synthetic topology, e.g. "pack:2 numa:1 l3:1 core:8 pu:2". Throws
  // std::invalid_argument naming the description when hwloc rejects it.
  static Topology synthetic(const std::string& description);

  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  ~Topology();

  int sockets() const { return sockets_; }
  int numa_nodes() const { return numa_nodes_; }
  int cores() const { return cores_; }
  int pus() const { return static_cast<int>(pus_.size()); }
  // PUs in topology order (socket, core, smt).
  const std::vector<Pu>& pu_list() const { return pus_; }
  const std::vector<CacheLevel>& caches() const { return caches_; }
  // Size in bytes of the data/unified cache of the given level, or 0 when absent.
  std::uint64_t cache_bytes(int level) const;
  const std::string& cpu_model() const { return cpu_model_; }
  bool is_synthetic() const { return synthetic_; }
  const std::string& description() const { return description_; }
  // Index into pu_list() of the PU with this OS index, or -1.
  int find_pu(int os_index) const;

  // Binding (real host only). Bind the calling thread to one PU (by OS index) and read the
  // binding back; returns the OS indices the thread is actually bound to.
  std::vector<int> bind_current_thread(int os_index) const;
  std::vector<int> bind_current_thread(const std::vector<int>& os_indices) const;
  // The OS indices the calling thread may currently run on.
  std::vector<int> current_thread_binding() const;

  // hwloc's own handle, for the other layers' internal use (hwloc_topology_t).
  void* native_handle() const;

 private:
  friend struct detail::TopologyInternals;
  struct Impl;  // hwloc state, defined in topology.cpp
  explicit Topology(std::unique_ptr<Impl> impl, bool synthetic, std::string description);
  void read();

  std::unique_ptr<Impl> impl_;
  bool synthetic_ = false;
  std::string description_;
  int sockets_ = 0;
  int numa_nodes_ = 0;
  int cores_ = 0;
  std::vector<Pu> pus_;
  std::vector<CacheLevel> caches_;
  std::string cpu_model_;
};

// hwloc version this library runs against, e.g. "2.9.0".
std::string hwloc_version();

}  // namespace compas::threads
