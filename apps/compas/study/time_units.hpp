// Times in a table: one unit for the whole table (s, ms or us, chosen so that its smallest time
// is at least 1), every value with the same number of significant digits, never a fixed count
// of decimals that leaves a sub-millisecond time one digit.
#pragma once

#include <string>
#include <vector>

namespace compas::app {

struct TimeUnit {
  const char* name = "s";  // "s", "ms", "us"
  double per_second = 1;   // 1, 1e3, 1e6
};

// The unit for a table of these times (seconds; zeros and negatives ignored).
TimeUnit time_unit_for(const std::vector<double>& seconds);

// `value` with `digits` significant digits in fixed notation: 1234.5 -> "1235" (4), 0.0012345 ->
// "0.001235", 12.3456 -> "12.35"; "0" for 0.
std::string significant(double value, int digits = 4);

// `seconds` in `unit` with `digits` significant digits.
std::string in_unit(double seconds, const TimeUnit& unit, int digits = 4);

}  // namespace compas::app
