// compas compare: what two study directories, or two JSON files of one command, say about the same
// points, and whether each difference is larger than the noise the inputs themselves show.
// Loading, matching and judging live here; cmd_compare.cpp parses the flags and prints.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compas/report/report.hpp"

namespace compas::app::comparison {

using json = report::json;

// The rules (inputs, keys, measurements, spread, verdict) as the help text and the JSON say them.
extern const char* const kRules;

// One input: a study directory (its study.json), a study.json, or a compas command's JSON file.
struct Input {
  std::string label;  // "A" or "B"
  std::string path;   // as given
  std::string file;   // the JSON file read: path, or path/study.json
  std::string kind;   // "study", or the command: "membw", "run laplace"
  std::string what;   // "a study directory", "a 'membw' JSON file"
  json doc;
};

// Reads and checks one input. Throws std::invalid_argument naming the label, the path and what is
// wrong with it.
Input load_input(const std::string& label, const std::string& path);

// Two inputs of different kinds cannot be compared: std::invalid_argument naming both.
void check_same_kind(const Input& a, const Input& b);

enum class Better { lower, higher };

// One side's value of a point and the range its repetitions span.
struct Value {
  double value = 0;
  double lo = 0, hi = 0;  // the range (value, value for a single run)
  double center = 0;      // the median of the samples, else the value
  int runs = 1;           // samples counted; 0 when only a min and a max are known
  bool spread_known = false;
  std::vector<double> samples;  // the repetitions, when known (a rate's may come from its times)
  // (hi - lo) / center; 0 when unknown.
  double spread() const;
};

struct Point {
  std::string key;          // identifies the point within its input
  json key_fields;          // the key as an object
  std::string measurement;  // "seconds", "bandwidth_gbs"
  Better better = Better::lower;
  Value value;
  // How much was done (iterations, sweeps, passes, bytes moved): a total time is paired only with
  // one of equal work; a rate (work per second) whenever the point is the same. Null: not recorded.
  json work;
  bool needs_equal_work = false;
};

// The points of an input, in the input's order. Throws std::invalid_argument naming the file and
// the place when a study row lacks what every row has.
std::vector<Point> points_of(const Input& in);

struct Verdict {
  bool comparable = false;      // both values positive and of equal work
  bool different_work = false;  // a time of unequal (or unrecorded) work: not paired
  double ratio = 0;             // B / A
  double speedup = 0;           // how many times B is faster than A (A / B for times)
  bool real = false;            // "real difference", else "within noise"
  bool unknown = false;         // no spread known on either side: no verdict (single runs)
  bool tested = false;          // judged by the interval below, else by the ranges (see kRules)
  double ci_lo = 0, ci_hi = 0, confidence = 0;  // of B / A, when tested
  double p_value = 1;                           // Mann-Whitney's, when tested
  std::string note;
};

// The confidence of the interval that decides a verdict.
constexpr double kConfidence = 0.90;

Verdict judge(const Value& a, const Value& b, Better better);

// The verdict of a time whose work differs between A and B (or is not recorded on a side).
Verdict different_work(const json& a, const json& b);

// One point of either input: in both (a and b), or only in one.
struct Row {
  Point point;  // its value is A's when A has the point, else B's
  std::optional<Value> a, b;
  Verdict verdict;
  json b_work;  // B's work when both have the point (A's is point.work)
};

// A's points in A's order, then those only B has.
std::vector<Row> match(const std::vector<Point>& a, const std::vector<Point>& b);

// "real difference", "within noise", "unknown (no spread)", "not comparable", "different work",
// "only in A", "only in B".
std::string verdict_name(const Row& r);

struct Summary {
  int both = 0, faster = 0, slower = 0, noise = 0, not_comparable = 0, only_a = 0, only_b = 0;
  int different_work = 0;
  int unknown = 0;  // paired, but neither side's spread is known
  int tested = 0;   // verdicts by the interval: at 90% each, about a tenth of them err by chance
  int ratios = 0;   // points in the geometric means
  double geomean_speedup = 0;           // of B over A, over the comparable points
  std::optional<double> geomean_ratio;  // of B / A, when every point is of one direction
};

Summary summarize(const std::vector<Row>& rows);

// The two "machine" objects side by side, one line per field (nested objects as a.b), the
// compas version first.
struct MachineLine {
  std::string field, a, b;
  bool differs = false;
};

std::vector<MachineLine> machine_lines(const Input& a, const Input& b);

// A field's value as text: a string as it is, anything else as its JSON.
std::string text_of(const json& v);

// The whole comparison as the --json file holds it.
json comparison_json(const Input& a, const Input& b, const std::vector<MachineLine>& machines,
                     const std::vector<Row>& rows, const Summary& s);

// One row as a flat record (the JSON's results, the CSV's rows).
json row_json(const Row& r);

// The paired points whose real difference makes B worse than A by more than `factor` (> 1):
// B's time over A's, or A's rate over B's, above it.
std::vector<const Row*> regressions(const std::vector<Row>& rows, double factor);

}  // namespace compas::app::comparison
