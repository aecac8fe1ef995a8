// The yield hand-over probe (yield_probe.hpp).
#include "yield_probe.hpp"

#include <sched.h>

#include <pthread.h>

#include <atomic>
#include <thread>

namespace compas::threads::detail {

namespace {

int first_allowed_cpu() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) return c;
  return -1;
}

}  // namespace

bool yield_hands_over(void (*yield)(), int turns, std::chrono::nanoseconds limit) {
  const int cpu = first_allowed_cpu();
  if (cpu < 0) return false;
  std::atomic<int> turn{0};
  std::atomic<bool> failed{false};
  const auto deadline = std::chrono::steady_clock::now() + limit;
  auto player = [&](int me) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) failed.store(true);
    for (int t = me; t < 2 * turns; t += 2) {
      while (turn.load(std::memory_order_acquire) != t) {
        if (failed.load(std::memory_order_relaxed)) return;
        if (std::chrono::steady_clock::now() > deadline) {
          failed.store(true, std::memory_order_relaxed);
          return;
        }
        yield();
      }
      turn.store(t + 1, std::memory_order_release);
    }
  };
  std::thread other(player, 1);
  player(0);
  other.join();
  return !failed.load() && turn.load() == 2 * turns;
}

}  // namespace compas::threads::detail
