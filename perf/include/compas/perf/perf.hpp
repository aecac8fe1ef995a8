// perf: PAPI counters and regions per thread, the machine probes (memory bandwidth vs threads,
// loaded latency, cache curve), the latency of barriers and of one-sided operations between
// processes, scaling models. Sits on threads/ and comm/ (the JSON reports are report/'s).
// The layer's headers: counters.hpp, region.hpp, timer.hpp, membw.hpp, loaded_latency.hpp,
// cache_probe.hpp, barrier_latency.hpp, pingpong.hpp, scaling.hpp, model.hpp, extrap.hpp,
// sde.hpp; docs/decisions/0014-counters-and-probes.md describes them.
#pragma once
