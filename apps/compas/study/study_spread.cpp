// The spread of a study's repeated measurements (study_spread.hpp).
#include "study_spread.hpp"

#include "time_units.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "compas/base/statistics.hpp"

namespace compas::app {

double Spread::relative() const {
  if (!known() || !(median > 0)) return 0;
  return (max - min) / median;
}

Spread spread_of(std::vector<double> values) {
  Spread s;
  if (values.empty()) return s;
  s.n = static_cast<int>(values.size());
  const base::Spread b = base::spread(std::move(values));
  s.median = b.median;
  s.min = b.min;
  s.max = b.max;
  return s;
}

Spread field_spread(const report::json& rec, const std::string& field) {
  Spread s;
  if (!rec.contains(field) || !rec[field].is_number()) return s;
  s.median = s.min = s.max = rec[field].get<double>();
  s.n = 1;
  const std::string lo = "min_" + field, hi = "max_" + field;
  if (rec.contains(lo) && rec.contains(hi) && rec[lo].is_number() && rec[hi].is_number()) {
    s.min = std::min(s.median, rec[lo].get<double>());
    s.max = std::max(s.median, rec[hi].get<double>());
    const int repeats = rec.contains("repeats") && rec["repeats"].is_number_integer()
                            ? rec["repeats"].get<int>()
                            : 2;
    s.n = std::max(2, repeats);
  }
  return s;
}

Spread ratio(const Spread& num, const Spread& den) {
  Spread r;
  if (num.n == 0 || den.n == 0 || !(den.min > 0)) return r;
  r.n = std::min(num.n, den.n);
  r.median = num.median / den.median;
  r.min = num.min / den.max;
  r.max = num.max / den.min;
  return r;
}

Spread scaled(const Spread& s, double factor) {
  Spread r = s;
  r.median *= factor;
  r.min *= factor;
  r.max *= factor;
  if (factor < 0) std::swap(r.min, r.max);
  return r;
}

Side side_of(const Spread& s, double threshold) {
  if (s.min > threshold) return Side::above;
  if (s.max < threshold) return Side::below;
  // A single value is on one side or exactly on the threshold.
  if (!s.known()) return s.median >= threshold ? Side::above : Side::below;
  return Side::within;
}

std::string with_range(const Spread& s, int decimals) {
  if (!s.known()) return fmt::format("{:.{}f}", s.median, decimals);
  return fmt::format("{:.{}f} ({:.{}f}-{:.{}f})", s.median, decimals, s.min, decimals, s.max,
                     decimals);
}

std::string with_range_significant(const Spread& s, int digits) {
  if (!s.known()) return significant(s.median, digits);
  return significant(s.median, digits) + " (" + significant(s.min, digits) + "-" +
         significant(s.max, digits) + ")";
}

std::string spread_cell(const Spread& s) {
  if (!s.known()) return "-";
  const std::string pct = fmt::format("{:.0f}%", 100 * s.relative());
  return s.wide() ? "**" + pct + "**" : pct;
}

}  // namespace compas::app
