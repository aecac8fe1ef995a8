// Team: a persistent pool of T threads pinned as a Placement says. team.run(body) runs
// body(ThreadCtx&) on every thread (SPMD) and joins; the calling thread is thread 0. Threads
// stay alive between runs and sleep when idle. ThreadCtx carries the thread's identity, its
// share of a range, the team barrier and the team collectives (reduce, allreduce, broadcast,
// inclusive/exclusive scan) for any trivially copyable type and operator.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "compas/threads/barrier.hpp"
#include "compas/threads/ops.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/topology.hpp"
#include "compas/threads/wait.hpp"

namespace compas::threads {

// [lo, hi) of `n` items for part `index` of `parts`: sizes differ by at most one, the larger
// parts first.
inline std::pair<std::size_t, std::size_t> block_range(std::size_t n, int parts, int index) {
  const std::size_t p = static_cast<std::size_t>(parts), i = static_cast<std::size_t>(index);
  const std::size_t base = n / p, extra = n % p;
  const std::size_t lo = i * base + std::min(i, extra);
  return {lo, lo + base + (i < extra ? 1 : 0)};
}

inline constexpr double kTeamWaitGrace = 2;  // seconds beyond COMPAS_TIMEOUT (TeamOptions)

struct TeamOptions {
  int threads = 1;
  BindSpec bind{};
  WaitPolicy wait = WaitPolicy::automatic;
  BarrierAlgorithm barrier = BarrierAlgorithm::dissemination;
  bool allow_oversubscribe = false;
  // Pin threads to their PUs. Off only for topologies that cannot bind (synthetic ones).
  bool pin = true;
  // The PUs this process may use (a compas-run slice); empty means the whole machine.
  PuSet within{};
  // Set when other processes of the job share this host's cores: waits must back off.
  bool job_oversubscribed = false;
  // Identity of this process in the job, carried into ThreadCtx.
  int process = 0;
  int processes = 1;
  // A thread that waits in a team barrier (so in any team collective) longer than this ends the
  // process, naming the threads that did not arrive: a barrier that some threads skip never
  // hangs. < 0: COMPAS_TIMEOUT (60 s without it, the bound of every wait of the Comm and the
  // bootstrap) + kTeamWaitGrace, so that where the absent thread is itself in a wait of the Comm
  // (thread 0 in the process step of a hybrid collective), that wait ends first and names the
  // rank it waited for; 0: no limit. The clock is read only once a wait has stopped spinning, so
  // a team whose threads are busy for longer than the limit between two barriers is ended: raise
  // COMPAS_TIMEOUT for serial phases that long.
  double timeout_s = -1;
};

class Team;

// Thrown by a team barrier (and so by every team collective) when another thread of the team
// failed during the same run(): that thread will not arrive, so waiting would never end.
class TeamCancelled : public std::runtime_error {
 public:
  TeamCancelled() : std::runtime_error("another thread of the team failed") {}
};

class alignas(64) ThreadCtx {
 public:
  // Which one am I / how many, in compas's words: thread() / threads() for the team,
  // process() / processes() for the job (as Runtime, Group and Processes say them).
  int thread() const { return tid_; }           // this thread's index in its team, 0..threads()-1
  int threads() const { return nthreads_; }     // threads in the team
  int process() const { return process_; }      // this process's rank in the job
  int processes() const { return processes_; }  // processes in the job
  [[deprecated("use thread()")]] int tid() const { return tid_; }
  [[deprecated("use threads()")]] int nthreads() const { return nthreads_; }
  int global_id() const { return process_ * nthreads_ + tid_; }
  int global_threads() const { return processes_ * nthreads_; }
  int socket() const { return socket_; }
  int cpu() const { return cpu_; }  // OS index of the PU this thread is placed on
  bool is_leader() const { return tid_ == 0; }
  Team& team() const { return *team_; }

  // Throws TeamCancelled when another thread of the team failed in this run.
  void barrier();
  // This thread's share [lo, hi) of n items.
  std::pair<std::size_t, std::size_t> block(std::size_t n) const {
    return block_range(n, nthreads_, tid_);
  }

  // Every thread calls each collective, in the same order. Reductions combine values in thread
  // order (0, 1, ..., T-1), so the result is the same for every run with the same T.
  template <class T, class Op>
  T allreduce(const T& value, Op op);
  template <class T, class Op>
  T reduce(const T& value, Op op, int root = 0);  // meaningful at root only
  template <class T>
  T broadcast(const T& value, int root = 0);  // root's value, on every thread
  template <class T, class Op>
  T inclusive_scan(const T& value, Op op);  // op over threads 0..tid
  // op over threads 0..tid-1; `identity` on thread 0 (the identity before the operator, as in
  // every reduction and scan of compas).
  template <class T, class Op>
  T exclusive_scan(const T& value, const std::type_identity_t<T>& identity, Op op);
  // Elementwise over equally long arrays, one per thread, in place. The work is split across
  // the team, each element combined in thread order.
  template <class T, class Op>
  void allreduce(std::span<T> data, Op op);
  template <class T, class Op>
  void exclusive_scan(std::span<T> data, const std::type_identity_t<T>& identity, Op op);

  // Deprecated (one release): the operator before the identity.
  template <class T, class Op>
  [[deprecated("exclusive_scan(value, identity, op): the identity comes first")]] T exclusive_scan(
      const T& value, Op op, const T& identity) {
    return exclusive_scan(value, identity, op);
  }
  template <class T, class Op>
  [[deprecated("exclusive_scan(data, identity, op): the identity comes first")]] void
  exclusive_scan(std::span<T> data, Op op, const T& identity) {
    exclusive_scan(data, identity, op);
  }

 private:
  // op over the values of threads 0..last, in thread order, on every thread (allreduce: last =
  // nthreads - 1; inclusive_scan: last = tid).
  template <class T, class Op>
  T fold_upto(const T& value, Op op, int last);
  friend class Team;
  static constexpr std::size_t kSlotBytes = 128;
  template <class T>
  void put_slot(const T& value);
  template <class T>
  T get_slot(int thread) const;
  template <class T>
  const T* publish_and_gather(const T& value);  // large T: share a pointer, one barrier
  void publish_pointer(const void* p);
  const void* pointer_of(int thread) const;

  Team* team_ = nullptr;
  int tid_ = 0, nthreads_ = 1, process_ = 0, processes_ = 1, socket_ = 0, cpu_ = -1;
  unsigned parity_ = 0;         // which half of the double-buffered slots the next collective uses
  std::uint64_t barriers_ = 0;  // since the last fold into the activity totals
};

class Team {
 public:
  Team(const Topology& topo, const TeamOptions& options);
  ~Team();
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  // Runs body on every thread and returns when all have finished. An exception thrown by any
  // thread is rethrown here (the first one). It also cancels the team barrier for this run:
  // the other threads leave the barrier they wait in (or next reach) with TeamCancelled, so a
  // thread failing alone never leaves the others waiting for it.
  void run(const std::function<void(ThreadCtx&)>& body);

  int threads() const { return static_cast<int>(ctx_.size()); }  // as ThreadCtx::threads()
  // Deprecated (one release): threads(), the one spelling of a team's thread count.
  [[deprecated("use Team::threads()")]] int size() const { return threads(); }
  const Placement& placement() const { return placement_; }
  Barrier& barrier() { return *barrier_; }
  WaitPolicy wait_policy() const { return options_.wait; }
  Backoff backoff() const { return backoff_; }
  bool oversubscribed() const { return backoff_oversubscribed_; }
  // What each thread was bound to when it read its affinity back after pinning.
  const std::vector<std::vector<int>>& binding() const { return binding_; }

 private:
  friend class ThreadCtx;
  struct alignas(64) Slot {
    unsigned char bytes[2][ThreadCtx::kSlotBytes];
    const void* pointer;
  };
  void worker_main(int tid);
  void run_body(int tid);  // body, then report to the join
  void pin(int tid);
  void shutdown();         // stops and joins the workers, restores the caller's binding
  void resolve_timeout();  // timeout_s_ and timeout_source_ from the options or COMPAS_TIMEOUT
  std::unique_ptr<Barrier> make_barrier() const;  // options_'s, with the timeout

  TeamOptions options_;
  const Topology* topo_;
  Placement placement_;
  bool backoff_oversubscribed_ = false;
  Backoff backoff_;
  double timeout_s_ = 0;
  std::string timeout_source_;  // what the limit is, for the message
  std::unique_ptr<Barrier> barrier_;
  std::vector<ThreadCtx> ctx_;
  std::unique_ptr<Slot[]> slots_;
  std::vector<std::vector<int>> binding_;
  std::vector<std::string> binding_errors_;
  std::vector<int> caller_original_binding_;
  std::vector<std::thread> workers_;

  WaitWord generation_;  // bumped by run() to start the workers
  WaitWord started_;     // workers report after pinning
  WaitWord finished_;    // workers report after each body: the join
  std::uint32_t runs_ = 0;
  bool stopping_ = false;
  const std::function<void(ThreadCtx&)>* body_ = nullptr;
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
};

// ---- collectives ---------------------------------------------------------------------------

inline void ThreadCtx::barrier() {
  ++barriers_;
  if (!team_->barrier_->wait(tid_)) [[unlikely]]
    throw TeamCancelled();
}

inline void ThreadCtx::publish_pointer(const void* p) {
  team_->slots_[tid_].pointer = p;
}
inline const void* ThreadCtx::pointer_of(int thread) const {
  return team_->slots_[thread].pointer;
}

template <class T>
void ThreadCtx::put_slot(const T& value) {
  std::memcpy(team_->slots_[tid_].bytes[parity_], &value, sizeof(T));
}

template <class T>
T ThreadCtx::get_slot(int thread) const {
  T out;
  std::memcpy(&out, team_->slots_[thread].bytes[parity_], sizeof(T));
  return out;
}

template <class T>
const T* ThreadCtx::publish_and_gather(const T& value) {
  publish_pointer(&value);
  barrier();
  return &value;
}

template <class T, class Op>
T ThreadCtx::fold_upto(const T& value, Op op, int last) {
  static_assert(std::is_trivially_copyable_v<T>, "team collectives need trivially copyable T");
  if (nthreads_ == 1) return value;
  if constexpr (sizeof(T) <= kSlotBytes) {
    put_slot(value);
    barrier();
    T acc = get_slot<T>(0);
    for (int i = 1; i <= last; ++i) acc = op(acc, get_slot<T>(i));
    parity_ ^= 1u;
    return acc;
  } else {
    publish_and_gather(value);
    T acc = *static_cast<const T*>(pointer_of(0));
    for (int i = 1; i <= last; ++i) acc = op(acc, *static_cast<const T*>(pointer_of(i)));
    barrier();  // every thread has read every value before any value goes out of scope
    return acc;
  }
}

template <class T, class Op>
T ThreadCtx::allreduce(const T& value, Op op) {
  return fold_upto(value, op, nthreads_ - 1);
}

template <class T, class Op>
T ThreadCtx::reduce(const T& value, Op op, int root) {
  static_assert(std::is_trivially_copyable_v<T>, "team collectives need trivially copyable T");
  if (nthreads_ == 1) return value;
  if constexpr (sizeof(T) <= kSlotBytes) {
    put_slot(value);
    barrier();
    T acc = value;
    if (tid_ == root) {
      acc = get_slot<T>(0);
      for (int i = 1; i < nthreads_; ++i) acc = op(acc, get_slot<T>(i));
    }
    parity_ ^= 1u;
    return acc;
  } else {
    publish_and_gather(value);
    T acc = value;
    if (tid_ == root) {
      acc = *static_cast<const T*>(pointer_of(0));
      for (int i = 1; i < nthreads_; ++i) acc = op(acc, *static_cast<const T*>(pointer_of(i)));
    }
    barrier();
    return acc;
  }
}

template <class T>
T ThreadCtx::broadcast(const T& value, int root) {
  static_assert(std::is_trivially_copyable_v<T>, "team collectives need trivially copyable T");
  if (nthreads_ == 1) return value;
  if constexpr (sizeof(T) <= kSlotBytes) {
    if (tid_ == root) put_slot(value);
    barrier();
    T out = get_slot<T>(root);
    parity_ ^= 1u;
    return out;
  } else {
    publish_and_gather(value);
    T out = *static_cast<const T*>(pointer_of(root));
    barrier();
    return out;
  }
}

template <class T, class Op>
T ThreadCtx::inclusive_scan(const T& value, Op op) {
  return fold_upto(value, op, tid_);
}

template <class T, class Op>
T ThreadCtx::exclusive_scan(const T& value, const std::type_identity_t<T>& identity, Op op) {
  static_assert(std::is_trivially_copyable_v<T>, "team collectives need trivially copyable T");
  if (nthreads_ == 1) return identity;
  if constexpr (sizeof(T) <= kSlotBytes) {
    put_slot(value);
    barrier();
    T acc = identity;
    for (int i = 0; i < tid_; ++i) acc = op(acc, get_slot<T>(i));
    parity_ ^= 1u;
    return acc;
  } else {
    publish_and_gather(value);
    T acc = identity;
    for (int i = 0; i < tid_; ++i) acc = op(acc, *static_cast<const T*>(pointer_of(i)));
    barrier();
    return acc;
  }
}

template <class T, class Op>
void ThreadCtx::allreduce(std::span<T> data, Op op) {
  static_assert(std::is_trivially_copyable_v<T>, "team collectives need trivially copyable T");
  if (nthreads_ == 1) return;
  publish_pointer(data.data());
  barrier();
  // Element j is owned by one thread, which reads it from every array and writes the result
  // back to every array: no two threads touch the same element.
  auto [lo, hi] = block(data.size());
  for (std::size_t j = lo; j < hi; ++j) {
    T acc = static_cast<T*>(const_cast<void*>(pointer_of(0)))[j];
    for (int i = 1; i < nthreads_; ++i)
      acc = op(acc, static_cast<T*>(const_cast<void*>(pointer_of(i)))[j]);
    for (int i = 0; i < nthreads_; ++i) static_cast<T*>(const_cast<void*>(pointer_of(i)))[j] = acc;
  }
  barrier();
}

template <class T, class Op>
void ThreadCtx::exclusive_scan(std::span<T> data, const std::type_identity_t<T>& identity, Op op) {
  static_assert(std::is_trivially_copyable_v<T>, "team collectives need trivially copyable T");
  if (nthreads_ == 1) {
    for (auto& x : data) x = identity;
    return;
  }
  publish_pointer(data.data());
  barrier();
  auto [lo, hi] = block(data.size());
  for (std::size_t j = lo; j < hi; ++j) {
    T acc = identity;
    for (int i = 0; i < nthreads_; ++i) {
      T& x = static_cast<T*>(const_cast<void*>(pointer_of(i)))[j];
      T next = op(acc, x);
      x = acc;
      acc = next;
    }
  }
  barrier();
}

}  // namespace compas::threads
