// What the radix sort's test files share: the host's topology, a team per thread count (made
// once), keys of a distribution, and one sort through a workspace the caller keeps.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "compas/kernels/sort.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/topology.hpp"

namespace sort_test {

namespace ct = compas::threads;
namespace rs = compas::kernels::sort;

inline const ct::Topology& host() {
  static const ct::Topology t = ct::Topology::host();
  return t;
}

inline ct::Team& team_of(int threads) {
  const ct::Topology& topo = host();
  static std::map<int, std::unique_ptr<ct::Team>> teams;
  auto& t = teams[threads];
  if (!t) {
    ct::TeamOptions o;
    o.threads = threads;
    o.allow_oversubscribe = threads > host().pus();
    t = std::make_unique<ct::Team>(topo, o);
  }
  return *t;
}

inline std::vector<std::uint32_t> keys_of(rs::Dist d, std::size_t n, std::uint64_t seed = 7) {
  std::vector<std::uint32_t> k(n);
  rs::generate(d, n, 0, k, seed);
  return k;
}

// One sort of k on the team through a workspace the caller keeps (rs::sort(Team&) makes a new
// one each time); returns the span that holds the result (k's buffer or tmp's).
inline std::span<std::uint32_t> sort_on(ct::Team& team, std::vector<std::uint32_t>& k,
                                        std::vector<std::uint32_t>& tmp, rs::Workspace& ws,
                                        const rs::Options& o, rs::Stats* st = nullptr) {
  std::span<std::uint32_t> out;
  team.run([&](ct::ThreadCtx& t) {
    auto r = rs::sort(t, std::span<std::uint32_t>(k), std::span<std::uint32_t>(tmp), ws, o, st);
    if (t.is_leader()) out = r;
  });
  return out;
}

}  // namespace sort_test
