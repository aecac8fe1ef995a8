// The cache probe's knees (cache_probe.hpp): the caches this machine says it has, where a latency
// curve steps up, and which cache each step stands for.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compas/base/statistics.hpp"
#include "compas/probes/cache_probe.hpp"
#include "compas/threads/topology.hpp"

namespace compas::probes {

namespace {

double median_of(const std::vector<double>& z, std::size_t lo, std::size_t hi) {  // [lo, hi]
  return base::median(std::vector<double>(z.begin() + static_cast<std::ptrdiff_t>(lo),
                                          z.begin() + static_cast<std::ptrdiff_t>(hi) + 1));
}

}  // namespace

std::string CacheTarget::name() const {
  std::string s = "L";
  s += std::to_string(level);
  if (type == "data") s += "d";
  return s;
}

std::vector<CacheTarget> cache_targets(const threads::Topology& topo) {
  const int pus_per_core = std::max(1, topo.pus() / std::max(1, topo.cores()));
  std::vector<CacheTarget> out;
  for (const auto& c : topo.caches()) {
    if (c.type == "instruction" || c.size_bytes == 0) continue;
    CacheTarget t;
    t.level = c.level;
    t.type = c.type;
    t.size_bytes = c.size_bytes;
    t.cores_sharing = std::max(1, c.shared_by / pus_per_core);
    t.per_core_bytes = c.size_bytes / static_cast<std::uint64_t>(t.cores_sharing);
    out.push_back(t);
  }
  std::sort(out.begin(), out.end(),
            [](const CacheTarget& a, const CacheTarget& b) { return a.level < b.level; });
  return out;
}

std::vector<CacheKnee> detect_knees(const std::vector<std::uint64_t>& sizes,
                                    const std::vector<double>& ns, const KneeOptions& opt) {
  if (sizes.size() != ns.size())
    throw std::invalid_argument("detect_knees: sizes and latencies differ in length");
  for (std::size_t i = 0; i < ns.size(); ++i) {
    if (!(ns[i] > 0) || !std::isfinite(ns[i]))
      throw std::invalid_argument("detect_knees: latencies must be positive");
    if (i && sizes[i] <= sizes[i - 1])
      throw std::invalid_argument("detect_knees: sizes must be strictly increasing");
  }
  const std::size_t n = ns.size();
  std::vector<CacheKnee> knees;
  if (n < 3) return knees;
  // Median of three neighbours: one stray point can neither make nor hide a climb.
  std::vector<double> z(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = std::clamp<std::size_t>(i, 1, n - 2);
    z[i] = base::median({ns[c - 1], ns[c], ns[c + 1]});
  }
  constexpr std::size_t kLevelPoints = 3;    // a plateau's level: median of its last 3 points
  constexpr std::size_t kConfirmPoints = 5;  // a new plateau: median of its first 5 points
  std::size_t start = 0;                     // first point of the current plateau
  std::size_t i = 1;
  while (i < n) {
    const double base =
        median_of(z, std::max(start, i >= kLevelPoints ? i - kLevelPoints : 0), i - 1);
    if (z[i] <= base * opt.rise_tol) {
      ++i;
      continue;
    }
    // Left the plateau at i: follow the climb to where the next two points stop rising.
    std::size_t k = i;
    while (k + 1 < n) {
      const bool flat =
          z[k + 1] <= z[k] * opt.flat_step && (k + 2 >= n || z[k + 2] <= z[k] * opt.flat_step);
      if (flat) break;
      ++k;
    }
    const double after = median_of(z, k, std::min(n - 1, k + kConfirmPoints - 1));
    if (after >= base * opt.min_ratio) {
      CacheKnee knee;
      knee.plateau_end_bytes = sizes[i - 1];
      knee.plateau_start_bytes = sizes[k];
      knee.ns_before = base;
      knee.ns_after = after;
      // Halfway crossing, interpolated in log size and log latency, snapped to a measured size.
      const double half = std::sqrt(base * after);
      knee.size_bytes = sizes[k];
      for (std::size_t m = i - 1; m < k; ++m) {
        if (z[m + 1] < half) continue;
        const double f = z[m] >= half ? 0.0 : std::log(half / z[m]) / std::log(z[m + 1] / z[m]);
        knee.size_bytes = f > 0.5 + 1e-9 ? sizes[m + 1] : sizes[m];
        break;
      }
      knees.push_back(knee);
      start = k;
      i = k + 1;
    } else {
      ++i;  // noise or slow drift: the plateau goes on, its level follows
    }
  }
  return knees;
}

namespace {

double octaves(std::uint64_t knee, const CacheTarget& c) {
  return std::log2(static_cast<double>(knee) / static_cast<double>(c.per_core_bytes));
}

// A knee left unmatched: the closest cache no knee took, for the reader.
void name_nearest(CacheKnee& k, const std::vector<CacheTarget>& caches,
                  const std::vector<bool>& cache_done) {
  for (std::size_t c = 0; c < caches.size(); ++c) {
    if (cache_done[c] || caches[c].per_core_bytes == 0) continue;
    const double d = octaves(k.size_bytes, caches[c]);
    if (k.nearest.level == 0 || std::abs(d) < std::abs(k.octaves_from_nearest)) {
      k.nearest = caches[c];
      k.octaves_from_nearest = d;
    }
  }
}

}  // namespace

void match_knees(std::vector<CacheKnee>& knees, const std::vector<CacheTarget>& caches) {
  struct Pair {
    double distance;
    std::size_t knee, cache;
  };
  std::vector<Pair> pairs;
  for (std::size_t k = 0; k < knees.size(); ++k) {
    knees[k].cache = knees[k].nearest = CacheTarget{};
    knees[k].octaves_from_cache = knees[k].octaves_from_nearest = 0;
    for (std::size_t c = 0; c < caches.size(); ++c)
      if (caches[c].per_core_bytes > 0) {
        const double d = std::abs(octaves(knees[k].size_bytes, caches[c]));
        if (d <= kKneeMatchOctaves + 1e-9) pairs.push_back({d, k, c});
      }
  }
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const Pair& a, const Pair& b) { return a.distance < b.distance; });
  std::vector<bool> knee_done(knees.size()), cache_done(caches.size());
  for (const auto& p : pairs) {
    if (knee_done[p.knee] || cache_done[p.cache]) continue;
    knee_done[p.knee] = cache_done[p.cache] = true;
    auto& k = knees[p.knee];
    k.cache = caches[p.cache];
    k.octaves_from_cache = octaves(k.size_bytes, k.cache);
  }
  for (std::size_t k = 0; k < knees.size(); ++k)
    if (!knee_done[k]) name_nearest(knees[k], caches, cache_done);
}

}  // namespace compas::probes
