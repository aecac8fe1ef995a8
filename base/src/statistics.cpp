#include "compas/base/statistics.hpp"

#include <algorithm>
#include <limits>

namespace compas::base {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double median_of_sorted(const std::vector<double>& v) {
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  return median_of_sorted(values);
}

double Spread::relative() const {
  return median != 0 ? (max - min) / median : kNaN;
}

Spread spread(std::vector<double> values) {
  if (values.empty()) return {kNaN, kNaN, kNaN};
  std::sort(values.begin(), values.end());
  return {values.front(), values.back(), median_of_sorted(values)};
}

}  // namespace compas::base
