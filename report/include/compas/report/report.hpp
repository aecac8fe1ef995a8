// report: what the tools write (a static library, not installed: JSON stays out of programs).
// This header is the Report; run_info.hpp is the run metadata every report carries,
// extrap_json.hpp Extra-P's JSON input.
//
// Report: the output contract of every measuring command. One JSON object
// {"command", "version", "run", "machine", "params", "results": [records]}, the same records as CSV
// rows, and a readable table on stdout. Files are written to a temporary name beside the target and
// renamed, so an interrupted run never leaves half a file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compas/threads/topology.hpp"

namespace compas::perf {
struct RegionSummary;  // compas/perf/region.hpp
}  // namespace compas::perf

namespace compas::report {

using json = nlohmann::ordered_json;

// A region's summary as a record (region, calls, seconds per thread, counters, derived metrics).
json to_json(const perf::RegionSummary& s);

// The "machine" object shared by every command: the whole machine's topology (whatever slice of it
// this process was given), the slice ("slice": its sockets, cores, PUs and OS CPU list; left out
// for a synthetic topology, which is described as it is), compiler, library versions.
json machine_json(const threads::Topology& topo);

// "-" as an output path: the process's standard output, which then carries the data alone.
// claim_stdout_for_data() keeps the standard output for the data and sends everything else the
// program prints on it to stderr (fd 1 becomes a copy of fd 2); call it before printing.
// Idempotent.
void claim_stdout_for_data();

// Writes `contents` to `path` atomically (temporary file in the same directory, then rename).
// "-" writes to the standard output claimed by claim_stdout_for_data().
// A FIFO or a character device at `path` (itself or behind links: /dev/null, /dev/stdout, a
// shell's pipe) is written through instead, never replaced; a FIFO without a reader, a block
// device or a socket is refused. Throws std::runtime_error naming the path on failure.
void write_file_atomic(const std::string& path, const std::string& contents);

// The same, always by rename, whatever `path` names (a link or a device is replaced, never
// followed): for files in a directory the program made, which others may have prepared.
void replace_file_atomic(const std::string& path, const std::string& contents);

// Records as CSV: one column per key (in order of first appearance), one row per record.
std::string to_csv(const std::vector<json>& records);

class Report {
 public:
  Report(std::string command, json machine, json params)
      : command_(std::move(command)), machine_(std::move(machine)), params_(std::move(params)) {}

  void add(json record) { results_.push_back(std::move(record)); }
  const std::vector<json>& results() const { return results_; }
  json to_json() const;

  // A no-op for an empty path.
  void write_json(const std::string& path) const;

 private:
  std::string command_;
  json machine_;
  json params_;
  std::vector<json> results_;
};

// Version of compas, e.g. "0.1.0".
std::string version();

}  // namespace compas::report
