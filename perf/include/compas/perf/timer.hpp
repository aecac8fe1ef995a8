// Timer: wall time in ns and the CPU's time-stamp counter, calibrated once against the monotonic
// clock, so probes can report cycles per operation where the TSC runs at a constant rate.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>

#include "compas/base/cpu_load.hpp"

namespace compas::perf {

inline std::uint64_t now_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

inline std::uint64_t read_tsc() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  return now_ns();
#endif
}

struct TscInfo {
  double ghz = 0;          // TSC ticks per ns
  bool invariant = false;  // constant and non-stop: usable as a clock across sleeps and cores
};

// Calibrated on first use (about 20 ms), then cached.
const TscInfo& tsc();

// CPU time of the whole process (all its threads), seconds: for wallclock-vs-CPU comparisons.
using base::process_cpu_seconds;

}  // namespace compas::perf
