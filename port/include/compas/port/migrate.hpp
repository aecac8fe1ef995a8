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
// `destination` is called once per item; from 4096 items on, from the threads of the calling
// thread's OpenMP team at once (when compiled with OpenMP): it must be safe to call concurrently,
// as an owner lookup such as q.owner(p.x, p.y) is. An exception it throws (the first item's) is
// a CollectiveError on every process naming the item and the exception's what(), as a
// destination outside 0..P-1 is.
//
// Funneled and collective like the collectives of collectives.hpp (from the thread that made the
// Runtime, outside run(), every process the same call). A destination outside 0..P-1 on any
// process makes every process throw the same CollectiveError naming that process, the item's
// position and the destination, before anything moves; `items` is then left as it was.
#pragma once

#include <cstddef>
#include <exception>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "compas/runtime/collectives.hpp"

namespace compas {

namespace detail {

// "'<what()>'" of a std::exception, or saying it is not one.
inline std::string what(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return std::string("'") + x.what() + "'";
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

// The items' destinations, and "" or what is wrong with the first one outside 0..P-1 (named as a
// `rank_word`: "process", "group rank"). From 4096 items on, on the calling thread's OpenMP team
// (static schedule); an exception from `destination` is what is wrong (the first item's).
template <class T, class F>
std::string destinations(const std::vector<T>& items, F& destination, int processes,
                         std::vector<int>& to, const char* rank_word) {
  const std::size_t n = items.size();
  to.resize(n);
  std::size_t bad = n, failed = n;  // the first item sent outside, the first that threw
  std::exception_ptr error;
  const auto one = [&](std::size_t k) {
    try {
      to[k] = static_cast<int>(destination(items[k]));
      return to[k] < 0 || to[k] >= processes;
    } catch (...) {
#ifdef _OPENMP
#pragma omp critical(compas_migrate_destination)
#endif
      if (k < failed) failed = k, error = std::current_exception();
      return false;
    }
  };
  if (n < 4096) {
    for (std::size_t k = 0; k < n && bad == n && failed == n; ++k)
      if (one(k)) bad = k;
  } else {
#ifdef _OPENMP
#pragma omp parallel for schedule(static) reduction(min : bad)
#endif
    for (std::size_t k = 0; k < n; ++k)
      if (one(k) && k < bad) bad = k;
  }
  if (failed < bad) return "item " + std::to_string(failed) + ": destination threw " + what(error);
  if (bad == n) return "";
  return "item " + std::to_string(bad) + " is sent to " + rank_word + " " +
         std::to_string(to[bad]) + ", outside 0.." + std::to_string(processes - 1);
}

// Items whose destination is `me` moved to the front, in order; the others into `leaving`,
// grouped by destination (a stable counting sort); items keeps the kept ones. The kept prefix
// (every item, where none leaves) is not copied.
template <class T>
std::vector<T> sort_out(std::vector<T>& items, const std::vector<int>& to, int processes, int me,
                        std::vector<std::size_t>& counts) {
  counts.assign(static_cast<std::size_t>(processes), 0);
  for (int d : to)
    if (d != me) ++counts[static_cast<std::size_t>(d)];
  std::vector<std::size_t> at = offsets_of(counts);
  std::size_t out = 0;
  for (std::size_t c : counts) out += c;
  std::vector<T> leaving(out);
  std::size_t kept = 0;
  while (kept < items.size() && to[kept] == me) ++kept;
  for (std::size_t k = kept; k < items.size(); ++k) {
    if (to[k] == me)
      items[kept++] = items[k];
    else
      leaving[at[static_cast<std::size_t>(to[k])]++] = items[k];
  }
  items.resize(kept);
  return leaving;
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
  std::vector<std::size_t> counts;
  const std::vector<T> leaving = detail::sort_out(items, to, p, me, counts);
  const Gathered<T> arrived = alltoallv(ps, std::span<const T>(leaving), counts);
  items.insert(items.end(), arrived.data.begin(), arrived.data.end());
}

}  // namespace compas
