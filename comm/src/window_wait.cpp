// Reading and waiting on window signals: signal, reset_signal, wait_until and direct_wait_until
// (polling, progressing the worker, and sleeping on the signal's futex when oversubscribed).
#include <atomic>
#include <functional>
#include <string>

#include "compas/base/machine.hpp"
#include "compas/comm/window.hpp"
#include "internals.hpp"
#include "ucx_impl.hpp"
#include "window_impl.hpp"

namespace compas::comm {

namespace {

using detail::check_signal;
using detail::low_half;
using detail::Peer;

}  // namespace

std::uint64_t WindowBytes::signal(std::size_t index) const {
  check_signal("signal", index, signals_);
  return std::atomic_ref<std::uint64_t>(*impl_->own.signal(base_, index))
      .load(std::memory_order_acquire);
}

void WindowBytes::reset_signal(std::size_t index, std::uint64_t value) {
  check_signal("reset_signal", index, signals_);
  std::atomic_ref<std::uint64_t>(*impl_->own.signal(base_, index))
      .store(value, std::memory_order_release);
}

namespace {

// Waits until *word >= at_least; a word of the window whose sleepers `waiters` counts (this
// process's or, mapped, a same-host peer's). `woken`: whoever raises the word wakes sleepers
// (load/store), so the back-off sleeps long on its futex; otherwise (UCX delivers) briefly.
void wait_for_word(CommImpl& c, std::uint64_t* word, std::uint32_t* waiter_count,
                   std::uint64_t at_least, int from_rank, bool woken,
                   const std::function<std::string()>& what) {
  std::atomic_ref<std::uint64_t> s(*word);
  if (s.load(std::memory_order_acquire) >= at_least) return;
  const long sleep_ns = woken ? 20'000'000 : 100'000;
  std::atomic_ref<std::uint32_t> waiters(*waiter_count);
  auto block = [&] {
    waiters.fetch_add(1, std::memory_order_seq_cst);
    const std::uint64_t v = s.load(std::memory_order_seq_cst);
    // A futex on the window's shared mapping (not private: waker and sleeper are different
    // processes). A signal is 64 bits; the futex word is its low half, which every add changes
    // unless it adds a multiple of 2^32 (the timeout bounds that case).
    if (v < at_least)
      base::futex_wait(low_half(word), static_cast<std::uint32_t>(v), sleep_ns,
                       base::FutexScope::shared);
    waiters.fetch_sub(1, std::memory_order_seq_cst);
  };
  c.wait([&] { return s.load(std::memory_order_acquire) >= at_least; },
         [&] {
           return what() + " >= " + std::to_string(at_least) + " (it is " +
                  std::to_string(s.load()) + ")";
         },
         from_rank, block, /*poll_often=*/woken);
}

}  // namespace

void WindowBytes::wait_until(std::size_t index, std::uint64_t at_least, int from_rank) {
  check_signal("wait_until", index, signals_);
  // Oversubscribed: sleep on the signal's futex. A same-host sender doing load/store wakes it; a
  // UCX sender does not, so then the sleep is short and the loop progresses the worker.
  const bool woken = from_rank >= 0 && from_rank < comm_->size() && direct(from_rank);
  wait_for_word(*impl_->comm, impl_->own.signal(base_, index), impl_->own.waiters(base_), at_least,
                from_rank, woken, [&] { return "signal " + std::to_string(index); });
}

void WindowBytes::direct_wait_until(int rank, std::size_t index, std::uint64_t at_least,
                                    const char* what, int from_rank) {
  check_signal("direct_wait_until", rank, index, impl_->layout(rank).signals);
  Peer& p = impl_->peer(rank, *this);
  if (!p.direct)
    throw std::logic_error("direct_wait_until: rank " + std::to_string(rank) +
                           " is not reached by load/store");
  wait_for_word(*impl_->comm, p.layout.signal(p.direct, index), p.layout.waiters(p.direct),
                at_least, from_rank, /*woken=*/true, [&] { return std::string(what); });
}

}  // namespace compas::comm
