#include "compas/threads/wait.hpp"

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <stdexcept>
#include <thread>

#include "activity_internal.hpp"
#include "yield_probe.hpp"

namespace compas::threads {

namespace {

// Pauses before a `spin` waiter starts yielding anyway: a guard against a spin policy chosen on
// a machine that turned out to be oversubscribed, so it degrades instead of stalling for ever.
constexpr int kSpinGuard = 1 << 16;
// When every thread has a core: spin long (the partner is running and will arrive soon), sleep
// only on a long wait, e.g. a serial phase of thread 0.
constexpr int kAloneSpins = 1 << 15;
constexpr int kAloneYields = 16;
// When oversubscribed: the thread waited for may need this core. Spin just long enough to catch
// a partner that is running elsewhere, then give the core away. A pause costs from ~10 cycles to
// over 100 (AMD Zen 5): T = 4 on 2 cores of such a machine, the central barrier took 18 us with
// 0 or 16 spins, 20.5 with 32, 43 with 256 (libgomp passive: 18.4).
constexpr int kSharedSpins = 16;
// Then yield this many times before the futex, where yields hand the core over (see
// yields_hand_over): T = 4 on 2 cores of an AMD Zen 5 guest (Linux 6.18), a yield loop barrier
// took 3.5 us against 15 us for futex sleeps. Where a yield does not hand the core over (EEVDF
// on some kernels keeps the yielder running until the next tick: 4 ms per barrier seen), none.
constexpr int kSharedYields = 64;

// membarrier(PRIVATE_EXPEDITED) makes every running thread of this process execute a full
// fence: the sleeper can fence on the waker's behalf.
bool query_membarrier() {
  const long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
  return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

// Decided during static initialization, before any thread can wait.
const bool g_membarrier = query_membarrier();

// The yield probe (yield_probe.hpp): 64 turns take well under a millisecond where sched_yield runs
// the other thread at once, a tick each where the scheduler keeps the yielder running. Bounded
// by kYieldProbeLimit, once per process, on the first oversubscribed auto wait.
constexpr auto kYieldProbeLimit = std::chrono::milliseconds(5);
constexpr int kYieldProbeTurns = 64;

void os_yield() {
  sched_yield();
}

}  // namespace

bool asymmetric_fences_supported() {
  return g_membarrier;
}

bool yields_hand_over() {
  // Measured on a thread of its own: the caller's affinity is left alone.
  static const bool hand_over = [] {
    bool v = false;
    std::thread([&v] {
      v = detail::yield_hands_over(os_yield, kYieldProbeTurns, kYieldProbeLimit);
    }).join();
    return v;
  }();
  return hand_over;
}

WaitPolicy parse_wait_policy(const std::string& text) {
  if (text == "spin") return WaitPolicy::spin;
  if (text == "yield") return WaitPolicy::yield;
  if (text == "block") return WaitPolicy::block;
  if (text == "auto") return WaitPolicy::automatic;
  throw std::invalid_argument("invalid wait policy '" + text +
                              "': allowed are spin, yield, block, auto");
}

std::string to_string(WaitPolicy policy) {
  switch (policy) {
    case WaitPolicy::spin:
      return "spin";
    case WaitPolicy::yield:
      return "yield";
    case WaitPolicy::block:
      return "block";
    case WaitPolicy::automatic:
      return "auto";
  }
  return "?";
}

Backoff resolve(WaitPolicy policy, bool oversubscribed) {
  switch (policy) {
    case WaitPolicy::spin:
      return {kSpinGuard, INT_MAX, false};
    case WaitPolicy::yield:
      return {0, INT_MAX, false};
    case WaitPolicy::block:
      return {kSharedSpins, 0, true};
    case WaitPolicy::automatic:
      return oversubscribed
                 ? Backoff{kSharedSpins, yields_hand_over() ? kSharedYields : 0, true, false}
                 : Backoff{kAloneSpins, kAloneYields, true, g_membarrier};
  }
  return {};
}

void WaitWord::wake_sleepers(bool light) noexcept {
  // Orders the caller's store of `value` before the load of `sleepers`.
  if (light && g_membarrier)
    std::atomic_signal_fence(std::memory_order_seq_cst);
  else
    std::atomic_thread_fence(std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_relaxed) != 0) base::futex_wake_all(value);
}

void WaitWord::store_and_wake(std::uint32_t v) noexcept {
  value.store(v, std::memory_order_release);
  wake_sleepers(false);
}

std::uint32_t WaitWord::add_and_wake(std::uint32_t delta) noexcept {
  const std::uint32_t v = value.fetch_add(delta, std::memory_order_seq_cst) + delta;
  wake_sleepers(false);
  return v;
}

namespace {

// The deadline of a WaitLimit, from the end of the spin phase on (no clock before).
class Deadline {
 public:
  explicit Deadline(WaitLimit* limit) : limit_(limit) {
    if (limit_)
      end_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(limit_->seconds));
  }
  // Past the deadline (and the limit marked expired)?
  bool passed() {
    if (!limit_ || Clock::now() < end_) return false;
    limit_->expired = true;
    return true;
  }
  // Nanoseconds left for a futex sleep (-1: no limit).
  long left_ns() const {
    if (!limit_) return -1;
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(end_ - Clock::now());
    return std::max<long>(left.count(), 1);
  }

 private:
  using Clock = std::chrono::steady_clock;
  WaitLimit* limit_;
  Clock::time_point end_{};
};

// `cancel`, when given, ends the wait early once it reads true, `limit` once its time has passed
// (the value may not have reached the target then: the caller checks).
std::uint32_t wait_slow(WaitWord& word, std::uint32_t target, Backoff b, std::uint32_t v,
                        const std::atomic<bool>* cancel, WaitLimit* limit) noexcept {
  const auto done = [&] {
    return reached(v, target) || (cancel && cancel->load(std::memory_order_acquire));
  };
  for (int i = 0; !done() && i < b.spins; ++i) {
    cpu_relax();
    v = word.value.load(std::memory_order_acquire);
  }
  if (done()) return v;
  Deadline deadline(limit);
  for (int i = 0; !done() && (i < b.yields || !b.sleep); i += (i < b.yields)) {
    sched_yield();
    v = word.value.load(std::memory_order_acquire);
    if ((i & 63) == 63 && deadline.passed()) return v;
  }
  if (done() || deadline.passed()) return v;
  // Sleep. Register as a sleeper, fence, then re-read: either the waker sees the sleeper or
  // this thread sees the new value before it sleeps (a Dekker handshake, see Backoff). The same
  // holds for `cancel`, whose setter wakes the word after setting it.
  word.sleepers.fetch_add(1, std::memory_order_seq_cst);
  if (b.asymmetric_fence && g_membarrier)
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  else
    std::atomic_thread_fence(std::memory_order_seq_cst);
  for (v = word.value.load(std::memory_order_acquire); !done() && !deadline.passed();
       v = word.value.load(std::memory_order_acquire))
    base::futex_wait(word.value, v, deadline.left_ns());
  word.sleepers.fetch_sub(1, std::memory_order_release);
  return v;
}

}  // namespace

std::uint32_t wait_until_reached(WaitWord& word, std::uint32_t target, Backoff b,
                                 const std::atomic<bool>* cancel, WaitLimit* limit) noexcept {
  const std::uint32_t v = word.value.load(std::memory_order_acquire);
  if (reached(v, target)) return v;
  if (!detail::g_wait_accounting.load(std::memory_order_relaxed))
    return wait_slow(word, target, b, v, cancel, limit);
  const std::uint64_t t0 = detail::wait_clock_ns();
  const std::uint32_t out = wait_slow(word, target, b, v, cancel, limit);
  detail::record_wait(detail::wait_clock_ns() - t0);
  return out;
}

}  // namespace compas::threads
