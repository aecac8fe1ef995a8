// The study's scaling conclusions for one kernel size: Amdahl's serial fraction (from 3 points at
// least, or why there is none), a performance model of time against p = P x T in Extra-P's
// normal form with its prediction for the next larger job, and the measurements in Extra-P's
// text format so that users can load them there.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace compas::app {

// One measured point of a kernel size: its time per unit of work (the median over its runs), and
// each run's.
struct ScalingPoint {
  int procs = 1, threads = 1;
  bool oversubscribed = false;
  double seconds = 0;               // per unit
  std::vector<double> repetitions;  // each run's seconds per unit; empty: `seconds` only
};

struct ScalingSummary {
  std::string markdown;         // lines for report.md
  nlohmann::ordered_json json;  // for study.json
};

// `speedups` are the (P x T, speedup) pairs of the points that are not oversubscribed.
// Under weak scaling (`weak`) the speedups are scaled speedups (rate ratios) and the serial
// fraction is Gustafson's instead of Amdahl's. The model is of the time per `unit` ("sweep").
ScalingSummary scaling_summary(const std::vector<std::pair<double, double>>& speedups,
                               const std::vector<ScalingPoint>& points, bool weak,
                               const std::string& unit);

// The points' times per `unit` in Extra-P's text format (parameters processes and threads,
// region `region`, metric time_per_UNIT), or "" when there is nothing to export.
std::string extrap_export(const std::string& region, const std::vector<ScalingPoint>& points,
                          const std::string& unit);

}  // namespace compas::app
