// The process grid of a 3-D DistArray (dist_array3.hpp): the sides asked for, with 0 sides chosen.
#pragma once

#include <array>

namespace compas::detail {

// Sides g0 x g1 x g2 = `processes` from `asked` (a side 0 is chosen: the remaining processes'
// prime factors, largest first, each to the free side with the fewest processes so far, the
// slowest dimension first on a tie). std::invalid_argument naming the grid and the process count
// when a side is negative or the sides cannot multiply to it.
std::array<int, 3> choose_grid3(int processes, const std::array<int, 3>& asked);

}  // namespace compas::detail
