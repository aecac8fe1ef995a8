// The knee of a loaded-latency curve: where latency has risen to a multiple of idle, counted only
// when the rise stands out of the measurements' own spread. See compas/probes/loaded_latency.hpp.
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "compas/probes/loaded_latency.hpp"

namespace compas::probes {

namespace {

void check_point(const LatencyPoint& p, const std::string& what) {
  const bool finite = std::isfinite(p.latency_ns) && std::isfinite(p.latency_min_ns) &&
                      std::isfinite(p.latency_max_ns) && std::isfinite(p.bandwidth_gbs);
  if (!finite || !(p.latency_min_ns > 0) || p.latency_min_ns > p.latency_ns ||
      p.latency_ns > p.latency_max_ns)
    throw std::invalid_argument("latency knee: " + what +
                                ": latencies must be finite with 0 < min <= median <= max");
  if (p.bandwidth_gbs < 0)
    throw std::invalid_argument("latency knee: " + what + ": negative bandwidth");
}

double spread(const LatencyPoint& p) {
  return p.latency_max_ns - p.latency_min_ns;
}

// Above the threshold and beyond the noise of both this point and idle: its fastest repeat is
// slower than idle's slowest, and the rise is larger than the two spreads together (a point whose
// repeats scatter widely may reach the threshold by chance).
bool clearly_above(const LatencyPoint& p, const LatencyPoint& idle, double threshold) {
  return p.latency_ns >= threshold && p.latency_min_ns > idle.latency_max_ns &&
         p.latency_ns - idle.latency_ns > spread(p) + spread(idle);
}

// Where the straight line from `below` to `above` crosses `threshold`; `above`'s bandwidth when
// `below` is not below it.
double crossing(const LatencyPoint& below, const LatencyPoint& above, double threshold) {
  if (below.latency_ns >= threshold || above.latency_ns <= below.latency_ns)
    return above.bandwidth_gbs;
  const double f = (threshold - below.latency_ns) / (above.latency_ns - below.latency_ns);
  return below.bandwidth_gbs + f * (above.bandwidth_gbs - below.bandwidth_gbs);
}

}  // namespace

LatencyKnee find_latency_knee(const LatencyPoint& idle, const std::vector<LatencyPoint>& loaded,
                              double factor) {
  if (!(factor > 1) || !std::isfinite(factor))
    throw std::invalid_argument("latency knee: factor " + std::to_string(factor) +
                                " must be above 1");
  check_point(idle, "idle point");
  for (std::size_t i = 0; i < loaded.size(); ++i)
    check_point(loaded[i], "point " + std::to_string(i));

  LatencyKnee knee;
  knee.threshold_ns = factor * idle.latency_ns;
  for (const auto& p : loaded) {
    if (p.bandwidth_gbs > knee.max_bandwidth_gbs || knee.latency_at_max_ns == 0) {
      knee.max_bandwidth_gbs = p.bandwidth_gbs;
      knee.latency_at_max_ns = p.latency_ns;
    }
    if (p.latency_ns > knee.max_latency_ns) knee.max_latency_ns = p.latency_ns;
  }
  for (std::size_t i = 0; i < loaded.size(); ++i) {
    const LatencyPoint& p = loaded[i];
    if (p.latency_ns < knee.threshold_ns) continue;
    const bool next_holds = i + 1 == loaded.size() || loaded[i + 1].latency_ns >= knee.threshold_ns;
    if (!clearly_above(p, idle, knee.threshold_ns) || !next_holds) {
      knee.within_noise = true;
      continue;
    }
    knee.reached = true;
    knee.within_noise = false;
    knee.bandwidth_gbs = crossing(i == 0 ? idle : loaded[i - 1], p, knee.threshold_ns);
    break;
  }
  return knee;
}

}  // namespace compas::probes
