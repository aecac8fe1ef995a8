// choose_grid3: the process grid of a 3-D DistArray (dist_grid3.hpp).
#include "dist_grid3.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace compas::detail {

namespace {

// n's prime factors, largest first.
std::vector<int> prime_factors(int n) {
  std::vector<int> f;
  for (int q = 2; static_cast<long>(q) * q <= n; ++q)
    while (n % q == 0) {
      f.push_back(q);
      n /= q;
    }
  if (n > 1) f.push_back(n);
  return {f.rbegin(), f.rend()};
}

}  // namespace

std::array<int, 3> choose_grid3(int processes, const std::array<int, 3>& asked) {
  const std::string what = "DistArray<T, 3>: process grid " + std::to_string(asked[0]) + " x " +
                           std::to_string(asked[1]) + " x " + std::to_string(asked[2]) + " for " +
                           std::to_string(processes) + " processes";
  long fixed = 1;
  for (int side : asked) {
    if (side < 0) throw std::invalid_argument(what + ": sides are 0 (compas chooses) or more");
    if (side > 0) fixed *= side;
  }
  const bool any_free = asked[0] == 0 || asked[1] == 0 || asked[2] == 0;
  if (fixed > processes || processes % fixed != 0 || (!any_free && fixed != processes))
    throw std::invalid_argument(what + ": the sides must multiply to the " +
                                std::to_string(processes) + " processes");
  std::array<int, 3> g = asked;
  for (int& side : g)
    if (side == 0) side = 1;
  for (int factor : prime_factors(processes / static_cast<int>(fixed))) {
    int best = -1;
    for (int d = 0; d < 3; ++d)
      if (asked[d] == 0 && (best < 0 || g[d] < g[best])) best = d;
    g[best] *= factor;
  }
  return g;
}

}  // namespace compas::detail
