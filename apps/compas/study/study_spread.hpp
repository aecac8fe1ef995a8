// The spread of a study's repeated measurements: median, min and max of a point's repetitions,
// ratios of such points (a speedup, an efficiency, a share of the bus) with the range they can
// take, and whether a threshold lies clearly on one side of a range or within it. The study marks
// a point whose spread exceeds kWideSpread, and a verdict whose threshold lies within the spread
// says so instead of concluding.
#pragma once

#include <string>
#include <vector>

#include "compas/report/report.hpp"

namespace compas::app {

// (max - min) / median above this marks a point as noisy in the tables and plots.
inline constexpr double kWideSpread = 0.10;

struct Spread {
  double median = 0, min = 0, max = 0;
  int n = 0;  // repetitions behind it; 0: no value

  bool known() const { return n >= 2; }  // more than one repetition (or a reported min-max)
  // (max - min) / median; 0 when the spread is not known or the median is 0.
  double relative() const;
  bool wide() const { return known() && relative() > kWideSpread; }
};

// The spread of `values` (empty: n = 0). The median of an even count is the mean of the two
// middle values.
Spread spread_of(std::vector<double> values);

// One value with its spread from a record: `field` is the median, min_`field` and max_`field`
// the range (n = the record's "repeats", 2 when it has no such count). Without the bounds: n = 1.
// Without the field: n = 0.
Spread field_spread(const report::json& rec, const std::string& field);

// num / den with the range it can take: [num.min / den.max, num.max / den.min]; n the smaller of
// the two. A zero denominator gives n = 0.
Spread ratio(const Spread& num, const Spread& den);

// `s` times a constant factor (> 0).
Spread scaled(const Spread& s, double factor);

// Where a threshold lies against a range: the whole range above it, below it, or within it (the
// difference from the threshold is smaller than the spread).
enum class Side { above, below, within };
Side side_of(const Spread& s, double threshold);

// "1.23 (1.20-1.30)" with `decimals` decimals; the value alone when the spread is not known.
std::string with_range(const Spread& s, int decimals);

// "0.0812 (0.0750-0.0903)": each number with `digits` significant digits (a fixed count of
// decimals wrote 0.075 to 0.09 as "0.08 (0.08-0.08)"); the value alone when the spread is not
// known.
std::string with_range_significant(const Spread& s, int digits);

// "7%", or "**14%**" over kWideSpread; "-" when the spread is not known.
std::string spread_cell(const Spread& s);

}  // namespace compas::app
