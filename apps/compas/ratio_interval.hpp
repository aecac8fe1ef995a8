// A confidence interval for the ratio of two sets of repeated measurements that needs no
// distribution: the Hodges-Lehmann estimate and the Mann-Whitney (Moses) interval of the pairwise
// ratios b_j / a_i. compas compare judges a difference real when the interval excludes 1. The
// m x n ratios are never held: each bound and the estimate is found by bisection over the values
// a double can take, counting the ratios below in one pass (memory O(m + n), time
// O((m + n) log(m + n)) for the sorts and 64 passes of m + n per order statistic).
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

// Two lists of at least one value each (else std::invalid_argument), `confidence` in (0, 1),
// e.g. 0.9. A ratio of times or rates needs positive values: with a value that is not positive
// and finite, no interval (not bounded, p 1, estimate 0).
RatioInterval ratio_interval(std::vector<double> a, std::vector<double> b, double confidence);

}  // namespace compas::app
