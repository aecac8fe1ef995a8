// compas study's report: report.md (tables, speedups with their spread, scaling models,
// verdicts, the paper's figures beside ours), study.json (the numbers behind it), study.csv (the
// kernel tables, one row per point) and extrap/ (the times in Extra-P's text format).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "study_plan.hpp"
#include "study_runs.hpp"

namespace compas::app {

// How many steps of `plan` have a record in `runs`.
int count_in(const std::vector<Step>& plan, const std::map<std::string, report::json>& runs);

// Writes the report of what `book` holds for `plan`; `complete`: every planned run finished.
void write_report(const StudyArgs& a, const std::vector<Step>& plan, const RunBook& book,
                  bool complete);

// report.html beside report.md: the same report as one HTML file with its plots inline.
void write_html_report(const std::filesystem::path& dir);

}  // namespace compas::app
