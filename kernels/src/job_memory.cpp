#include "job_memory.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "compas/base/size.hpp"

namespace compas::kernels::detail {

namespace {

std::uint64_t to_bytes(double b) {
  return b >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(std::max(b, 0.0));
}

}  // namespace

void check_job_memory(const std::string& what, double per_process, int processes,
                      int processes_here, base::Mapping mapping) {
  const int here = std::max(processes_here > 0 ? processes_here : processes, 1);
  const std::uint64_t total = to_bytes(per_process * here);
  const base::MemoryBound limit = base::memory_limit(mapping);
  if (total <= limit.bytes) return;
  const std::string who =
      here == 1 ? what + " needs about"
                : what + " needs about " + base::format_size(to_bytes(per_process)) +
                      " in each of this host's " + std::to_string(here) + " processes, together";
  throw std::invalid_argument(base::memory_refusal(who, total, limit));
}

}  // namespace compas::kernels::detail
