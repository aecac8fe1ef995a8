// comm: how the P processes of a job find each other and move data between them by one-sided
// remote-memory operations over UCX. Thread-safe, and knows nothing of teams.
//  - bootstrap.hpp: Bootstrap (rank, size, allgather, barrier) of kind single (P = 1), tcp (the
//    rendezvous at rank 0 that compas-run sets up through COMPAS_* variables) or mpi (under
//    mpirun / srun, when built with COMPAS_WITH_MPI); Bootstrap::from_environment() picks one.
//  - ucx.hpp: Comm, one process's UCX context, worker and lazily created endpoints; progress,
//    flush, fence, the process barrier; Request for non-blocking operations.
//  - window.hpp: Window<T>, symmetric registered memory with put, get, put_signal, atomics and
//    signal waits, by direct load/store to same-host peers where possible.
//  - collectives.hpp: ProcessCollectives (broadcast, allreduce, allgather, alltoallv among the
//    processes, over chunked channels through a scratch window).
//  - versions.hpp: the versions of the communication libraries this build runs on (reports).
#pragma once

#include "compas/comm/bootstrap.hpp"
#include "compas/comm/collectives.hpp"
#include "compas/comm/ucx.hpp"
#include "compas/comm/versions.hpp"
#include "compas/comm/window.hpp"
