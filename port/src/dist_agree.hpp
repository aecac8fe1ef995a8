// What the 2-D and 3-D DistArray machinery (dist_halo.cpp, dist_halo3.cpp) share before anything
// else: the text of a range, and the processes' agreement on the array they make.
#pragma once

#include <string>

#include "compas/runtime/range.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas::detail {

// "[lo, hi)"
std::string range_text(Range r);

// Every process's `description` compared across the job: the first rank whose description differs
// from rank 0's (with both), or rank 0 when all agree. First one allreduce of 16 bytes (a 64-bit
// hash of the text and its complement; O(log P)); the texts themselves (an allgather over the
// bootstrap, O(P x their length)) only when the hashes differ.
struct Disagreement {
  int rank = 0;
  std::string first, other;
};
Disagreement compare_across(Runtime& rt, const std::string& description);

// Every process must have made the same array: `description` (the array's shape, element type
// and options in words) and the array's number (ObjectKind::dist_array: how many arrays this
// process made before) compared across the job (compare_across). Throws the same
// CollectiveError on every process (each sees every description), naming rank 0's and the first
// differing rank's arrays; else takes the number and returns it.
std::uint64_t agree_on_array(Runtime& rt, const std::string& description);

}  // namespace compas::detail
