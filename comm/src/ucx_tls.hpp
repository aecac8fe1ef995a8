// What a UCX_TLS setting allows UCX to use between processes of one host.
#pragma once

#include <string_view>

namespace compas::comm::detail {

// True when `ucx_tls` (UCX_TLS's value; empty or null when unset) lets UCX use a shared-memory
// transport (sm, shm, mm, posix, sysv, xpmem, cma, knem, all) between processes of a host. A list
// starting with '^' names transports to leave out: shared memory stays allowed unless the
// whole family (sm or shm) is left out.
bool shared_memory_allowed(const char* ucx_tls);

}  // namespace compas::comm::detail
