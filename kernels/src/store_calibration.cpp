// The block schedule of --stores auto's calibration sweeps and its decision.
#include "store_calibration.hpp"

#include <algorithm>
#include <array>

namespace compas::kernels::calibration {

namespace {

double median(std::array<double, kTimedPerKind> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

bool streams(int sweep) {
  return (sweep - kFirst) / kBlock % 2 == 0;
}

bool timed(int sweep) {
  return (sweep - kFirst) % kBlock >= kUntimed;
}

double streaming_minus_cached(std::span<const double> took) {
  std::array<double, kTimedPerKind> streaming{}, cached{};
  std::size_t s = 0, c = 0;
  for (int k = kFirst; k <= kLast && static_cast<std::size_t>(k) < took.size(); ++k) {
    if (!timed(k)) continue;
    if (streams(k))
      streaming[s++] = took[static_cast<std::size_t>(k)];
    else
      cached[c++] = took[static_cast<std::size_t>(k)];
  }
  return median(streaming) - median(cached);
}

}  // namespace compas::kernels::calibration
