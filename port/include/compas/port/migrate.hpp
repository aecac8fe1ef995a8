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
// `destination` is called once per item; from 4096 items on, when the calling thread's OpenMP
// team has two threads or more (compiled with OpenMP), from its threads at once: it must be safe
// to call concurrently, as an owner lookup such as q.owner(p.x, p.y) is. On one thread, each
// item's destination is found and the item put in place in one pass (put back when the call is
// refused). Time O(items + P); memory O(leaving + arriving + P) (and the destinations, on a team).
// An exception it throws (the first item's) is a CollectiveError on every process naming the item
// and the exception's what(), as a destination outside 0..P-1 is.
//
// Funneled and collective like the collectives of collectives.hpp (from the thread that made the
// Runtime, outside run(), every process the same call). A destination outside 0..P-1 on any
// process makes every process throw the same CollectiveError naming that process, the item's
// position and the destination, before anything moves; `items` is then left as it was.
#pragma once

#ifdef _OPENMP
#include <omp.h>
#endif

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

// What is wrong with item k: its destination threw, or is `d`, outside 0..processes-1 (named as a
// `rank_word`).
inline std::string item_threw(std::size_t k, const std::exception_ptr& e) {
  return "item " + std::to_string(k) + ": destination threw " + what(e);
}
inline std::string item_outside(std::size_t k, int d, const char* rank_word, int processes) {
  return "item " + std::to_string(k) + " is sent to " + rank_word + " " + std::to_string(d) +
         ", outside 0.." + std::to_string(processes - 1);
}

// The items' destinations, and "" or what is wrong with the first one outside 0..P-1 (named as a
// `rank_word`: "process", "group rank"), found on the calling thread's OpenMP team (static
// schedule; migrate_on_team); an exception from `destination` is what is wrong (the first item's).
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
#ifdef _OPENMP
#pragma omp parallel for schedule(static) reduction(min : bad)
#endif
  for (std::size_t k = 0; k < n; ++k)
    if (one(k) && k < bad) bad = k;
  if (failed < bad) return item_threw(failed, error);
  return bad == n ? "" : item_outside(bad, to[bad], rank_word, processes);
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

// The one-thread path: each item's destination found and the item put in place in one pass, as a
// hand-written particle loop does: kept items moved up in order, leaving ones set aside with their
// positions and destinations. undo() puts every item looked at back where it was.
template <class T>
struct SortedOut {
  std::vector<T> gone;               // the leaving items, in order
  std::vector<std::size_t> gone_at;  // their positions
  std::vector<int> gone_to;          // their destinations
  std::size_t kept = 0, seen = 0;    // items kept (now at the front), items looked at
};

template <class T, class F>
std::string sort_out_in_one_pass(std::vector<T>& items, F& destination, int processes, int me,
                                 SortedOut<T>& s, const char* rank_word) {
  for (std::size_t k = 0; k < items.size(); ++k, s.seen = k) {
    int d = 0;
    try {
      d = static_cast<int>(destination(items[k]));
    } catch (...) {
      return item_threw(k, std::current_exception());
    }
    if (d < 0 || d >= processes) return item_outside(k, d, rank_word, processes);
    if (d == me) {
      if (s.kept != k) items[s.kept] = items[k];
      ++s.kept;
    } else {
      s.gone.push_back(items[k]);
      s.gone_at.push_back(k);
      s.gone_to.push_back(d);
    }
  }
  return "";
}

// Down from the last item looked at: a position that lost its item gets it back, the others the
// last kept item not yet back in place (it lies at or before that position).
template <class T>
void undo(std::vector<T>& items, const SortedOut<T>& s) {
  std::size_t kept = s.kept, g = s.gone.size();
  for (std::size_t k = s.seen; k-- > 0;)
    items[k] = g > 0 && s.gone_at[g - 1] == k ? s.gone[--g] : items[--kept];
}

// The leaving items grouped by destination (stable), their counts in `counts`.
template <class T>
std::vector<T> group_leaving(const SortedOut<T>& s, int processes,
                             std::vector<std::size_t>& counts) {
  counts.assign(static_cast<std::size_t>(processes), 0);
  for (int d : s.gone_to) ++counts[static_cast<std::size_t>(d)];
  std::vector<std::size_t> at = offsets_of(counts);
  std::vector<T> leaving(s.gone.size());
  for (std::size_t k = 0; k < s.gone.size(); ++k)
    leaving[at[static_cast<std::size_t>(s.gone_to[k])]++] = s.gone[k];
  return leaving;
}

// Whether the destinations are found on the calling thread's OpenMP team (4096 items or more and a
// team of more than one thread).
inline bool migrate_on_team(std::size_t n) {
#ifdef _OPENMP
  return n >= 4096 && omp_get_max_threads() > 1;
#else
  (void)n;
  return false;
#endif
}
}  // namespace detail

template <class T, class F>
void migrate(Processes ps, std::vector<T>& items, F destination) {
  static_assert(std::is_trivially_copyable_v<T>, "migrate needs a trivially copyable T");
  ps.runtime().check_funneled("compas::migrate", detail::kFunneled);
  const int p = ps.processes(), me = ps.process();
  const char* word = ps.whole_job() ? "process" : "group rank";
  const std::size_t n = items.size();
  std::vector<std::size_t> counts;
  std::vector<T> leaving;
  if (detail::migrate_on_team(n)) {
    std::vector<int> to;
    const std::string problem = detail::destinations(items, destination, p, to, word);
    detail::agree(ps, {detail::CollectiveCall::migrate, sizeof(T), n, -1, false, problem});
    leaving = detail::sort_out(items, to, p, me, counts);
  } else {
    detail::SortedOut<T> s;
    const std::string problem = detail::sort_out_in_one_pass(items, destination, p, me, s, word);
    try {
      detail::agree(ps, {detail::CollectiveCall::migrate, sizeof(T), n, -1, false, problem});
    } catch (...) {
      detail::undo(items, s);  // every process refused: items as they were
      throw;
    }
    leaving = detail::group_leaving(s, p, counts);
    items.resize(s.kept);
  }
  const Gathered<T> arrived = alltoallv(ps, std::span<const T>(leaving), counts);
  items.insert(items.end(), arrived.data.begin(), arrived.data.end());
}

}  // namespace compas
