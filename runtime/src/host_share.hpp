// Launcher-aware placement: processes of one host that the launcher gave the same cpus.
#pragma once

#include <string>

#include "compas/comm/ucx.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/topology.hpp"

namespace compas::detail {

struct HostShare {
  threads::PuSet within;  // the PUs this process uses
  std::string notice;     // one line for stderr ("" = nothing to say), from one rank per host
};

// Where the launcher bound none of this host's processes (mpirun --bind-to none, srun
// --cpu-bind=none: every one has the same mask), each takes its own block of the cores, as
// compas-run splits them (threads::process_slice, in rank order). Masks that overlap without
// being equal are left as they are, with a warning. `within` is returned unchanged when the
// process's cpus were given explicitly (COMPAS_CPUS) or it is alone on its host.
HostShare share_host_cpus(const threads::Topology& topo, const comm::Comm& comm,
                          threads::PuSet within, bool explicit_cpus);

// compas-run's rule under every launcher: where the threads of a host's processes
// (Comm::threads_of) outnumber the cpus the launcher gave them (the Comm finds it, or the launcher
// said so in COMPAS_OVERSUBSCRIBED), or the host split had to share cores (`shared_slices`), the
// job runs oversubscribed. The line compas-run prints then (threads::oversubscription_note, with
// the cores of the processes' masks), for the host's first rank to print; "" for the others and
// where the launcher said it already.
std::string host_oversubscription_note(const comm::Comm& comm, bool shared_slices);

}  // namespace compas::detail
