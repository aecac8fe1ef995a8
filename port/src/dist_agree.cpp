// range_text, compare_across and agree_on_array (dist_agree.hpp).
#include "dist_agree.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "compas/base/hash.hpp"
#include "compas/runtime/collectives.hpp"

namespace compas::detail {

std::string range_text(Range r) {
  std::string t = "[";  // built by += : GCC 12's -Wrestrict misfires on chains of + here
  t += std::to_string(r.lo);
  t += ", ";
  t += std::to_string(r.hi);
  t += ")";
  return t;
}

namespace {

// Whether every process's text has the same hash: one allreduce (max) of the hash and its
// complement gives the largest and the smallest at once.
bool same_hash_everywhere(Runtime& rt, const std::string& text) {
  const std::uint64_t h = base::fnv1a(text);
  std::array<std::uint64_t, 2> v{h, ~h};
  rt.collectives().allreduce(std::span<std::uint64_t>(v), comm::Op::max);
  return v[0] == ~v[1];
}

}  // namespace

Disagreement compare_across(Runtime& rt, const std::string& description) {
  if (rt.processes() == 1 || same_hash_everywhere(rt, description)) return {};
  const auto all = rt.bootstrap().allgather(description);
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0]) return {static_cast<int>(r), all[0], all[r]};
  return {};
}

std::uint64_t agree_on_array(Runtime& rt, const std::string& description) {
  const std::uint64_t number = object_number(ObjectKind::dist_array, false);
  const Disagreement d =
      compare_across(rt, description + " (DistArray #" + std::to_string(number) + ")");
  if (d.rank != 0)
    throw CollectiveError("DistArray: the processes made different arrays: rank 0 a " + d.first +
                          ", rank " + std::to_string(d.rank) + " a " + d.other +
                          " (every process creates the same arrays in the same order)");
  return object_number(ObjectKind::dist_array, true);
}

}  // namespace compas::detail
