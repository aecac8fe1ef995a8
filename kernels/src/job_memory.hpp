// The kernels' memory check: what a job's processes on this host need together, against what the
// host can give (base::memory_limit), before anything is allocated.
#pragma once

#include <string>

#include "compas/base/memory.hpp"

namespace compas::kernels::detail {

// Throws std::invalid_argument naming `what` (the parameter, e.g. "laplace: --n 1000000"), the
// bytes per process, the total of the processes on this host (`processes_here`, 0: all
// `processes` of the job) and the host's limit when the total exceeds it. `per_process` is a byte
// estimate (a double: the formulas may exceed 2^64).
void check_job_memory(const std::string& what, double per_process, int processes,
                      int processes_here, base::Mapping mapping);

}  // namespace compas::kernels::detail
