// compas::split (group.hpp): MPI_Comm_split's grouping by colour, ordered by key then job rank.
#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "compas/runtime/collectives.hpp"
#include "compas/runtime/group.hpp"
#include "group_impl.hpp"

namespace compas {

namespace {

struct ColourKey {
  int colour, key;
};

// The job ranks of `colour` in the job's (colour, key) pairs, by key then rank; empty for a
// colour < 0.
std::vector<int> members_of(const std::vector<ColourKey>& all, int colour) {
  if (colour < 0) return {};
  std::vector<int> ranks;
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r].colour == colour) ranks.push_back(static_cast<int>(r));
  std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
    return all[static_cast<std::size_t>(a)].key < all[static_cast<std::size_t>(b)].key;
  });
  return ranks;
}

}  // namespace

Group split(Processes ps, int colour, int key) {
  detail::require_whole_job(ps, "compas::split", detail::kJobWideGroup);
  Runtime& rt = ps.runtime();
  rt.check_funneled("compas::split", detail::kFunneled);
  const std::vector<ColourKey> all = allgather(rt, ColourKey{colour, key});
  return detail::make_group(rt, members_of(all, colour), "compas::split");
}

}  // namespace compas
