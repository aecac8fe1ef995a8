// Which process owns a global (row, column) of a DistArray, from every process's owned part
// (GatherPlan's inspector, port/src/irregular_plan.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "compas/port/irregular.hpp"
#include "compas/runtime/range.hpp"

namespace compas::detail {

// The parts of a block distribution tile the domain in a grid of row blocks x column blocks
// (1-D: one row block); a key's owner is found by two binary searches.
class Owners {
 public:
  explicit Owners(const std::vector<Range2>& owned);
  // The rank owning (i, j), inside the domain.
  std::size_t of(index i, index j) const;

 private:
  std::vector<index> row_lo_, col_lo_;  // the blocks' first rows and columns, ascending
  std::vector<std::size_t> rank_;       // rank_[row block * col blocks + col block]
};

}  // namespace compas::detail
