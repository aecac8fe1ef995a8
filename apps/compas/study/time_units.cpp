// Table times (time_units.hpp).
#include "time_units.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace compas::app {

TimeUnit time_unit_for(const std::vector<double>& seconds) {
  double smallest = 0;
  for (double s : seconds)
    if (s > 0 && (smallest == 0 || s < smallest)) smallest = s;
  if (smallest == 0 || smallest >= 1) return {"s", 1};
  if (smallest >= 1e-3) return {"ms", 1e3};
  return {"us", 1e6};
}

std::string significant(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return value == 0 ? "0" : fmt::format("{}", value);
  const int magnitude = static_cast<int>(std::floor(std::log10(std::abs(value))));
  const int decimals = std::max(0, digits - 1 - magnitude);
  return fmt::format("{:.{}f}", value, decimals);
}

std::string in_unit(double seconds, const TimeUnit& unit, int digits) {
  return significant(seconds * unit.per_second, digits);
}

}  // namespace compas::app
