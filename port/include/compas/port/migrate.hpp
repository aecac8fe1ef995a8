// compas::migrate: items that belong elsewhere move to the process they belong to (particles
// leaving a process's cells in a particle-in-cell code, elements changing owner), with the counts
// exchanged for the caller: what an MPI code does with MPI_Alltoall of counts, displacements and
// MPI_Alltoallv.
//
//   std::vector<Particle> mine = ...;
//   compas::migrate(rt, mine, [&](const Particle& p) { return owner_of(p.x, p.y); });
//   // mine: the particles this process kept, in their order, then those it received, by rank
//   compas::migrate(row, mine, to_column);  // within a Group (group.hpp): ranks are group ranks
//
// `destination(item)` names the process (0..P-1: job ranks on the Runtime, group ranks
// 0..processes()-1 on a Group, whose members alone call it) each item belongs to. Afterwards
// `items` holds the items this process kept (their destination was this process), in their former
// order, followed by those the others sent here, by sending rank and, within one, in that process's
// order: the same result in every run. One alltoallv moves everything (each item once).
//
// Funneled and collective like the collectives of collectives.hpp (from the thread that made the
// Runtime, outside run(), every process the same call). A destination outside 0..P-1 on any
// process makes every process throw the same CollectiveError naming that process, the item's
// position and the destination, before anything moves; `items` is then left as it was.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "compas/runtime/collectives.hpp"

namespace compas {

namespace detail {

// The items' destinations, and "" or what is wrong with the first one outside 0..P-1 (named as a
// `rank_word`: "process", "group rank").
template <class T, class F>
std::string destinations(const std::vector<T>& items, F& destination, int processes,
                         std::vector<int>& to, const char* rank_word) {
  to.resize(items.size());
  for (std::size_t k = 0; k < items.size(); ++k) {
    to[k] = static_cast<int>(destination(items[k]));
    if (to[k] < 0 || to[k] >= processes)
      return "item " + std::to_string(k) + " is sent to " + rank_word + " " +
             std::to_string(to[k]) + ", outside 0.." + std::to_string(processes - 1);
  }
  return "";
}

}  // namespace detail

template <class T, class F>
void migrate(Processes ps, std::vector<T>& items, F destination) {
  static_assert(std::is_trivially_copyable_v<T>, "migrate needs a trivially copyable T");
  ps.runtime().check_funneled("compas::migrate", detail::kFunneled);
  const int p = ps.processes(), me = ps.process();
  std::vector<int> to;
  const std::string problem =
      detail::destinations(items, destination, p, to, ps.whole_job() ? "process" : "group rank");
  detail::agree(ps, {detail::CollectiveCall::migrate, sizeof(T), items.size(), -1, false, problem});
  // Leaving items grouped by destination (a counting sort, stable); staying ones keep their place.
  std::vector<std::size_t> counts(static_cast<std::size_t>(p), 0);
  for (int d : to)
    if (d != me) ++counts[static_cast<std::size_t>(d)];
  std::vector<std::size_t> at = detail::offsets_of(counts);
  std::size_t out = 0;
  for (std::size_t c : counts) out += c;
  std::vector<T> leaving(out);
  std::size_t kept = 0;
  for (std::size_t k = 0; k < items.size(); ++k) {
    if (to[k] == me)
      items[kept++] = items[k];
    else
      leaving[at[static_cast<std::size_t>(to[k])]++] = items[k];
  }
  items.resize(kept);
  const Gathered<T> arrived = alltoallv(ps, std::span<const T>(leaving), counts);
  items.insert(items.end(), arrived.data.begin(), arrived.data.end());
}

}  // namespace compas
