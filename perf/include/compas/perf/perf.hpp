// perf: the instrumentation the layers above use: a monotonic timer (timer.hpp), PAPI counters
// with a time-only fallback (counters.hpp), regions timed per thread and gathered per job
// (region.hpp), PAPI Software Defined Events (sde.hpp). Sits on threads/. The machine probes
// are probes/'s, the models analysis/'s, the JSON reports report/'s;
// docs/decisions/0014-counters-and-probes.md describes them.
#pragma once

#include "compas/perf/counters.hpp"
#include "compas/perf/region.hpp"
#include "compas/perf/sde.hpp"
#include "compas/perf/timer.hpp"
