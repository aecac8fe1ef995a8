// The collectives of the C API over a set of processes (the job or a group): allreduce,
// broadcast and exclusive scan on `count` elements of a compas_type, checked as the C++ calls.
#pragma once

#include <cstdint>

#include "compas/runtime/collectives.hpp"

namespace compas::capi {

void allreduce(Processes ps, const void* in, void* out, std::int64_t count, int type, int op);
void broadcast(Processes ps, void* data, std::int64_t count, int type, int root);
// `scan` runs the scan over the processes on n > 0 elements (ps.size() > 1): the job's or a
// group's ProcessCollectives.
void exscan(Processes ps, const void* in, void* out, std::int64_t count, int type, int op);

}  // namespace compas::capi
