// Affinity domains as likwid names them, for placing a measurement on part of a machine:
//   N    the node (every PU of the process)      S<i>  socket (package) i
//   M<i> NUMA node i                              C<i>  last-level cache i
// and workgroups "DOMAIN:SIZE[:THREADS]" (likwid-bench's -w): a working set measured by threads
// of one domain.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "compas/threads/topology.hpp"

namespace compas::threads {

struct Domain {
  char kind = 'N';           // 'N', 'S', 'M' or 'C'
  int index = 0;             // 0 for N
  std::string name() const;  // "N", "S0", "M1", "C3"
};

// "N", "S0", "M1", "C3". Throws std::invalid_argument naming the text and what is allowed.
Domain parse_domain(const std::string& text);

// How many domains of a kind this topology has (1 for N).
int domain_count(const Topology& topo, char kind);

// The OS indices of the domain's PUs in the order threads fill it: one PU of every core first
// (cores in topology order, so socket by socket), then the cores' second hardware threads, and so
// on. Throws std::invalid_argument when the domain does not exist here, naming the ones that do.
std::vector<int> domain_pus(const Topology& topo, const Domain& domain);

// The same for the PUs of the topology whose `pu_list()` indices are listed, in that order.
std::vector<int> fill_order(const Topology& topo, const std::vector<int>& pu_indices);

// Binds the pages of [addr, addr + bytes) to NUMA node `numa` (logical index), before they are
// first touched, so they are placed there whoever touches them. Throws std::invalid_argument for
// a node that is not there, std::runtime_error on a synthetic topology or when the system refuses.
void bind_memory_to_numa(const Topology& topo, void* addr, std::size_t bytes, int numa);

// The cells of a NUMA bandwidth or latency matrix: threads on node `threads_on`, memory on
// `memory_on`, every pair of the machine's nodes (row by row), with the threads' PUs (the
// first `threads` of the node's fill order, 0: one per core of the node).
struct NumaCell {
  int threads_on = 0, memory_on = 0;
  std::vector<int> pus;
};
std::vector<NumaCell> numa_matrix_cells(const Topology& topo, int threads = 0);

struct Workgroup {
  Domain domain;
  std::size_t size_bytes = 0;  // the working set
  int threads = 0;             // 0: one per PU of the domain
};

// "S0:1GB:4", "M1:512MiB", "N:2GB:8". Throws std::invalid_argument naming the bad part.
Workgroup parse_workgroup(const std::string& text);

}  // namespace compas::threads
