// Where the calling thread stands among the threads of its process, as OpenMP sees them: what the
// porting layer's per-thread buffers (compas/port/batch_slots.hpp, update_batch.hpp) order by.
// The Runtime's OpenMP binding answers (runtime/src/openmp.cpp). Internal: programs do not call it.
#pragma once

#include <cstdint>

namespace compas::detail {

// Where the updates of thread `thread` (its batch number) go at flush among other threads': its
// number in its OpenMP team inside a parallel region, else after every team's threads, by `thread`.
std::uint64_t batch_order(int thread);
// The OpenMP team size at this point (omp_get_max_threads(), at least 1): whether a batch of a
// job of one process cuts its block into slices (a team adds at once).
int batch_threads();

}  // namespace compas::detail
