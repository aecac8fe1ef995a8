// perf: PAPI counters and regions per thread, the machine probes (memory bandwidth vs threads,
// cache curve), and the report writers. Sits on threads/.
// This layer is being built; see docs/ARCHITECTURE.md for its planned contents.
#pragma once
