// comm: how the P processes of a job find each other (Bootstrap: single, tcp, mpi) and move
// data between them by one-sided remote-memory operations over UCX (Window, put/get/put_signal,
// atomics), plus node collectives among processes. Thread-safe, and knows nothing of teams.
// This layer is being built; see docs/ARCHITECTURE.md for its planned contents.
#pragma once
