// The collectives of the C API over a set of processes (the job or a group): allreduce,
// broadcast and exclusive scan on `count` elements of a compas_type, checked as the C++ calls.
// Each agrees with the other processes on the call and its count (0 included) before it writes
// anything into the caller's buffers: when they differ, every process gets the same
// CollectiveError and the buffers are left as they were.
#pragma once

#include <cstdint>

#include "compas/runtime/collectives.hpp"

namespace compas::capi {

void allreduce(Processes ps, const void* in, void* out, std::int64_t count, int type, int op);
void broadcast(Processes ps, void* data, std::int64_t count, int type, int root);
// The identity of op on process 0 (rank 0 of a group).
void exscan(Processes ps, const void* in, void* out, std::int64_t count, int type, int op);

}  // namespace compas::capi
