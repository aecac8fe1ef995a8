// compas membw's flags and the parts of the command that live in files of their own: the
// loaded-latency command (cmd_membw_latency.cpp), the NUMA matrix (cmd_membw_numa.cpp) and the
// bandwidth table beside COMPaS 1998's figures (membw_table.cpp). Internal to apps/compas.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "common.hpp"
#include "compas/probes/membw.hpp"

namespace compas::app {

struct MembwArgs {
  std::string threads;
  std::string size;
  std::string kernels = "load,store,copy,triad";
  std::string bind = "compact";
  std::string workgroup;  // DOMAIN:SIZE[:THREADS], likwid-bench's -w
  bool numa_matrix = false;
  CLI::Option* bind_opt = nullptr;
  CLI::Option* workgroup_opt = nullptr;
  CLI::Option* kernels_opt = nullptr;
  std::string stores = "auto";
  std::string isa = "auto";
  int repeats = 5;
  double min_repeat_ms = 50;
  bool oversubscribe = false;
  bool no_huge_pages = false;
  std::string events;
  OutputFlags out;
  std::string plot;
  // --loaded-latency and its own flags.
  bool loaded_latency = false;
  std::string mix = "read,rw,stream";
  std::string delays = "auto";
  std::string traffic_on = "same";
  std::vector<CLI::Option*> bandwidth_only;  // flags that only the bandwidth sweep reads
  std::vector<CLI::Option*> latency_only;    // flags that only --loaded-latency reads
};

// Given on the command line. A value from the environment does not count: a COMPAS_BIND set for
// other commands must not make --loaded-latency refuse to run.
bool given(const CLI::Option* opt);

// Default working set: 1 GiB, at most a quarter of what this host can give.
std::size_t default_membw_size();

// --loaded-latency: the flags it alone reads, and the command (cmd_membw_latency.cpp).
void add_latency_flags(CLI::App& cmd, MembwArgs& a);
int run_loaded_latency_command(const MembwArgs& a);

// --numa-matrix (cmd_membw_numa.cpp).
int run_numa_matrix_command(const MembwArgs& a);

// Rows = threads, columns = kernels (total and per thread), as COMPaS Table 2, with the paper's
// figures beside them (membw_table.cpp).
void print_membw_table(const probes::MembwOptions& o, const probes::MembwResult& res,
                       const std::vector<std::string>& kernel_names);

}  // namespace compas::app
