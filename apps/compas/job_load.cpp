// The job's own CPU time in its machine load (job_load.hpp).
#include "job_load.hpp"

#include <unistd.h>

#include <fmt/core.h>

#include <sstream>
#include <string>

#include "compas/base/cpu_load.hpp"
#include "compas/comm/bootstrap.hpp"
#include "compas/report/run_info.hpp"

namespace compas::app {

namespace {

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "?";
  return host;
}

}  // namespace

void count_job_cpu(comm::Bootstrap& boot) {
  if (boot.size() < 2) return;
  const std::string mine = host_name();
  const auto all = boot.allgather(fmt::format("{:.9f} {}", base::process_cpu_seconds(), mine));
  if (boot.rank() != 0) return;
  double others = 0;
  for (std::size_t i = 1; i < all.size(); ++i) {
    std::istringstream in(all[i]);
    double seconds = 0;
    std::string host;
    if (in >> seconds >> host && host == mine) others += seconds;
  }
  report::set_job_cpu_seconds(others);
}

}  // namespace compas::app
