// Measurements in Extra-P's input formats, so that a study's data can be loaded in Extra-P
// (https://github.com/extra-p/extrap, docs/file-formats.md: "Text file format" and "JSON format").
//
// Text format, as written here:
//
//   PARAMETER p
//   POINTS (1) (2) (4)
//
//   METRIC time
//   REGION main
//   DATA 10.1 10.2        <- one DATA line per point, in POINTS order, its repetitions on the line
//   DATA 5.2 5.1
//   DATA 2.7 2.6
//
// Several parameters give "PARAMETER p n" and points "(1 64) (2 64)". Series are written grouped
// by metric, each METRIC line once: Extra-P's reader attaches the DATA after a repeated METRIC line
// to the metric declared last rather than to the one named. Numbers are written in the
// documented NUMBER form (no exponent, shortest digits that read back to the same double).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace compas::analysis {

// One region (call path; "->" separates its levels, as Extra-P reads it) and metric.
struct ExtrapSeries {
  std::string region;
  std::string metric;
  std::vector<std::vector<double>> values;  // per point of ExtrapData::points, the repetitions

  bool operator==(const ExtrapSeries&) const = default;
};

struct ExtrapData {
  std::vector<std::string> parameters;      // 1 to 4 names (Extra-P's text reader takes 4)
  std::vector<std::vector<double>> points;  // per point one coordinate per parameter; distinct
  std::vector<ExtrapSeries> series;         // distinct (region, metric) pairs

  bool operator==(const ExtrapData&) const = default;
};

// The text format. Throws std::invalid_argument naming the first thing Extra-P could not read back
// as given: no parameter or more than 4, a name with a line break, tab or doubled space (the reader
// folds those), a parameter name with a space, a point with the wrong number of coordinates or
// twice, a series without a value for every point, a repeated (region, metric), a value that is
// not finite.
std::string extrap_text(const ExtrapData& data);

// Reads the text format by the documentation's grammar and rules: comment lines ("#") and blank
// lines anywhere, PARAMETER lines before POINTS lines before measurements, points in parentheses
// (bare numbers with one parameter), METRIC optional (the empty name then) and either before or
// after REGION, and exactly one DATA line per point after every REGION or METRIC line that starts a
// series. Also refused: NUMBERs outside the documented form (e.g. 1e-3), a point given twice,
// and a (region, metric) given twice. Series come out in the order of the file.
// Throws std::invalid_argument("line N: ...").
ExtrapData parse_extrap_text(std::string_view text);

// The checks of extrap_text alone (for the JSON format: compas/report/extrap_json.hpp).
void check_extrap(const ExtrapData& data);

}  // namespace compas::analysis
