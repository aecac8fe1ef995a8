// Scaling analysis for reports: speedup, parallel efficiency and Amdahl's serial fraction fitted to
// measured speedups (GAMMA paper, section 3). The general performance model (Extra-P's normal
// form, chosen by cross-validation) is in model.hpp.
#pragma once

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace compas::analysis {

// Below three informative points a one-parameter fit of Amdahl's law says nothing: one point fixes
// f exactly and two leave a single degree of freedom, too little to tell the law from noise.
inline constexpr int amdahl_min_points = 3;

struct AmdahlFit {
  // f in S(N) = 1 / (f + (1 - f) / N); NaN when there is no model (see `reason`).
  double serial_fraction = std::numeric_limits<double>::quiet_NaN();
  // Root mean square of the relative residuals (S_fit - S) / S over the points used, so that it
  // reads the same at 2 and at 64 threads. Given whenever at least one point was usable, also
  // without a model (it is then the error of the least-squares f that was not accepted); NaN
  // when no point was usable.
  double rms_error = std::numeric_limits<double>::quiet_NaN();
  int points = 0;        // (N, S) pairs used: N > 1 and S > 0
  bool clamped = false;  // the least-squares f lay outside [0, 1] (superlinear or slowing down)
  std::string reason;    // why there is no model, e.g. "2 points: at least 3 are needed"

  bool ok() const { return reason.empty(); }
};

// Least-squares fit of f to (N, S) pairs. With y = 1/S - 1/N and x = 1 - 1/N, Amdahl's law is
// y = f x, so f = sum(x y) / sum(x^2). Points with N <= 1 or S <= 0 (or not finite) carry no
// information and are skipped; f is clamped to [0, 1]. Fewer than `amdahl_min_points` usable
// points give no model: serial_fraction is NaN and `reason` says why.
AmdahlFit fit_amdahl(const std::vector<std::pair<double, double>>& n_speedup);

// Gustafson's law for weak scaling (the work grows with N): scaled speedup S(N) = N - a (N - 1),
// a the serial fraction of the time on N workers. The same fields and rules as AmdahlFit
// (serial_fraction is a; 3 points at least; rms of the relative residuals); S is a rate ratio,
// rate(N) / rate(1).
AmdahlFit fit_gustafson(const std::vector<std::pair<double, double>>& n_scaled_speedup);

}  // namespace compas::analysis
