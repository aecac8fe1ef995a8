// The Comm's collective calls (window creation, barriers, process collectives) belong to the thread
// that made the Comm: every process calls them the same number of times, in the same order, and
// only one thread of a process can keep that count. The Runtime makes its Comm on its own
// thread, which is thread 0 inside Runtime::run.
#pragma once

#include <string>

#include "internals.hpp"
#include "ucx_impl.hpp"

namespace compas::comm::detail {

// Throws std::logic_error "<call>: called from a thread other than the one that made the Comm
// ..." unless the calling thread made the Comm.
void require_owner_thread(const CommImpl& m, const char* call);

}  // namespace compas::comm::detail
