// The study's measurements in Extra-P's JSON Lines format, one file per kernel: a line per
// measured point with every repetition, over the parameters the study varies (processes,
// threads, and the kernel's size where it is a number: Laplace's and GEMM's n, the sort's keys),
// so that Extra-P can fit a model in several parameters. Oversubscribed points are left out, as
// from compas's own model.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace compas::app {

// One measured point of a kernel: its size label ("n=640", "keys=4M", "class=W"), placement and
// times per unit of work (every run's), and the unit ("sweep").
struct ExtrapPoint {
  std::string size;
  int procs = 1, threads = 1;
  bool oversubscribed = false;
  std::vector<double> seconds;
  std::string unit;
};

// The size label's parameter: {"n", 640}, {"keys", 4194304}; empty name when not a number.
std::pair<std::string, double> size_parameter(const std::string& label);

struct ExtrapLines {
  std::string text;                   // the JSON Lines
  std::map<std::string, int> values;  // distinct values per parameter
  std::string note;                   // what a model over these points can and cannot do
};

// Extra-P wants this many distinct values of each parameter for a model.
constexpr int kExtrapValuesPerParameter = 5;

// `kernel`'s points as Extra-P JSON Lines (metric time_per_UNIT); the size is a parameter when
// every point's size is a number and the points have more than one; sizes that are not numbers
// (NPB's classes) are told apart by the callpath ("cg/class=A"), never merged into one point.
// Empty text when there is nothing to export.
ExtrapLines extrap_lines(const std::string& kernel, const std::vector<ExtrapPoint>& points);

}  // namespace compas::app
