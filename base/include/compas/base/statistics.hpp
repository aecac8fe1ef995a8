// Small statistics of repeated measurements: the median and the spread around it.
#pragma once

#include <vector>

namespace compas::base {

// The middle value (the mean of the two middle ones for an even count); NaN for no values.
double median(std::vector<double> values);

// The smallest, largest and median value of a set of measurements; all NaN for no values.
struct Spread {
  double min = 0, max = 0, median = 0;
  // (max - min) / median: how far the measurements scatter, relative to their median; NaN for no
  // values or a median of 0.
  double relative() const;
};
Spread spread(std::vector<double> values);

}  // namespace compas::base
