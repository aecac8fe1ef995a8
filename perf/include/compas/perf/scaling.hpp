// Scaling analysis for reports: speedup, parallel efficiency and Amdahl's serial fraction fitted to
// measured speedups (GAMMA paper, section 3).
#pragma once

#include <cmath>
#include <utility>
#include <vector>

namespace compas::perf {

struct AmdahlFit {
  double serial_fraction = 0;  // f in S(N) = 1 / (f + (1 - f) / N)
  double rms_error = 0;        // of the fitted speedups against the measured ones
  int points = 0;              // (N, S) pairs used (N > 1)
};

// Least-squares fit of f to (N, S) pairs. With y = 1/S - 1/N and x = 1 - 1/N, Amdahl's law is
// y = f x, so f = sum(x y) / sum(x^2). Points with N <= 1 or S <= 0 carry no information and are
// skipped; f is clamped to [0, 1].
inline AmdahlFit fit_amdahl(const std::vector<std::pair<double, double>>& n_speedup) {
  AmdahlFit fit;
  double sxy = 0, sxx = 0;
  for (const auto& [n, s] : n_speedup) {
    if (!(n > 1) || !(s > 0)) continue;
    const double x = 1 - 1 / n, y = 1 / s - 1 / n;
    sxy += x * y;
    sxx += x * x;
    ++fit.points;
  }
  if (fit.points == 0 || sxx <= 0) return fit;
  fit.serial_fraction = std::min(1.0, std::max(0.0, sxy / sxx));
  double se = 0;
  for (const auto& [n, s] : n_speedup) {
    if (!(n > 1) || !(s > 0)) continue;
    const double model = 1 / (fit.serial_fraction + (1 - fit.serial_fraction) / n);
    se += (model - s) * (model - s);
  }
  fit.rms_error = std::sqrt(se / fit.points);
  return fit;
}

}  // namespace compas::perf
