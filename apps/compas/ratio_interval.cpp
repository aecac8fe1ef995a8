// The Mann-Whitney interval of a ratio (ratio_interval.hpp).
#include "ratio_interval.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
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
  double m, n;
  std::vector<double> cdf;  // empty: normal
  std::uint64_t pairs() const { return std::uint64_t(m) * std::uint64_t(n); }
  double at_most(double u) const {
    if (u < 0) return 0;
    if (!cdf.empty()) return cdf[std::min<std::size_t>(std::size_t(u), cdf.size() - 1)];
    const double mean = m * n / 2.0, sd = std::sqrt(m * n * (m + n + 1) / 12.0);
    return normal_cdf((u + 0.5 - mean) / sd);
  }
};

UDistribution distribution(std::size_t m, std::size_t n) {
  UDistribution d{double(m), double(n), {}};
  if (m * n <= kExactPairs) d.cdf = exact_cdf(int(m), int(n));
  return d;
}

// The largest k with P(U <= k - 1) <= alpha / 2: the interval is the k-th smallest and k-th
// largest pairwise ratio. 0 when none. P(U <= u) grows with u: found by bisection.
std::uint64_t interval_rank(const UDistribution& d, double alpha) {
  const auto below = [&](std::uint64_t u) { return d.at_most(double(u)) <= alpha / 2 + 1e-12; };
  std::uint64_t lo = 0, hi = d.pairs();  // the answer lies in [lo, hi]
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (below(mid))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// U: the pairs with a_i < b_j, ties counted one half; a and b sorted.
double u_statistic(const std::vector<double>& a, const std::vector<double>& b) {
  double u = 0;
  std::size_t less = 0, equal_end = 0;  // a[0, less) < y; a[less, equal_end) == y
  for (double y : b) {
    while (less < a.size() && a[less] < y) ++less;
    equal_end = std::max(equal_end, less);
    while (equal_end < a.size() && a[equal_end] == y) ++equal_end;
    u += double(less) + 0.5 * double(equal_end - less);
  }
  return u;
}

// A positive double's bits order as its value does (+0 and +inf included).
std::uint64_t bits_of(double x) {
  return std::bit_cast<std::uint64_t>(x);
}

double double_of(std::uint64_t bits) {
  return std::bit_cast<double>(bits);
}

// The pairwise ratios b_j / a_i of two sorted lists of positive values, never all held: their
// k-th smallest is found by bisection over the values a double can take, counting the ratios at
// most each in one pass (b_j / a_i, as computed, grows with j and falls with i).
class PairwiseRatios {
 public:
  PairwiseRatios(const std::vector<double>& a, const std::vector<double>& b) : a_(a), b_(b) {}

  std::uint64_t count() const { return std::uint64_t(a_.size()) * b_.size(); }

  // The k-th smallest ratio, k in 1..count(): exactly the one sorting all of them would give.
  double kth(std::uint64_t k) const {
    std::uint64_t lo = bits_of(b_.front() / a_.back()), hi = bits_of(b_.back() / a_.front());
    while (lo < hi) {  // the smallest t with at least k ratios <= t lies in [lo, hi]
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (at_most(double_of(mid)) >= k)
        hi = mid;
      else
        lo = mid + 1;
    }
    return double_of(lo);
  }

  double median() const {
    const std::uint64_t n = count();
    return n % 2 ? kth(n / 2 + 1) : (kth(n / 2) + kth(n / 2 + 1)) / 2;
  }

 private:
  // The ratios <= t: for each a_i (ascending) the b_j with b_j / a_i <= t are a prefix of b that
  // only grows.
  std::uint64_t at_most(double t) const {
    std::uint64_t total = 0;
    std::size_t j = 0;
    for (double x : a_) {
      while (j < b_.size() && b_[j] / x <= t) ++j;
      total += j;
    }
    return total;
  }

  const std::vector<double>& a_;
  const std::vector<double>& b_;
};

bool all_positive(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return x > 0 && std::isfinite(x); });
}

}  // namespace

int repetitions_for(double confidence) {
  for (int r = 1; r < 64; ++r)
    if (interval_rank(distribution(std::size_t(r), std::size_t(r)), 1 - confidence) > 0) return r;
  return 64;
}

RatioInterval ratio_interval(std::vector<double> a, std::vector<double> b, double confidence) {
  if (a.empty() || b.empty() || !(confidence > 0 && confidence < 1))
    throw std::invalid_argument("ratio_interval: empty samples or a confidence outside (0, 1)");
  RatioInterval r;
  if (!all_positive(a) || !all_positive(b)) return r;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  const PairwiseRatios ratios(a, b);
  r.estimate = ratios.median();
  const UDistribution d = distribution(a.size(), b.size());
  const double u = u_statistic(a, b);
  r.p_value =
      std::min(1.0, 2 * std::min(d.at_most(std::floor(u)), 1 - d.at_most(std::ceil(u) - 1)));
  const std::uint64_t k = interval_rank(d, 1 - confidence);
  if (k == 0) return r;
  r.bounded = true;
  r.lo = ratios.kth(k);
  r.hi = ratios.kth(ratios.count() - k + 1);
  r.confidence = 1 - 2 * d.at_most(double(k - 1));
  return r;
}

}  // namespace compas::app
