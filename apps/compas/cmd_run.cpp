// compas run KERNEL: one kernel on the job this process belongs to (alone: 1 process x T threads;
// under compas-run / mpirun / srun: P processes x T threads), verified, timed, with the time split
// into the regions compute / communicate / synchronize (COMPaS Table 6) and counters when asked.
// Rank 0 prints and writes the report. A run that fails verification says why and exits 1.
// The kernels are those of the table (kernel_table.hpp); `compas run --list` prints it.
#include <fmt/core.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "run_common.hpp"

namespace compas::app {

namespace {

// One line per kernel: its name, rate field, stream and the flags of its quickest study size,
// "NAME  rate FIELD  stream STREAM  quick: FLAGS" (the tests run every kernel through it).
void print_table() {
  for (const KernelSpec& k : kernel_table()) {
    const auto sizes = k.study_sizes(0.02);
    std::string flags;
    for (const auto& arg : sizes.front().args) flags += (flags.empty() ? "" : " ") + arg;
    fmt::print("{:<10} rate {:<12} stream {:<5} weak {:<3} quick: {}\n", k.name, k.rate_field,
               k.stream, k.weak_series ? "yes" : "no", flags);
  }
}

}  // namespace

Command setup_run(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "run", "run one kernel on this job: verified, timed, per-region times (compas run KERNEL)");
  cmd->require_subcommand(0, 1);  // a missing or unknown kernel gets a message naming it
  auto list = std::make_shared<bool>(false);
  cmd->add_flag("--list", *list,
                "list the kernels: the field of their rate, the memory stream of the same traffic, "
                "whether the study scales them weakly, and the flags of their quickest size");
  auto kernels = std::make_shared<std::vector<RunKernel>>();
  for (const KernelSpec& k : kernel_table()) kernels->push_back(k.add_run(*cmd));
  return {cmd, [kernels, list]() -> int {
            for (const auto& k : *kernels)
              if (k.app->parsed()) return k.run();
            if (*list) {
              print_table();
              return 0;
            }
            throw std::invalid_argument("name a kernel (a subcommand): " + kernel_names());
          }};
}

}  // namespace compas::app
