// Comm's progress: progressing the worker, the progress thread, and the waits (back-off,
// timeouts, the progress thread standing down) that local completion of a request goes through.
#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <sstream>

#include "compas/base/machine.hpp"
#include "compas/comm/ucx.hpp"
#include "internals.hpp"
#include "ucx_impl.hpp"

namespace compas::comm {

namespace {

using Clock = std::chrono::steady_clock;

std::string format_seconds(double s) {
  std::ostringstream o;
  o << s << " s";
  return o.str();
}

}  // namespace

bool Comm::progress() {
  // A thread that progresses by itself keeps the progress thread standing down, as a wait does.
  impl_->last_wait_end_ns.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
  const bool any = ucp_worker_progress(impl_->worker) != 0;
  impl_->send_due_acks();
  return any;
}

void CommImpl::progress_once() {
  ucp_worker_progress(worker);
  send_due_acks();
}

void CommImpl::sleep_on_worker(int timeout_ms) {
  if (efd < 0) {
    ::usleep(static_cast<useconds_t>(timeout_ms) * 1000 / 10);
    return;
  }
  if (ucp_worker_arm(worker) != UCS_OK) return;  // busy: events are pending already
  pollfd pfd{efd, POLLIN, 0};
  ::poll(&pfd, 1, timeout_ms);
}

void CommImpl::wait(const std::function<bool()>& done, const std::function<std::string()>& what,
                    int peer, const std::function<void()>& block, bool poll_often) {
  if (done()) return;
  // While a thread waits here it progresses the worker, and the progress thread stands down so
  // that the two do not fight over the worker lock (or, oversubscribed, over a core).
  struct Waiting {
    Impl& m;
    explicit Waiting(Impl& impl) : m(impl) { m.enter_wait(); }
    ~Waiting() { m.leave_wait(); }
  } waiting(*this);
  const auto start = Clock::now();
  const auto limit = std::chrono::duration<double>(opt.timeout_s);
  // Spinning, after kSpinFor the loop yields at every turn: a thread of this process that shares
  // the core (one the program made itself, which inherits its maker's pinning) and raises the
  // signal waited for runs at once rather than after the scheduler's time slice (~4 ms a handoff).
  // With no other thread on the core the yield returns at once.
  constexpr auto kSpinFor = std::chrono::microseconds(50);
  bool yielding = false;
  for (std::uint64_t i = 1;; ++i) {
    // The worker lock is costly: between progress calls, poll the condition alone a few times.
    if (!poll_often || (i & 7) == 1) progress_once();
    if (done()) return;
    if ((i & 63) == 0) {
      if (peer >= 0) {
        check_alive(peer);
      } else {
        // Waiting on several peers (e.g. a count of signals from all): any of them dying ends it.
        for (int r = 0; r < size; ++r)
          if (r != rank) check_alive(r);
      }
      const auto waited = Clock::now() - start;
      yielding = waited > kSpinFor;
      if (waited > limit) {
        failed.store(true, std::memory_order_relaxed);
        throw CommError("timed out after " + format_seconds(opt.timeout_s) + " waiting for " +
                            (peer >= 0 ? "rank " + std::to_string(peer) : std::string("peers")) +
                            ": " + what() + " (COMPAS_TIMEOUT)",
                        peer);
      }
    }
    if (backoff) {
      // A peer sharing this core needs it more than this loop does.
      if (i < 64) {
        sched_yield();
      } else if (block) {
        leave_wait();  // not progressing while asleep: the progress thread takes over
        block();
        enter_wait();
      } else {
        sleep_on_worker(1);
      }
    } else if (yielding) {
      sched_yield();
    } else {
      base::cpu_relax();
    }
  }
}

void CommImpl::enter_wait() {
  if (progress_thread.joinable()) waiting_threads.fetch_add(1, std::memory_order_seq_cst);
}

void CommImpl::leave_wait() {
  if (!progress_thread.joinable()) return;
  // No wake-up: the progress thread resumes by itself once waits have stopped for a while (see
  // run_progress_thread), so back-to-back waits never pay for waking it.
  last_wait_end_ns.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
  waiting_threads.fetch_sub(1, std::memory_order_seq_cst);
}

void CommImpl::complete(ucs_status_ptr_t sp, int peer, const char* op,
                        std::unique_ptr<std::uint64_t[]>* hold) {
  if (sp == nullptr) return;
  if (UCS_PTR_IS_ERR(sp)) fail(peer, op, UCS_PTR_STATUS(sp));
  ucs_status_t st = UCS_INPROGRESS;
  try {
    wait([&] { return (st = ucp_request_check_status(sp)) != UCS_INPROGRESS; },
         [&] { return std::string(op) + " to complete"; }, peer);
  } catch (...) {
    abandon(sp, peer, op, hold ? std::move(*hold) : nullptr);
    throw;
  }
  ucp_request_free(sp);
  if (st != UCS_OK) fail(peer, op, st);
}

void CommImpl::run_progress_thread() {
  // Application threads progress the worker themselves while they wait; this thread is for the
  // stretches when none does (computing, or not communicating), so that peers' operations on this
  // process's memory still complete. It stands down while a thread waits and until waits have
  // stopped for kIdle, which keeps it off the cores in communication-heavy phases.
  // While threads wait it naps kBusyNap at a time: each of its wake-ups takes the core from a
  // thread polling for a message for a few microseconds (at 1 ms naps, a tcp put_signal
  // ping-pong on two cores took 11.3 us one way against 9.5 without the thread). It resumes at
  // most kBusyNap + kIdle after the last wait.
  constexpr std::int64_t kIdle = 1'000'000;      // ns
  constexpr std::int64_t kBusyNap = 20'000'000;  // ns
  while (!stop_progress.load(std::memory_order_acquire)) {
    if (const std::uint32_t w = waiting_threads.load(std::memory_order_seq_cst); w > 0) {
      base::futex_wait(waiting_threads, w, kBusyNap);
      continue;
    }
    const std::int64_t since =
        Clock::now().time_since_epoch().count() - last_wait_end_ns.load(std::memory_order_relaxed);
    if (since < kIdle) {
      base::futex_wait(waiting_threads, 0, kIdle - since);
      continue;
    }
    while (ucp_worker_progress(worker) != 0) {
    }
    send_due_acks();
    sleep_on_worker(100);
  }
}

}  // namespace compas::comm
