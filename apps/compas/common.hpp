// Shared pieces of the compas subcommands: the shared flags (--json, --csv, --quiet; --events
// for the probes that count, also read from COMPAS_EVENTS) and list parsing.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "compas/base/statistics.hpp"
#include "compas/perf/counters.hpp"
#include "compas/perf/region.hpp"
#include "compas/report/report.hpp"

namespace compas::app {

struct OutputFlags {
  std::string json;
  std::string csv;
  bool quiet = false;
  // --replace-outputs (hidden; compas study's runs): the files are always replaced by rename
  // (report::replace_file_atomic), a link, FIFO or device at the path never written through.
  bool replace = false;
};

void add_output_flags(CLI::App& cmd, OutputFlags& out);

// "1,2,4" or "1-4" or "2,4-8": positive thread counts. Throws std::invalid_argument naming the
// flag.
std::vector<int> parse_thread_list(const std::string& flag, const std::string& text);

// Checks, before any measurement, that the files the flags name can be written (their directory
// exists and is writable). Throws std::invalid_argument naming the flag and path.
void check_outputs(const OutputFlags& out);

// Writes `contents` to `path` ("" : nothing) as the flags say: by rename under --replace-outputs,
// else through report::write_file_atomic.
void write_output(const OutputFlags& out, const std::string& path, const std::string& contents);

// Writes the report files the flags ask for and returns.
void write_outputs(const report::Report& report, const OutputFlags& out);

// --events LIST|GROUP (env COMPAS_EVENTS): PAPI events or groups counted around each measured
// point. Empty (the default): no counters.
void add_events_flag(CLI::App& cmd, std::string& events);

// Resolves --events before anything is measured (perf::choose_events): an unknown event or group
// is bad input (std::invalid_argument naming the flag and value); events this machine cannot
// count go through the fallback chain, whose notice is printed here, once.
perf::EventChoice choose_events_flag(const std::string& request);

// The params entries that say what was asked for and what is counted.
report::json events_params(const perf::EventChoice& choice);

// Adds to a record "counters" (each event read on every thread of the region, summed over them;
// an event not read is absent, never 0) and "derived" (the metrics perf::aggregate computed).
void add_counters_json(report::json& record, const perf::RegionSummary& region);

// After a command's own table: the region table (perf::format_table) with a line saying what
// was counted. Nothing when no counters were requested.
void print_regions(const std::vector<perf::RegionSummary>& regions,
                   const perf::EventChoice& choice);

// Threads whose event set could not be made, one line each on stderr (also under --quiet).
void warn_counter_errors(const std::vector<std::string>& errors);

// The hidden option `--topology DESC` loads an hwloc synthetic topology instead of the host.
threads::Topology load_topology(const std::string& synthetic);

using base::median;  // the mean of the middle two for an even count

}  // namespace compas::app
