// compas run KERNEL: one kernel on the job this process belongs to (alone: 1 process x T threads;
// under compas-run / mpirun / srun: P processes x T threads), verified, timed, with the time split
// into the regions compute / communicate / synchronize (COMPaS Table 6) and counters when asked.
// Rank 0 prints and writes the report. A run that fails verification says why and exits 1.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "run_common.hpp"

namespace compas::app {

Command setup_run(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "run", "run one kernel on this job: verified, timed, per-region times (compas run KERNEL)");
  cmd->require_subcommand(0, 1);  // a missing or unknown kernel gets a message naming it
  auto kernels = std::make_shared<std::vector<RunKernel>>();
  kernels->push_back(add_run_laplace(*cmd));
  kernels->push_back(add_run_gemm(*cmd));
  kernels->push_back(add_run_cg(*cmd));
  kernels->push_back(add_run_sort(*cmd));
  return {cmd, [kernels]() -> int {
            std::string names;
            for (const auto& k : *kernels) {
              if (k.app->parsed()) return k.run();
              names += (names.empty() ? "" : ", ") + k.app->get_name();
            }
            throw std::invalid_argument("name a kernel (a subcommand): " + names);
          }};
}

}  // namespace compas::app
