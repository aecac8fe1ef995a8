// compas membw --numa-matrix: bandwidth with the threads on NUMA node i and the memory on node j,
// for every pair of the machine's nodes.
#pragma once

#include <cstddef>
#include <vector>

#include "common.hpp"
#include "compas/probes/membw.hpp"

namespace compas::app {

struct NumaMatrixArgs {
  std::vector<probes::MembwKernel> kernels;
  std::size_t size_bytes = 0;
  std::size_t chase_bytes = 0;  // the latency's chase buffer; 0: far beyond the caches
  int threads = 0;              // per cell; 0: one per core of the node
  int repeats = 5;
  bool huge_pages = true;
  OutputFlags out;
};

int run_numa_matrix(const NumaMatrixArgs& a);

}  // namespace compas::app
