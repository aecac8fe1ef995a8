// Wait policies: how a thread waits for a 32-bit word to reach a value. Spinning gives the lowest
// latency when every thread has its own core; when threads outnumber cores a spinning waiter
// steals the core from the thread it waits for, so the waiter must yield or sleep (futex).
// No OS mutex or condition variable is involved on any path.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "compas/base/machine.hpp"

namespace compas::threads {

enum class WaitPolicy {
  spin,       // pause loop
  yield,      // sched_yield loop
  block,      // brief spin, then futex sleep
  automatic,  // spin when the job has a core per thread, else spin briefly, yield (where
              // yields hand the core over: yields_hand_over()), then futex
};

WaitPolicy parse_wait_policy(const std::string& text);  // throws std::invalid_argument
std::string to_string(WaitPolicy policy);

// A policy with the question "is the job oversubscribed?" answered: spin this many pauses,
// then yield this many times, then sleep on a futex (or keep yielding when sleep is false).
//
// Before sleeping, a waiter and the thread that will wake it need a full fence each (a Dekker
// handshake: the waker must see the sleeper, or the sleeper the new value). With
// `asymmetric_fence` the sleeper fences for both through membarrier(2), so the waker's fast path
// is fence-free; worth it only where sleeping is rare (auto with a core per thread).
struct Backoff {
  int spins = 0;
  int yields = 0;
  bool sleep = false;
  bool asymmetric_fence = false;
};
Backoff resolve(WaitPolicy policy, bool oversubscribed);

using base::cpu_relax;  // one pause of a spin loop

// A word that threads wait on, with a count of sleepers so a waker makes the futex system call
// only when someone actually sleeps. Occupies a cache line of its own.
struct alignas(64) WaitWord {
  std::atomic<std::uint32_t> value{0};
  std::atomic<std::uint32_t> sleepers{0};

  // Publishes v and wakes sleepers, if any, whatever Backoff they wait with.
  void store_and_wake(std::uint32_t v) noexcept;
  // Publishes v to waiters that all wait with Backoff `b`, paying only for what `b` needs: a
  // plain release store when they never sleep, no full fence when their fence is asymmetric.
  void publish(std::uint32_t v, const Backoff& b) noexcept {
    value.store(v, std::memory_order_release);
    if (b.sleep) wake_sleepers(b.asymmetric_fence);
  }
  // Adds delta and wakes sleepers, if any; returns the new value.
  std::uint32_t add_and_wake(std::uint32_t delta) noexcept;

 private:
  void wake_sleepers(bool light) noexcept;
};

// True when `v` has reached `target` in wrap-around (serial number) order.
inline bool reached(std::uint32_t v, std::uint32_t target) noexcept {
  return static_cast<std::int32_t>(v - target) >= 0;
}

// True when this kernel offers membarrier(2) expedited fences; without them an asymmetric
// Backoff falls back to a full fence on both sides.
bool asymmetric_fences_supported();
// Does sched_yield hand the core to another runnable thread on the same CPU at once? Measured
// once per process (at most 5 ms, on a thread of its own); auto waits of an oversubscribed job
// yield before sleeping only where it does.
bool yields_hand_over();

// A bound on one wait. The clock is read only once the wait has spun its pauses (while it
// yields, and around its futex sleeps, which then end by the deadline): the spinning fast path
// costs the same with or without a limit.
struct WaitLimit {
  double seconds = 0;    // > 0
  bool expired = false;  // set when the wait returned because `seconds` had passed
};

// Waits until reached(word.value, target), following `backoff`. Returns the value seen.
// With `cancel`, also returns (whatever the value) once *cancel reads true; whoever sets it must
// then wake the word (add_and_wake(0)) so that a sleeper sees it. With `limit`, also returns
// (limit->expired set) once limit->seconds have passed.
std::uint32_t wait_until_reached(WaitWord& word, std::uint32_t target, Backoff backoff,
                                 const std::atomic<bool>* cancel = nullptr,
                                 WaitLimit* limit = nullptr) noexcept;

}  // namespace compas::threads
