// Activity: what the threads layer itself costs, for the perf layer to export (PAPI SDE) and
// report: barrier episodes passed and time spent waiting in them. Barrier counts are kept per
// thread in ThreadCtx and folded in at the end of each Team::run; wait time is measured only
// while accounting is on (a profile is active), and only on the slow path of a wait, so a
// barrier costs nothing extra when nobody is looking.
#pragma once

#include <cstdint>

namespace compas::threads {

struct ActivityTotals {
  std::uint64_t barriers = 0;  // barrier episodes passed, summed over threads
  // Both only while accounting is on, so that an unprofiled wait costs nothing extra:
  std::uint64_t waits = 0;    // waits that did not find their value at once
  std::uint64_t wait_ns = 0;  // time in those waits
};

// Process-wide totals since start; safe to call from any thread at any time.
ActivityTotals activity_totals();

// Turns counting and timing of waits on or off (off by default; on while a perf Profile lives).
void set_wait_accounting(bool on);
bool wait_accounting();

namespace detail {
void add_barriers(std::uint64_t n);
}

}  // namespace compas::threads
