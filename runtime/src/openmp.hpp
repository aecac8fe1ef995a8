// The Runtime's side of OpenMP (openmp.cpp, the one source that calls OpenMP): OpenMP's thread
// count, pinning OpenMP's threads like the team (and putting them back), and the core of
// Runtime::allreduce(value, op) called by every thread of a parallel region.
//
// Everything handed between threads here goes through release/acquire atomics even where an
// OpenMP barrier or the end of a region already orders it: libgomp's own synchronisation is not
// instrumented, so these pairs are the only order ThreadSanitizer can see.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "compas/runtime/runtime.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/topology.hpp"

namespace compas::detail {

// `requested` with `automatic` resolved: `leave` when the environment makes OpenMP bind its
// threads itself (OMP_PROC_BIND other than false; without OMP_PROC_BIND, OMP_PLACES or
// GOMP_CPU_AFFINITY, which make libgomp bind), else `pin`. `why` gets the variable that decided
// it, e.g. "OMP_PROC_BIND=true" (empty otherwise).
OpenMP resolve_openmp(OpenMP requested, std::string* why = nullptr);

// When OpenMP binds (OMP_PROC_BIND, OMP_PLACES), libgomp binds the initial thread to its first
// place before main(), and the process's CPUs (which the topology takes from its threads' masks)
// shrink to that place. If the calling thread sits inside OpenMP's places but not on all of
// them, binds it to all of them (what the process had at start-up) and returns the mask it had,
// to go back to at the end (OpenMpSetup::start); else changes nothing and returns empty.
std::vector<int> widen_to_openmp_places();

// omp_get_wtime(): OpenMP's wall clock, in seconds.
double openmp_wtime();

struct OpenMpSetup {
  OpenMP requested = OpenMP::automatic;
  std::vector<int> cpu_of_thread;  // the team's placement (OS CPUs): T = its size
  std::vector<int> process_cpus;   // the OS CPUs this process may use (checked when left)
  std::vector<int> original;       // the mask the calling thread had before the team pinned it
  std::vector<int> start;          // widen_to_openmp_places()'s: the calling thread's at the end
  int rank = 0;                    // this process's, for the message
};

class OpenMpThreads {
 public:
  // On the thread that makes the Runtime, after its team pinned it (it is OpenMP's thread 0).
  // Records OpenMP's thread count and dynamic setting; changes nothing yet.
  OpenMpThreads(const threads::Topology& topo, OpenMpSetup setup);
  // Sets OpenMP's thread count to T with dynamic adjustment off, and pins OpenMP's threads
  // 0..T-1 (or checks OpenMP's binding) as setup.requested says. Throws std::runtime_error
  // naming the thread and cpu when a binding does not hold (none is left pinned then). Called
  // once the Runtime holds this object, so that the threads it may create see it (in
  // ThreadSanitizer's terms too: thread creation is the only order it sees here).
  void start();
  // After the team is gone: puts the pinned threads back on setup.original, the calling thread
  // on setup.start (if set), and OpenMP's thread count and dynamic setting as they were.
  ~OpenMpThreads();
  OpenMpThreads(const OpenMpThreads&) = delete;
  OpenMpThreads& operator=(const OpenMpThreads&) = delete;

  bool pinned() const { return pinned_; }
  // The OS CPUs each OpenMP thread was bound to, as read back after pinning (empty: not pinned).
  const std::vector<std::vector<int>>& binding() const { return binding_; }

  // Called by every thread of the innermost (active) parallel region, in the same order: the
  // `size` bytes at `value` of all its threads folded in thread order (combine(acc, x, op) sets
  // acc = op(acc, x)), then across(ctx, acc) on thread 0 (the fold over processes; null for
  // one process), copied to `result` on every thread. An exception on thread 0 is rethrown
  // there, and every other thread throws std::runtime_error with its message.
  using Combine = void (*)(void* acc, const void* x, const void* op);
  using Across = void (*)(void* ctx, void* acc);
  void allreduce_in_region(const void* value, void* result, std::size_t size, Combine combine,
                           const void* op, Across across, void* ctx);

 private:
  void pin();
  void check_inside(const std::string& why) const;
  void restore() noexcept;

  // One per thread of the region, each on its own cache line: the thread's value for this call,
  // and the number of the last call whose result it has copied out (for thread 0 to know, in
  // ThreadSanitizer's terms too, that it may overwrite that result).
  struct alignas(64) Slot {
    std::atomic<const void*> value{nullptr};
    std::atomic<std::uint32_t> copied{0};
  };
  struct Slots {
    int capacity = 0;
    std::unique_ptr<Slot[]> slot;
  };
  // Thread 0's result, double-buffered by the parity of the call: a thread may still copy out
  // the result of call k while thread 0 already folds call k + 1.
  struct Result {
    std::vector<unsigned char> bytes;
    std::exception_ptr error;
    std::string message;
    int readers = 0;  // the threads of the call that filled it
  };
  void grow_slots(int threads);  // thread 0, between two barriers
  void wait_for_readers(const Slots& s, int readers) const;

  const threads::Topology* topo_;
  OpenMpSetup setup_;
  int threads_;
  bool pinned_ = false;
  std::vector<std::vector<int>> binding_;
  int saved_max_threads_ = 1;
  int saved_dynamic_ = 0;

  std::atomic<Slots*> slots_{nullptr};
  std::vector<std::unique_ptr<Slots>> all_slots_;  // the current one and those it replaced
  std::atomic<std::uint32_t> calls_{0};            // completed calls; bit 0 picks the Result
  Result results_[2];
};

}  // namespace compas::detail
