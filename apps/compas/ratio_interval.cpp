// The Mann-Whitney interval of a ratio (ratio_interval.hpp).
#include "ratio_interval.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace compas::app {

namespace {

// Above this many pairs the exact distribution of U gives way to the normal approximation.
constexpr std::size_t kExactPairs = 400;

// P(U <= u) for u = 0..m*n under the null hypothesis (no ties): the number of arrangements of m
// a's and n b's with u pairs (a_i < b_j), over C(m+n, m). counts[i][u] for i a's among the first
// k values, built one value at a time.
std::vector<double> exact_cdf(int m, int n) {
  // ways[j][u]: arrangements of j a's and k - j b's with u pairs, for the current k.
  std::vector<std::vector<double>> ways(m + 1, std::vector<double>(m * n + 1, 0));
  ways[0][0] = 1;
  for (int k = 1; k <= m + n; ++k)
    for (int j = std::min(k, m); j >= 0; --j) {
      const int bs = k - j;  // b's so far; a new b adds j pairs (each a before it)
      if (bs > n) {
        std::fill(ways[j].begin(), ways[j].end(), 0);
        continue;
      }
      std::vector<double> next(m * n + 1, 0);
      if (bs >= 1)  // the k-th value is a b
        for (int u = j; u <= m * n; ++u) next[u] += ways[j][u - j];
      if (j >= 1)  // the k-th value is an a
        for (int u = 0; u <= m * n; ++u) next[u] += ways[j - 1][u];
      ways[j] = std::move(next);
    }
  std::vector<double> cdf(m * n + 1);
  double total = 0;
  for (double w : ways[m]) total += w;
  double run = 0;
  for (int u = 0; u <= m * n; ++u) cdf[u] = (run += ways[m][u]) / total;
  return cdf;
}

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

// P(U <= u), exact or normal.
struct UDistribution {
  int m, n;
  std::vector<double> cdf;  // empty: normal
  double at_most(double u) const {
    if (u < 0) return 0;
    if (!cdf.empty()) return cdf[std::min<std::size_t>(std::size_t(u), cdf.size() - 1)];
    const double mean = m * n / 2.0, sd = std::sqrt(m * n * (m + n + 1) / 12.0);
    return normal_cdf((u + 0.5 - mean) / sd);
  }
};

UDistribution distribution(int m, int n) {
  UDistribution d{m, n, {}};
  if (std::size_t(m) * std::size_t(n) <= kExactPairs) d.cdf = exact_cdf(m, n);
  return d;
}

// The largest k with P(U <= k - 1) <= alpha / 2: the interval is the k-th smallest and k-th
// largest pairwise ratio. 0 when none.
int interval_rank(const UDistribution& d, double alpha) {
  int k = 0;
  while (k < d.m * d.n && d.at_most(k) <= alpha / 2 + 1e-12) ++k;
  return k;
}

double median_of_sorted(const std::vector<double>& v) {
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// U: the pairs with a_i < b_j, ties counted one half.
double u_statistic(const std::vector<double>& a, const std::vector<double>& b) {
  double u = 0;
  for (double x : a)
    for (double y : b) u += x < y ? 1 : x == y ? 0.5 : 0;
  return u;
}

}  // namespace

int repetitions_for(double confidence) {
  for (int r = 1; r < 64; ++r)
    if (interval_rank(distribution(r, r), 1 - confidence) > 0) return r;
  return 64;
}

RatioInterval ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                             double confidence) {
  if (a.empty() || b.empty() || !(confidence > 0 && confidence < 1))
    throw std::invalid_argument("ratio_interval: empty samples or a confidence outside (0, 1)");
  std::vector<double> ratios;
  ratios.reserve(a.size() * b.size());
  for (double x : a)
    for (double y : b) ratios.push_back(y / x);
  std::sort(ratios.begin(), ratios.end());
  RatioInterval r;
  r.estimate = median_of_sorted(ratios);
  const int m = int(a.size()), n = int(b.size());
  const UDistribution d = distribution(m, n);
  const double u = u_statistic(a, b);
  r.p_value =
      std::min(1.0, 2 * std::min(d.at_most(std::floor(u)), 1 - d.at_most(std::ceil(u) - 1)));
  const int k = interval_rank(d, 1 - confidence);
  if (k == 0) return r;
  r.bounded = true;
  r.lo = ratios[std::size_t(k - 1)];
  r.hi = ratios[ratios.size() - std::size_t(k)];
  r.confidence = 1 - 2 * d.at_most(k - 1);
  return r;
}

}  // namespace compas::app
