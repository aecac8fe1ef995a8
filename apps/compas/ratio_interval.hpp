// A confidence interval for the ratio of two sets of repeated measurements that needs no
// distribution: the Hodges-Lehmann estimate and the Mann-Whitney (Moses) interval of the pairwise
// ratios b_j / a_i. compas compare judges a difference real when the interval excludes 1.
#pragma once

#include <vector>

namespace compas::app {

struct RatioInterval {
  bool bounded = false;   // false: too few repetitions for the confidence asked
  double estimate = 0;    // the median of the pairwise ratios b_j / a_i
  double lo = 0, hi = 0;  // the interval (when bounded)
  double confidence = 0;  // its exact coverage, at least the one asked (0 when not bounded)
  double p_value = 1;     // Mann-Whitney's two-sided p, exact up to 400 pairs, else normal
};

// The smallest number of repetitions on each side that can bound a `confidence` interval
// (3 and 3 at 90%).
int repetitions_for(double confidence);

// Both lists of positive values, each of at least one. `confidence` in (0, 1), e.g. 0.9.
RatioInterval ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                             double confidence);

}  // namespace compas::app
