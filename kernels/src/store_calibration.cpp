// The block schedule of --stores auto's calibration sweeps and its decision.
#include "store_calibration.hpp"

#include <array>

#include "compas/base/statistics.hpp"

namespace compas::kernels::calibration {

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
  return base::median({streaming.begin(), streaming.end()}) -
         base::median({cached.begin(), cached.end()});
}

}  // namespace compas::kernels::calibration
