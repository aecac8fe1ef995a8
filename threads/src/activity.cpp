#include "compas/threads/activity.hpp"

#include <atomic>
#include <chrono>

#include "activity_internal.hpp"

namespace compas::threads {

namespace {

constexpr int kSlots = 256;

struct alignas(64) Slot {
  std::atomic<std::uint64_t> waits{0};
  std::atomic<std::uint64_t> wait_ns{0};
};

Slot g_slots[kSlots + 1];  // the last one is shared by threads beyond kSlots
std::atomic<int> g_next_slot{0};
std::atomic<std::uint64_t> g_barriers{0};

Slot& my_slot() {
  thread_local Slot* slot = [] {
    const int i = g_next_slot.fetch_add(1, std::memory_order_relaxed);
    return &g_slots[i < kSlots ? i : kSlots];
  }();
  return *slot;
}

}  // namespace

std::atomic<bool> detail::g_wait_accounting{false};

void set_wait_accounting(bool on) {
  detail::g_wait_accounting.store(on, std::memory_order_relaxed);
}
bool wait_accounting() {
  return detail::g_wait_accounting.load(std::memory_order_relaxed);
}

void detail::add_barriers(std::uint64_t n) {
  g_barriers.fetch_add(n, std::memory_order_relaxed);
}

std::uint64_t detail::wait_clock_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

void detail::record_wait(std::uint64_t ns) noexcept {
  Slot& s = my_slot();
  // Single writer per slot except the shared overflow slot, so fetch_add is uncontended.
  s.waits.fetch_add(1, std::memory_order_relaxed);
  s.wait_ns.fetch_add(ns, std::memory_order_relaxed);
}

ActivityTotals activity_totals() {
  ActivityTotals t;
  t.barriers = g_barriers.load(std::memory_order_relaxed);
  for (auto& s : g_slots) {
    t.waits += s.waits.load(std::memory_order_relaxed);
    t.wait_ns += s.wait_ns.load(std::memory_order_relaxed);
  }
  return t;
}

}  // namespace compas::threads
