// Shared pieces of the compas subcommands: the shared flags (DESIGN.md: --threads, --bind,
// --wait, --json, --csv, --quiet, each also read from COMPAS_<NAME>) and list parsing.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "compas/perf/report.hpp"

namespace compas::app {

struct OutputFlags {
  std::string json;
  std::string csv;
  bool quiet = false;
};

void add_output_flags(CLI::App& cmd, OutputFlags& out);

// "1,2,4" or "1-4" or "2,4-8": positive thread counts. Throws std::invalid_argument naming the
// flag.
std::vector<int> parse_thread_list(const std::string& flag, const std::string& text);

// Checks, before any measurement, that the files the flags name can be written (their directory
// exists and is writable). Throws std::invalid_argument naming the flag and path.
void check_outputs(const OutputFlags& out);

// Writes the report files the flags ask for and returns.
void write_outputs(const perf::Report& report, const OutputFlags& out);

// The hidden option `--topology DESC` loads an hwloc synthetic topology instead of the host.
threads::Topology load_topology(const std::string& synthetic);

}  // namespace compas::app
