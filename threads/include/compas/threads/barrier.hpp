// Barrier: the thread barrier of a team. Three algorithms, all lock-free spin barriers with
// state padded to cache lines, so that the cost of a barrier is a few cache-line transfers:
//  - central: one sense-reversing counter; every thread updates one line, then reads one flag.
//  - dissemination: ceil(log2 T) rounds of pairwise flags; no shared hot line at all.
//  - tree: a central barrier per socket, then one across the socket leaders, and the release
//    fans out per socket, so only one line per socket crosses the socket boundary.
// Each waits according to a WaitPolicy (wait.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "compas/threads/wait.hpp"

namespace compas::threads {

enum class BarrierAlgorithm { central, dissemination, tree };

BarrierAlgorithm parse_barrier_algorithm(const std::string& text);  // throws std::invalid_argument
std::string to_string(BarrierAlgorithm algorithm);

class Barrier {
 public:
  virtual ~Barrier() = default;
  // Called by thread `tid` (0..threads-1); returns once every thread has called it for this
  // episode. Memory written before the call is visible to every thread after it returns.
  // Returns true then; false when the barrier was cancelled and this episode cannot complete.
  virtual bool wait(int tid) noexcept = 0;
  virtual int threads() const noexcept = 0;
  virtual BarrierAlgorithm algorithm() const noexcept = 0;
  Backoff backoff() const noexcept { return backoff_; }

  // Thread `tid` failed and will not enter another episode: every wait for a later episode, now
  // or to come, returns false (sleepers are woken). Episodes that `tid` entered still complete
  // for every thread, since all threads have entered them. With several failing threads, the
  // earliest episode counts. A cancelled barrier cannot be used again (make a new one).
  void cancel(int tid) noexcept;
  bool cancelled() const noexcept { return cancelled_.load(std::memory_order_acquire); }

  // A thread that waits longer than `seconds` (> 0; 0: no limit, the default) for the others
  // ends the process (exit status 1) with a line on stderr naming, after `who` ("rank 2"), the
  // threads that did not arrive, and where the limit comes from (`limit`). Set before the
  // barrier is used.
  void set_timeout(double seconds, std::string who, std::string limit) {
    timeout_s_ = seconds;
    who_ = std::move(who);
    limit_ = std::move(limit);
  }

  // socket_of_thread is used by `tree` (threads with equal values form a group); the others
  // ignore it. Empty means one socket.
  static std::unique_ptr<Barrier> create(BarrierAlgorithm algorithm, int threads, Backoff backoff,
                                         const std::vector<int>& socket_of_thread = {});

 protected:
  explicit Barrier(Backoff backoff) : backoff_(backoff) {}
  // Wakes the sleepers on every word threads wait on (cancel() has set cancelled_).
  virtual void release_all() noexcept = 0;
  // Episodes thread `tid` has entered (its own counter, written by that thread only; others read
  // it to say who did not arrive).
  virtual std::uint32_t entered(int tid) const noexcept = 0;
  // After cancellation: true when episode `e` can never complete.
  bool hopeless(std::uint32_t e) const noexcept {
    return cancelled_.load(std::memory_order_acquire) &&
           static_cast<std::int32_t>(e - last_episode_.load(std::memory_order_acquire)) > 0;
  }
  // Thread `tid` waits until `word` reaches `e`; false when the episode became hopeless first.
  // Past the timeout it ends the process (timed_out).
  bool await(WaitWord& word, std::uint32_t e, int tid) noexcept;
  [[noreturn]] void timed_out(std::uint32_t e, int tid) const noexcept;
  Backoff backoff_;
  std::atomic<bool> cancelled_{false};
  std::atomic<std::uint32_t> last_episode_{0};  // the last episode every thread entered
  std::mutex cancel_mu_;
  double timeout_s_ = 0;
  std::string who_, limit_;
};

}  // namespace compas::threads
