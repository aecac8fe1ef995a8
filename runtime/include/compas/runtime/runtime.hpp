// runtime: compas::Runtime, the one object a user program creates.
//
//   compas::Runtime rt(argc, argv);           // --threads, --bind, --wait ... or COMPAS_* env
//   auto u = rt.window<double>(rows * n, 2);  // symmetric, registered for RMA
//   rt.run([&](compas::ThreadCtx& t) {        // SPMD over the threads of this process
//     auto [lo, hi] = rt.block(t, n);         // this thread's share of the job's n items
//     ...
//     double r = rt.allreduce(t, local, compas::op::sum{});  // over all threads of all processes
//   });
//
// It bootstraps comm (single process, compas-run's tcp rendezvous, or MPI under mpirun / srun),
// builds the pinned team inside the cores the launcher gave this process (its affinity mask;
// compas-run also says it in COMPAS_CPUS), and owns the perf state (a Profile, so COMPAS_REGION
// works in run()).
//
// Hybrid collectives are called by every thread of every process, in the same order (COMPaS
// section 4): a team step among the threads, one node step by thread 0 of each process across
// processes, and a team step that hands the result to every thread. Results are deterministic
// for a given P x T: operands are combined in (process, thread) order.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "compas/comm/bootstrap.hpp"
#include "compas/comm/collectives.hpp"
#include "compas/comm/ucx.hpp"
#include "compas/comm/window.hpp"
#include "compas/perf/region.hpp"
#include "compas/threads/ops.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/topology.hpp"

namespace compas {

struct RuntimeOptions {
  int threads = 0;  // per process; 0: COMPAS_THREADS, else one per core of this process's cores
  std::string bind = "compact";  // compact | scatter | sockets | cpu list
  threads::WaitPolicy wait = threads::WaitPolicy::auto_;
  threads::BarrierAlgorithm barrier = threads::BarrierAlgorithm::dissemination;
  bool oversubscribe = false;  // allow more threads than this process's PUs
  std::string events;          // PAPI events or group for the Profile ("" = time only)

  // Environment only: COMPAS_THREADS, COMPAS_BIND, COMPAS_WAIT, COMPAS_BARRIER,
  // COMPAS_OVERSUBSCRIBE (0|1), COMPAS_EVENTS. Throws std::invalid_argument naming a bad value.
  static RuntimeOptions from_environment();
  // The environment, then the flags --threads N, --bind B, --wait W, --barrier A,
  // --oversubscribe, --events E (also --flag=value), which win. Recognised flags are removed from
  // argv (argc updated) so the program sees only its own. Throws std::invalid_argument.
  static RuntimeOptions from_args(int& argc, char** argv);
};

class Runtime {
 public:
  Runtime(int& argc, char** argv);
  explicit Runtime(RuntimeOptions options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int node() const;     // this process's rank
  int nodes() const;    // processes in the job
  int threads() const;  // threads per process
  const RuntimeOptions& options() const;

  comm::Bootstrap& bootstrap();
  comm::Comm& comm();
  comm::NodeCollectives& collectives();  // P > 1 only (std::logic_error otherwise)
  threads::Team& team();
  const threads::Topology& topology() const;
  perf::Profile& profile();

  // Collective over processes (call from one thread per process, outside run() or from thread 0
  // between team barriers): a symmetric window of n elements and `signals` signal words.
  template <class T>
  comm::Window<T> window(std::size_t n, std::size_t signals = 0) {
    return comm::Window<T>(comm(), n, signals);
  }

  // Runs body on every thread of this process's team (the caller is thread 0) and joins.
  void run(const std::function<void(threads::ThreadCtx&)>& body);

  // Collective over processes (outside run()): every thread's region totals of every process, as
  // profile().samples() gives them for this one, on every process (the job-level view).
  std::vector<perf::RegionSample> job_samples();

  // ---- hybrid collectives: every thread of every process calls them ----
  void barrier(threads::ThreadCtx& t);

  // Reduction of one value per thread over the whole job, with any associative op (T, T) -> T;
  // the result on every thread.
  template <class T, class Op>
  T allreduce(threads::ThreadCtx& t, const T& value, Op op) {
    static_assert(std::is_trivially_copyable_v<T>, "allreduce needs a trivially copyable T");
    T mine = t.allreduce(value, op);  // team step: same on every thread
    if (nodes() == 1) return mine;
    if (t.is_leader()) mine = fold_nodes(mine, op, static_cast<T*>(nullptr));
    return t.broadcast(mine, 0);
  }

  // root_thread of process root_node's value, on every thread.
  template <class T>
  T broadcast(threads::ThreadCtx& t, const T& value, int root_node = 0, int root_thread = 0) {
    static_assert(std::is_trivially_copyable_v<T>, "broadcast needs a trivially copyable T");
    check_root(root_node, root_thread);
    T v = t.broadcast(value, root_thread);
    if (nodes() == 1) return v;
    if (t.is_leader()) collectives().broadcast(std::span<T>(&v, 1), root_node);
    return t.broadcast(v, 0);
  }

  // op over the values of all threads before this one in (process, thread) order; `identity`
  // on thread 0 of process 0.
  template <class T, class Op>
  T exclusive_scan(threads::ThreadCtx& t, const T& value, Op op, const T& identity) {
    static_assert(std::is_trivially_copyable_v<T>, "exclusive_scan needs a trivially copyable T");
    const T in_team = t.exclusive_scan(value, op, identity);
    if (nodes() == 1) return in_team;
    const T team_total = t.allreduce(value, op);
    T before = identity;  // op over the team totals of the processes before this one
    if (t.is_leader()) fold_nodes(team_total, op, &before, identity);
    before = t.broadcast(before, 0);
    return op(before, in_team);
  }

  // ---- partitioning: over processes first, then over the threads of each ----
  // This process's [lo, hi) of n items.
  std::pair<std::size_t, std::size_t> node_block(std::size_t n) const;
  // This thread's [lo, hi) of n items of the whole job (inside node_block(n)).
  std::pair<std::size_t, std::size_t> block(const threads::ThreadCtx& t, std::size_t n) const;
  // A near-square rows x cols grid of the processes (rows <= cols, rows * cols = P) and this
  // process's (row, col) in it, row-major.
  struct Grid {
    int rows = 1, cols = 1, row = 0, col = 0;
  };
  Grid process_grid() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;

  void check_root(int root_node, int root_thread) const;

  // Thread 0 of each process: the op-fold of `mine` over all processes in rank order (returned),
  // and if `before` is set, the fold over the processes before this one (identity for rank 0).
  template <class T, class Op>
  T fold_nodes(const T& mine, Op op, T* before, const T& identity = T{}) {
    std::vector<T> all(static_cast<std::size_t>(nodes()));
    collectives().allgather(std::span<const T>(&mine, 1), std::span<T>(all));
    T total = all[0];
    if (before) *before = node() > 0 ? all[0] : identity;
    for (int r = 1; r < nodes(); ++r) {
      total = op(total, all[static_cast<std::size_t>(r)]);
      if (before && r < node()) *before = op(*before, all[static_cast<std::size_t>(r)]);
    }
    return total;
  }
};

}  // namespace compas
