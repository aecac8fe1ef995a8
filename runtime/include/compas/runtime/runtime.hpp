// runtime: compas::Runtime, the one object a user program creates. It combines a Team (threads)
// with Comm (processes) and perf state, and offers hybrid collectives (team step, node step by
// one thread, team step) and block partitioning over processes then threads.
// This layer is being built; see docs/ARCHITECTURE.md for its planned contents.
#pragma once
