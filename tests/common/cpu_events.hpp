// Where PAPI counts no CPU event at all (its perf_event component disabled because libpfm4 does
// not know the CPU, or PAPI not initialising), tests of what the software events read skip with
// PAPI's own reason; everything a time-only run still does is tested elsewhere.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "compas/perf/counters.hpp"

#define SKIP_WITHOUT_CPU_EVENTS()                                                     \
  if (const std::string why_ = compas::perf::cpu_events_unavailable(); !why_.empty()) \
  GTEST_SKIP() << "PAPI counts no CPU event here: " << why_
