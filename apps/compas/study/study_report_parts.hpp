// The parts of compas study's report (study_report.cpp writes the machine's sections and puts
// the report together; study_kernel_report.cpp writes a section per kernel size).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compas/report/report.hpp"
#include "extrap_lines.hpp"
#include "study_plan.hpp"
#include "study_runs.hpp"
#include "study_spread.hpp"

namespace compas::app {

struct ReportContext {
  ReportContext(const StudyArgs& args, const std::vector<Step>& p, const RunBook& b)
      : a(args), plan(p), book(b), dir(args.out) {}

  const StudyArgs& a;
  const std::vector<Step>& plan;
  const RunBook& book;
  std::filesystem::path dir;

  std::ostringstream md;                            // report.md
  report::json study;                               // study.json
  std::ostringstream csv;                           // study.csv
  std::map<std::string, std::string> extrap_files;  // file name in extrap/ -> its text
  std::map<std::string, std::vector<ExtrapPoint>> extrap_points;  // kernel -> its points
  Spread triad_saturation;      // the triad's peak total bandwidth, GB/s (n = 0: not measured)
  std::set<std::string> plots;  // plots/*.png not yet shown in the report
  // compas membw's total bandwidth, GB/s with its repeats' range, by kernel (load, copy, ...)
  // and thread count: what each kernel's own traffic is compared with.
  std::map<std::string, std::map<int, Spread>> streams;
  double streams_busy = 0;  // other processes' share of the CPU time while membw ran

  // `text` (COMPaS 1998's figures) unless --no-paper left them out.
  std::string paper(const std::string& text) const { return a.no_paper ? std::string() : text; }

  // Shows plots/`file` here when the study made it (an image link), once.
  void embed(const std::string& file, const std::string& alt);

  // Run `id`'s own JSON report, when the run finished and its file parses.
  std::optional<report::json> raw(const std::string& id) const;
};

// A section per kernel size: every P x T point with the spread of its runs, speedups with their
// range, the scaling models and the verdict; the rows also go to study.json and study.csv.
void write_kernel_sections(ReportContext& c);

// The CSV header of study.csv.
extern const char* const kStudyCsvHeader;

}  // namespace compas::app
