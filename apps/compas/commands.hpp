// Registry of compas subcommands. Each setup function adds its subcommand to the app and returns
// it with the function that runs it once the command line has been parsed.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <utility>
#include <vector>

namespace compas::app {

using Command = std::pair<CLI::App*, std::function<int()>>;
using CommandSetup = Command (*)(CLI::App&);

Command setup_topology(CLI::App& app);
Command setup_barrier(CLI::App& app);
Command setup_omp_barrier_worker(CLI::App& app);
Command setup_membw(CLI::App& app);
Command setup_cache(CLI::App& app);
Command setup_pingpong(CLI::App& app);
Command setup_run(CLI::App& app);
Command setup_study(CLI::App& app);
Command setup_compare(CLI::App& app);

inline std::vector<CommandSetup> all_commands() {
  return {setup_topology, setup_barrier,  setup_membw,
          setup_cache,    setup_pingpong, setup_run,
          setup_study,    setup_compare,  setup_omp_barrier_worker};
}

}  // namespace compas::app
