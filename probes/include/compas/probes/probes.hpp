// probes: the machine probes behind the CLI's measuring commands: memory bandwidth (membw.hpp),
// the cache curve (cache_probe.hpp), loaded latency (loaded_latency.hpp), one-sided pingpong
// between two processes (pingpong.hpp) and barrier latency (barrier_latency.hpp). Sits on base,
// threads, comm and perf; docs/decisions/0014-counters-and-probes.md.
#pragma once

#include "compas/probes/barrier_latency.hpp"
#include "compas/probes/cache_probe.hpp"
#include "compas/probes/loaded_latency.hpp"
#include "compas/probes/membw.hpp"
#include "compas/probes/pingpong.hpp"
