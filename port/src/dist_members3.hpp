// Which processes a 3-D DistArray on a Group (dist_array3.hpp) lives on, agreed by every process
// of the job at the array's creation (which is job-wide: its window is).
#pragma once

#include <string>
#include <vector>

#include "compas/runtime/runtime.hpp"

namespace compas::detail {

// `mine`: this process's group (job ranks in group order), empty when it is in none. Every
// process's list is gathered over the bootstrap (one allgather); the members are the first
// non-empty list; every member must pass exactly it and every other process an empty list.
// Otherwise the same CollectiveError on every process naming two processes and their lists (or,
// when every list is empty, saying so). Returns the members.
std::vector<int> agree_on_members(Runtime& rt, const std::vector<int>& mine);

// "{0, 2, 3}"
std::string members_text(const std::vector<int>& members);

}  // namespace compas::detail
