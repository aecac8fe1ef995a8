// What UpdateBatch (update_batch.hpp) keeps per adding thread: one slot per thread of the process
// that adds, whichever team it belongs to (an OpenMP team, Runtime::run's team, a std::thread).
// A thread finds its slot by its batch number (batch_thread(): a thread_local kept for the
// thread's life), with no lock for the first kFast numbers; its first add makes the slot under a
// lock. Internal to the porting layer.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "compas/runtime/thread_order.hpp"

namespace compas::detail {

// The calling thread's batch number, 0, 1, 2, ... in the order threads first ask
// (port/src/update_batch.cpp).
int new_batch_thread();
inline thread_local int batch_thread_number = -1;
inline int batch_thread() {
  const int n = batch_thread_number;
  return n >= 0 ? n : (batch_thread_number = new_batch_thread());
}

template <class S>
class ThreadSlots {
 public:
  // The calling thread's slot, made by make() (a std::unique_ptr<S>) at its first call.
  template <class Make>
  S& mine(Make&& make) {
    const int n = batch_thread();
    if (n < kFast)
      if (S* s = fast_[static_cast<std::size_t>(n)].load(std::memory_order_acquire)) [[likely]]
        return *s;
    return add(n, make);
  }

  // Every slot, in flush order (batch_order when it was made, then the order made). Called when
  // no thread adds (the flush, after the parallel region).
  const std::vector<S*>& ordered() {
    std::lock_guard lock(mu_);
    if (order_.size() != all_.size()) {
      std::vector<std::pair<std::uint64_t, S*>> keyed;
      for (const auto& [key, s] : all_) keyed.emplace_back(key, s.get());
      std::stable_sort(keyed.begin(), keyed.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      order_.clear();
      for (const auto& k : keyed) order_.push_back(k.second);
    }
    return order_;
  }

 private:
  static constexpr int kFast = 256;

  template <class Make>
  S& add(int n, Make& make) {
    std::lock_guard lock(mu_);
    for (const auto& [number, s] : beyond_)
      if (number == n) return *s;
    all_.emplace_back(batch_order(n), make());
    S* s = all_.back().second.get();
    if (n < kFast)
      fast_[static_cast<std::size_t>(n)].store(s, std::memory_order_release);
    else
      beyond_.emplace_back(n, s);
    return *s;
  }

  std::mutex mu_;
  std::array<std::atomic<S*>, kFast> fast_{};                      // by batch number
  std::vector<std::pair<std::uint64_t, std::unique_ptr<S>>> all_;  // (order, slot), as made
  std::vector<std::pair<int, S*>> beyond_;                         // numbers from kFast on
  std::vector<S*> order_;                                          // all_ in flush order
};

}  // namespace compas::detail
