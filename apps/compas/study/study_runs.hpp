// runs.jsonl, compas study's list of runs: one JSON record per line, appended (and synced) the
// moment a run ends. A finished run's record: id, title, kind, exit, seconds, json. A failed
// run's adds "failed": true, "reason", "log" and "log_tail"; a rerun runs it again.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>

#include "compas/report/report.hpp"

namespace compas::app {

// What runs.jsonl says, by run id: the runs that finished (a rerun skips them) and those whose
// last record says they failed (a rerun runs them again).
struct RunBook {
  std::map<std::string, report::json> done;
  std::map<std::string, report::json> failed;

  // Files a record under its id, replacing what an earlier record of that id said.
  void record(const report::json& rec);
};

// Reads runs.jsonl (no file: nothing done yet). A line that is not a whole record (torn by a kill
// mid-write, edited into other types) is said on stderr and its run counts as not done.
RunBook read_runs(const std::filesystem::path& file);

// Appends one record and syncs it. Throws std::runtime_error when the file cannot be written.
void append_run(const std::filesystem::path& file, const report::json& record);

// What is wrong with run `id`'s raw report in `dir`, as "raw/ID.json is damaged: why" (cut
// short, not a compas report, a link) or "raw/ID.json is missing"; "" when it is whole.
std::string raw_damage(const std::filesystem::path& dir, const std::string& id);

// The log of run `id` of the study in `dir`.
std::filesystem::path log_path(const std::filesystem::path& dir, const std::string& id);

// The end of a run's log, for its failure record and the report: its last `max_lines` lines
// within its last `max_bytes` bytes ("" when there is no log).
std::string log_tail(const std::filesystem::path& log, std::size_t max_lines = 20,
                     std::size_t max_bytes = 2048);

}  // namespace compas::app
