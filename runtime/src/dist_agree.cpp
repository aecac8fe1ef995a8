// range_text and agree_on_array (dist_agree.hpp).
#include "dist_agree.hpp"

#include <vector>

namespace compas::detail {

std::string range_text(Range r) {
  std::string t = "[";  // built by += : GCC 12's -Wrestrict misfires on chains of + here
  t += std::to_string(r.lo);
  t += ", ";
  t += std::to_string(r.hi);
  t += ")";
  return t;
}

void agree_on_array(Runtime& rt, const std::string& description) {
  if (rt.processes() == 1) return;
  const auto all = rt.bootstrap().allgather(description);
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      throw CollectiveError("DistArray: the processes made different arrays: rank 0 a " + all[0] +
                            ", rank " + std::to_string(r) + " a " + all[r] +
                            " (every process creates the same arrays in the same order)");
}

}  // namespace compas::detail
