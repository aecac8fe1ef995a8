// What a 3-D DistArray (dist_array3.hpp) checks of a partition given in DistOptions3::partition,
// and the partition it resolves to when none is given.
#pragma once

#include <array>
#include <string>

#include "compas/port/partition3.hpp"

namespace compas::detail {

// What is wrong with `p` as the partition of `domain` over `processes` processes, `asked` being
// DistOptions3::grid (a side other than 0 must match the partition's), in words naming the
// dimension and the value; "" when nothing is.
std::string partition_problem(const Partition3& p, const Range3& domain, int processes,
                              const std::array<int, 3>& asked);

// The smallest part of dimension d.
index smallest_part(const Partition3& p, int d);

// The largest part of dimension d.
index largest_part(const Partition3& p, int d);

}  // namespace compas::detail
