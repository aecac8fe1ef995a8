// Barrier latency, the measurement of `compas barrier`: nanoseconds per barrier episode of a
// thread team (any algorithm x wait policy, or any other team's barrier, such as OpenMP's, through
// time_barrier) and of the process barriers across the processes of a job (COMPaS Tables 3-5).
//
// Every timing runs 64 untimed barriers, times 64 more to choose how many barriers one repeat
// runs (enough to last about target_ms), then times `repeats` repeats, each after one barrier
// that lines the threads up.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "compas/comm/bootstrap.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/topology.hpp"

namespace compas::probes {

struct BarrierTiming {
  std::vector<double> ns;  // nanoseconds per barrier, one per repeat
  long iterations = 0;     // barriers per repeat
};

// Untimed, then timed warm-up barriers of every timing.
inline constexpr int kBarrierWarmup = 64;

// How many barriers one timed repeat runs: enough to last ~target_ms, at least 16, at most 2e6.
inline long barrier_iterations(double ns_per_barrier, double target_ms) {
  const double want = target_ms * 1e6 / std::max(ns_per_barrier, 1.0);
  return static_cast<long>(std::clamp(want, 16.0, 2.0e6));
}

// The timing, run by every thread of a team at once. `barrier()` is the barrier measured;
// `agree(mine)` must return the same value on every thread (one thread's `mine`, for the number
// of barriers per repeat). The thread with `leader` set writes `out` (whose `ns` holds `repeats`
// slots).
template <class Barrier, class Agree>
void time_barrier(bool leader, BarrierTiming& out, int repeats, double target_ms, Barrier barrier,
                  Agree agree) {
  using Clock = std::chrono::steady_clock;
  auto ns_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  };
  for (int i = 0; i < kBarrierWarmup; ++i) barrier();
  auto t0 = Clock::now();
  for (int i = 0; i < kBarrierWarmup; ++i) barrier();
  const long iters = agree(barrier_iterations(ns_since(t0) / kBarrierWarmup, target_ms));
  for (int r = 0; r < repeats; ++r) {
    barrier();
    t0 = Clock::now();
    for (long i = 0; i < iters; ++i) barrier();
    if (leader) out.ns[static_cast<std::size_t>(r)] = ns_since(t0) / static_cast<double>(iters);
  }
  if (leader) out.iterations = iters;
}

// The barrier of a compas team made with `options` (threads, binding, algorithm, wait policy,
// oversubscription). `oversubscribed`, when given, is set to whether the team shares PUs.
BarrierTiming time_team_barrier(const threads::Topology& topo, const threads::TeamOptions& options,
                                int repeats, double target_ms, bool* oversubscribed = nullptr);

// Barriers across the processes of a job, one process per call (collective over `boot`): each
// variant is timed as time_barrier does, in every process, the variants interleaved (repeat r of
// every variant, then repeat r + 1 of every variant) so that a noisy stretch of the machine falls
// on all of them alike. The iteration counts are rank 0's choice, and each repeat's time is the
// slowest process's. One timing per variant, in their order.
std::vector<BarrierTiming> time_process_barriers(comm::Bootstrap& boot,
                                                 const std::vector<std::function<void()>>& variants,
                                                 int repeats, double target_ms);

}  // namespace compas::probes
