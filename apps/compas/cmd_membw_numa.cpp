// compas membw --numa-matrix: the flags of the matrix of bandwidth with the threads on NUMA node
// i and the memory on node j (the measurement: membw_numa.cpp).
#include <stdexcept>
#include <string>

#include "cmd_membw_args.hpp"
#include "compas/probes/membw.hpp"
#include "membw_numa.hpp"

namespace compas::app {

// --numa-matrix: --threads one count per cell (default one per core of the node), --size and
// --kernels as for the sweep (default 1 GiB; load and copy).
int run_numa_matrix_command(const MembwArgs& a) {
  if (given(a.bind_opt) || !a.workgroup.empty())
    throw std::invalid_argument(
        "--numa-matrix places the threads on each NUMA node in turn: --bind and --workgroup do "
        "not go with it");
  NumaMatrixArgs n;
  if (!a.threads.empty()) {
    const auto counts = parse_thread_list("--threads", a.threads);
    if (counts.size() != 1)
      throw std::invalid_argument("--threads '" + a.threads +
                                  "': --numa-matrix takes one thread count per cell");
    n.threads = counts[0];
  }
  try {
    n.size_bytes = a.size.empty() ? default_membw_size() : base::parse_size(a.size);
    n.chase_bytes = a.size.empty() ? 0 : n.size_bytes;  // a given size is the chase's too
    n.kernels = probes::parse_membw_kernels(given(a.kernels_opt) ? a.kernels : "load,copy");
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--") + e.what());
  }
  n.repeats = a.repeats;
  n.huge_pages = !a.no_huge_pages;
  n.out = a.out;
  return run_numa_matrix(n);
}

}  // namespace compas::app
