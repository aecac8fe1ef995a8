// comm: how the P processes of a job find each other and, later, move data between them by
// one-sided remote-memory operations over UCX. Thread-safe, and knows nothing of teams.
// What exists now:
//  - bootstrap.hpp: Bootstrap (rank, size, allgather, barrier) of kind single (P = 1), tcp (the
//    rendezvous at rank 0 that compas-run sets up through COMPAS_* variables) or mpi (under
//    mpirun / srun, when built with COMPAS_WITH_MPI); Bootstrap::from_environment() picks one.
//  - wire.hpp: the frames of the tcp bootstrap protocol and their bounded parser.
// Planned (docs/ARCHITECTURE.md): the UCX context, Window<T>, RMA and node collectives.
#pragma once

#include "compas/comm/bootstrap.hpp"
#include "compas/comm/wire.hpp"
