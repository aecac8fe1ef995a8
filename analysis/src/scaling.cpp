// Amdahl's-law and Gustafson's-law fits (scaling.hpp).
#include "compas/analysis/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace compas::analysis {
namespace {

using Points = std::vector<std::pair<double, double>>;

bool informative(double n, double s) {
  return std::isfinite(n) && std::isfinite(s) && n > 1 && s > 0;
}

Points usable_points(const Points& n_speedup) {
  Points out;
  for (const auto& [n, s] : n_speedup)
    if (informative(n, s)) out.push_back({n, s});
  return out;
}

// Unclamped least-squares f of y = f x (y = 1/S - 1/N, x = 1 - 1/N); every x is > 0.
double least_squares_fraction(const Points& pts) {
  double sxy = 0, sxx = 0;
  for (const auto& [n, s] : pts) {
    const double x = 1 - 1 / n, y = 1 / s - 1 / n;
    sxy += x * y;
    sxx += x * x;
  }
  return sxy / sxx;
}

double relative_rms(const Points& pts, double f) {
  double se = 0;
  for (const auto& [n, s] : pts) {
    const double r = (1 / (f + (1 - f) / n) - s) / s;
    se += r * r;
  }
  return std::sqrt(se / static_cast<double>(pts.size()));
}

// Unclamped least-squares a of N - S = a (N - 1); every N - 1 is > 0.
double least_squares_gustafson(const Points& pts) {
  double sxy = 0, sxx = 0;
  for (const auto& [n, s] : pts) {
    sxy += (n - 1) * (n - s);
    sxx += (n - 1) * (n - 1);
  }
  return sxy / sxx;
}

double relative_rms_gustafson(const Points& pts, double a) {
  double se = 0;
  for (const auto& [n, s] : pts) {
    const double r = (n - a * (n - 1) - s) / s;
    se += r * r;
  }
  return std::sqrt(se / static_cast<double>(pts.size()));
}

std::string too_few(int points) {
  return std::to_string(points) + (points == 1 ? " point" : " points") + ": at least " +
         std::to_string(amdahl_min_points) + " are needed";
}

// The fit both laws share: the least-squares fraction over the usable points, clamped to [0, 1],
// with its error; a fraction only from amdahl_min_points points.
AmdahlFit fit_fraction(const Points& n_speedup, const char* speedup,
                       double (*least_squares)(const Points&),
                       double (*rms)(const Points&, double)) {
  AmdahlFit fit;
  const Points pts = usable_points(n_speedup);
  fit.points = static_cast<int>(pts.size());
  if (pts.empty()) {
    fit.reason = std::string("no usable point (N > 1 and ") + speedup + " > 0)";
    return fit;
  }
  const double raw = least_squares(pts);
  const double f = std::clamp(raw, 0.0, 1.0);
  fit.clamped = f != raw;
  fit.rms_error = rms(pts, f);
  if (fit.points < amdahl_min_points) {
    fit.reason = too_few(fit.points);
    return fit;
  }
  fit.serial_fraction = f;
  return fit;
}

}  // namespace

AmdahlFit fit_gustafson(const Points& n_scaled_speedup) {
  return fit_fraction(n_scaled_speedup, "scaled speedup", least_squares_gustafson,
                      relative_rms_gustafson);
}

AmdahlFit fit_amdahl(const Points& n_speedup) {
  return fit_fraction(n_speedup, "speedup", least_squares_fraction, relative_rms);
}

}  // namespace compas::analysis
