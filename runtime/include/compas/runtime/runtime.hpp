// runtime: the job. This header is compas::Runtime, the one object a user program creates; the
// layer's other headers: range.hpp (index ranges and their splits), collectives.hpp (barrier,
// broadcast, gathers, alltoall(v), reduce, allreduce and exclusive_scan over Processes, with the
// agreement step every call starts with), group.hpp (groups and process grids), thread_order.hpp
// (where a thread stands in its OpenMP team). docs/decisions/0010 and 0011 say how.
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
// section 4): a team step among the threads, one process step by thread 0 of each process across
// processes, and a team step that hands the result to every thread. The process step of allreduce
// and exclusive_scan is recursive doubling (comm's ProcessCollectives with a caller's operator):
// ceil(log2 P) rounds of one exchange of a value, not a gather of P values.
//
// What the reductions and scans guarantee, for any associative op (commutative or not):
//  - op is only ever applied as op(earlier operands, later operands) in (process, thread) order:
//    a process folds its threads' values left to right (thread 0 first), and two partials of
//    adjacent blocks of processes combine as op(lower block, higher block). So the result is the
//    (process, thread)-order fold: exact for integers, a matrix product, a concatenation.
//  - Every thread of every process gets the same bits, and every run of a given P x T gives the
//    same bits. The grouping over processes is a tree whose shape depends on P only (the same as
//    the left fold for P <= 3, not beyond), so a floating-point result may differ in its last bits
//    from a serial left-to-right loop and from another P x T.
//  - If op throws on one process, the process step still completes its exchanges: that process
//    rethrows op's exception, and every other process whose result needed that step throws
//    std::runtime_error naming the rank (the Runtime stays usable).
//
// OpenMP in the same program: the Runtime gives OpenMP its thread count T and pins OpenMP's
// threads like its team (RuntimeOptions::openmp), so `#pragma omp parallel for` after the Runtime
// runs one thread per CPU of this process; allreduce(value, op) reduces across the job from every
// thread of such a region, or from one thread per process outside of one.
#pragma once

#include "compas/base/cxx_version.hpp"  // first: an older standard is said in words

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "compas/comm/bootstrap.hpp"
#include "compas/comm/collectives.hpp"
#include "compas/comm/ucx.hpp"
#include "compas/comm/window.hpp"
#include "compas/perf/region.hpp"
#include "compas/runtime/range.hpp"
#include "compas/threads/ops.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/topology.hpp"

namespace compas {

// What the Runtime does with OpenMP's threads. OpenMP's threads are made by the thread that made
// the Runtime, which its team pinned to one CPU (team thread 0); unbound, they would inherit that
// one CPU and every `#pragma omp parallel` would run on it.
enum class OpenMP {
  automatic,  // pin, unless the environment makes OpenMP bind its threads itself (OMP_PROC_BIND
              // other than false; without OMP_PROC_BIND, OMP_PLACES or GOMP_CPU_AFFINITY): then
              // leave, and say once on stderr if an OpenMP thread is bound outside this process's
              // CPUs
  pin,        // OpenMP thread i on the OS CPU of team thread i (team().placement().pu_of_thread)
  leave,      // OpenMP's binding is not touched
};

struct RuntimeOptions {
  int threads = 0;  // per process; 0: COMPAS_THREADS, else OMP_NUM_THREADS (its first value),
                    // else one per core of this process's cores
  std::string bind = "compact";  // compact | scatter | sockets | cpu list
  threads::WaitPolicy wait = threads::WaitPolicy::automatic;
  threads::BarrierAlgorithm barrier = threads::BarrierAlgorithm::dissemination;
  bool oversubscribe = false;  // allow more threads than this process's PUs
  std::string events;          // PAPI events or group for the Profile ("" = time only)
  // OpenMP's threads (auto | pin | leave). In every mode the Runtime sets OpenMP's thread count to
  // its team size T (omp_set_num_threads, omp_set_dynamic(0)), so `#pragma omp parallel` runs T
  // threads. `pin` binds OpenMP's threads 0..T-1 in one parallel region at construction, thread i
  // to the team's CPU of thread i (openmp_binding() reads them back); libgomp keeps its threads
  // and gives team id i to the same thread in every later region of up to T threads started by
  // the same thread, so the binding holds. A later region of MORE than T threads gets its extra
  // threads unpinned: new ones are made by the thread that made the Runtime and inherit its one
  // CPU, so they share the CPU of OpenMP thread 0. Regions started from another thread use
  // another pool and are not pinned. When the Runtime ends, the threads it pinned go back to the
  // CPUs the process had before it, and the thread count and dynamic setting to their old values.
  // When OpenMP binds (OMP_PROC_BIND, OMP_PLACES), libgomp has moved the main thread to its first
  // place before main(); the Runtime takes all of OpenMP's places as the process's CPUs (what it
  // started with) and puts the main thread back on the first place at the end.
  OpenMP openmp = OpenMP::automatic;
  // Every process prints one line on stderr at start: its rank, host, the cpus it uses and the
  // cpu of each of its threads (and of OpenMP's, where the Runtime pinned them). The variable
  // COMPAS_REPORT_BINDING=1 turns it on for every Runtime, whatever its options say.
  bool report_binding = false;

  // Environment only: COMPAS_THREADS, COMPAS_BIND, COMPAS_WAIT, COMPAS_BARRIER,
  // COMPAS_OVERSUBSCRIBE (0|1), COMPAS_EVENTS, COMPAS_OPENMP, COMPAS_REPORT_BINDING (0|1);
  // without COMPAS_THREADS, OMP_NUM_THREADS (a program ported from OpenMP keeps its environment).
  // Throws std::invalid_argument naming a bad value.
  static RuntimeOptions from_environment();
  // The environment, then the flags --threads N, --bind B, --wait W, --barrier A,
  // --oversubscribe, --events E, --openmp M, --report-bindings (also --flag=value), which win;
  // OMP_NUM_THREADS counts only when neither --threads nor COMPAS_THREADS is given. Recognised
  // flags are removed from argv (argc updated) so the program sees only its own. Throws
  // std::invalid_argument.
  static RuntimeOptions from_args(int& argc, char** argv);
};

namespace detail {
class OpenMpThreads;  // runtime/src/openmp.hpp
}

// An error in the arguments of a collective call that every process of the call detects alike and
// throws with the same message (a DistArray's shape differing between processes, lengths or roots
// of compas::broadcast and the other calls of collectives.hpp that differ). Uncaught, it ends the
// job with one line, from process 0, or from the first member of the Group it was thrown on (see
// Runtime::abort).
// A bad value in the Runtime's own flags or COMPAS_* variables (--threads x, --bind bogus, an
// unknown event): thrown by the constructor before the job forms, alike on every process.
// Uncaught, the process prints "compas: MESSAGE" and exits with status 2, as compas does for any
// bad input (a launcher then ends the job with that status).
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class CollectiveError : public std::invalid_argument {
 public:
  // `speaker`: the job rank that says it when it ends the job (a group's first member).
  explicit CollectiveError(const std::string& message, int speaker = 0)
      : std::invalid_argument(message), speaker_(speaker) {}
  int speaker() const { return speaker_; }

 private:
  int speaker_;
};

class Runtime {
 public:
  // Joins the job (collective over the processes). One Runtime per process in a job of several
  // processes: under compas-run a second one (while the first lives, or after it ended: the
  // first took the job's rendezvous), under mpirun / srun one made after MPI was finalized (the
  // first Runtime finalizes MPI when it initialized it), throws comm::SecondJobError, a
  // std::logic_error, on every process at once, before anything changes. Uncaught, each process
  // prints "compas: MESSAGE" and exits with status 1. Alone a process may make Runtimes one after
  // another.
  Runtime(int& argc, char** argv);
  explicit Runtime(RuntimeOptions options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int process() const;    // this process's rank
  int processes() const;  // processes in the job
  // The job's processes on this process's host, itself included (what shares its memory).
  int processes_here() const;
  int threads() const;  // threads per process
  const RuntimeOptions& options() const;

  comm::Bootstrap& bootstrap();
  comm::Comm& comm();
  comm::ProcessCollectives& collectives();  // P > 1 only (std::logic_error otherwise)
  threads::Team& team();
  const threads::Topology& topology() const;
  perf::Profile& profile();

  // Whether the Runtime pinned OpenMP's threads (options().openmp resolved), and the OS CPUs each
  // of OpenMP's threads 0..T-1 was bound to, as read back on it (empty when not pinned).
  bool openmp_pinned() const;
  const std::vector<std::vector<int>>& openmp_binding() const;

  // Collective over processes: a symmetric window of n elements and `signals` signal words. Made
  // by the thread that made the Runtime, outside run() (std::logic_error otherwise: from every
  // thread of the team it would be T collectives at once).
  template <class T>
  comm::Window<T> window(std::size_t n, std::size_t signals = 0) {
    check_funneled("Runtime::window", "make windows before run(), or between runs");
    return comm::Window<T>(comm(), n, signals);
  }

  // Ends the whole job, like MPI_Abort: prints "compas: process R: MESSAGE" on stderr (one line)
  // and ends every process with exit status `code` (1..255; std::invalid_argument otherwise).
  // From any thread, inside run() too. Under compas-run this process exits with `code` and
  // compas-run ends the others and exits with `code`; under mpirun / srun it calls MPI_Abort; in
  // a job started by hand the others end when they next wait for this process (COMPAS_TIMEOUT at
  // most). stdout and stderr are flushed when no other thread holds them; nothing is unwound.
  // While the Runtime lives, an uncaught exception ends the job the same way with status 1 and
  // its what() as the message (instead of std::terminate's abort and backtrace on every process).
  // A CollectiveError, which every process throws alike, is said by process 0 alone (by a Group's
  // first member when the processes of a Group threw it: CollectiveError::speaker), and a
  // comm::CommError naming a peer by that peer (its own error or abort): the other processes wait
  // up to 5 s for the job to be ended by them, then say theirs.
  [[noreturn]] void abort(int code, std::string_view message);

  // Runs body on every thread of this process's team (the caller is thread 0) and joins.
  void run(const std::function<void(threads::ThreadCtx&)>& body);

  // Collective over processes and funneled (the thread that made the Runtime, outside run();
  // std::logic_error otherwise): every thread's region totals of every process, as
  // profile().samples() gives them for this one, on every process (the job-level view).
  std::vector<perf::RegionSample> job_samples();

  // ---- hybrid collectives: every thread of every process calls them ----
  void barrier(threads::ThreadCtx& t);
  // Deprecated (one release): compas::barrier(rt) (collectives.hpp), the same call.
  [[deprecated("use compas::barrier(rt) (compas/runtime/collectives.hpp)")]] double barrier();

  // Reduction of one value per thread over the whole job, with any associative op (T, T) -> T;
  // the result on every thread (order and bits: see the top of this file).
  template <class T, class Op>
  T allreduce(threads::ThreadCtx& t, const T& value, Op op) {
    static_assert(std::is_trivially_copyable_v<T>, "allreduce needs a trivially copyable T");
    T mine = t.allreduce(value, op);  // team step: same on every thread
    if (processes() == 1) return mine;
    if (t.is_leader()) collectives().allreduce(std::span<T>(&mine, 1), op);
    return t.broadcast(mine, 0);
  }

  // The same reduction without a ThreadCtx, for programs that keep OpenMP (or one thread) and use
  // the Runtime for the processes. Two forms, told apart by where it is called:
  //  - outside any OpenMP parallel region, by one thread of every process (funneled: the one that
  //    made the Runtime; std::logic_error from another): op over the processes' values, combined
  //    in rank order as above;
  //  - inside `#pragma omp parallel`, by EVERY thread of the region: op over all threads of all
  //    processes, in thread order within each process and then over the processes as
  //    allreduce(t, ...) does (the same bits for the same values), on every thread. The regions
  //    may have any thread count.
  // Every process calls the same sequence. The same bits on every thread and process, and in
  // every run with the same processes x threads (see the top of this file). An exception in op
  // or in comm is rethrown on thread 0 of the region; the other threads throw std::runtime_error
  // with its message (an exception must not leave an OpenMP region: catch it inside). Throws
  // std::logic_error inside run() (the team's threads use allreduce(t, ...)) and from a parallel
  // region nested in another active one.
  template <class T, class Op>
  T allreduce(const T& value, Op op) {
    static_assert(std::is_trivially_copyable_v<T>, "allreduce needs a trivially copyable T");
    if (!openmp_region_call()) {
      T v = value;
      if (processes() > 1) collectives().allreduce(std::span<T>(&v, 1), op);
      return v;
    }
    const ErasedOp erased{
        sizeof(T), &op,
        [](void* acc, const void* x, const void* o) {  // acc = op(acc, x): thread 0's op
          T a, b;
          std::memcpy(&a, acc, sizeof(T));
          std::memcpy(&b, x, sizeof(T));
          a = (*const_cast<Op*>(static_cast<const Op*>(o)))(a, b);
          std::memcpy(acc, &a, sizeof(T));
        },
        [](Runtime& rt, void* acc, const void* o) {  // over the processes
          T a;
          std::memcpy(&a, acc, sizeof(T));
          rt.collectives().allreduce(std::span<T>(&a, 1), *static_cast<const Op*>(o));
          std::memcpy(acc, &a, sizeof(T));
        }};
    T out = value;
    openmp_allreduce(&value, &out, erased);
    return out;
  }

  // root_thread of process root_process's value, on every thread.
  template <class T>
  T broadcast(threads::ThreadCtx& t, const T& value, int root_process = 0, int root_thread = 0) {
    static_assert(std::is_trivially_copyable_v<T>, "broadcast needs a trivially copyable T");
    check_root(root_process, root_thread);
    T v = t.broadcast(value, root_thread);
    if (processes() == 1) return v;
    if (t.is_leader()) collectives().broadcast(std::span<T>(&v, 1), root_process);
    return t.broadcast(v, 0);
  }

  // op over the values of all threads before this one in (process, thread) order (combined as
  // the top of this file says); `identity` on thread 0 of process 0. The identity comes before
  // the operator, as in transform_reduce(t, range, identity, op, f).
  template <class T, class Op>
  T exclusive_scan(threads::ThreadCtx& t, const T& value, const std::type_identity_t<T>& identity,
                   Op op) {
    static_assert(std::is_trivially_copyable_v<T>, "exclusive_scan needs a trivially copyable T");
    const T in_team = t.exclusive_scan(value, identity, op);
    if (processes() == 1) return in_team;
    const T team_total = t.allreduce(value, op);
    T before = identity;  // op over the team totals of the processes before this one
    if (t.is_leader()) before = collectives().exclusive_scan(team_total, identity, op);
    before = t.broadcast(before, 0);
    return op(before, in_team);
  }
  // Deprecated (one release): the operator before the identity.
  template <class T, class Op>
  [[deprecated("exclusive_scan(t, value, identity, op): the identity comes first")]] T
  exclusive_scan(threads::ThreadCtx& t, const T& value, Op op, const T& identity) {
    return exclusive_scan(t, value, identity, op);
  }

  // Deprecated (one release): the funneled forms are free functions over Processes
  // (collectives.hpp), checked on every process: compas::exclusive_scan(rt, value, identity, op)
  // and compas::allreduce(rt, in, out, op).
  template <class T, class Op>
  [[deprecated("use compas::exclusive_scan(rt, value, identity, op) (collectives.hpp)")]] T
  exclusive_scan(const T& value, Op op, const T& identity) {
    static_assert(std::is_trivially_copyable_v<T>, "exclusive_scan needs a trivially copyable T");
    check_funneled("Runtime::exclusive_scan(value, op, identity)",
                   "inside run() the team's threads use exclusive_scan(t, value, identity, op)");
    if (processes() == 1) return identity;
    return collectives().exclusive_scan(value, identity, op);
  }
  template <class T, std::size_t N, class Op>
  [[deprecated(
      "use compas::allreduce(rt, in, out, op) (collectives.hpp), checked on every process")]] void
  allreduce(std::span<T, N> in, std::span<T, N> out, Op op) {
    static_assert(std::is_trivially_copyable_v<T>, "allreduce needs a trivially copyable T");
    check_funneled("Runtime::allreduce(in, out, op)",
                   "between runs, from the thread that made the Runtime");
    if (in.size() != out.size())
      throw std::invalid_argument("allreduce: " + std::to_string(in.size()) + " values in, " +
                                  std::to_string(out.size()) + " out: the same length is needed");
    if (out.data() != in.data()) std::copy(in.begin(), in.end(), out.begin());
    if (processes() > 1) collectives().allreduce(std::span<T>(out.data(), out.size()), op);
  }

  // ---- partitioning: over processes first, then over the threads of each ----
  // This process's block of a global index range (the split DistArray and parallel_for use).
  Range part(Range r) const { return block_of(r, processes(), process()); }
  // This process's [lo, hi) of n items: the block split of range.hpp (part({0, n}) as a pair), in
  // compas::index like every index of the porting layer. n < 0: std::invalid_argument naming it.
  std::pair<index, index> process_block(index n) const;
  // This thread's [lo, hi) of n items of the whole job (inside process_block(n)).
  std::pair<index, index> block(const threads::ThreadCtx& t, index n) const;
  // A near-square rows x cols grid of the processes (rows <= cols, rows * cols = P) and this
  // process's (row, col) in it, row-major.
  struct Grid {
    int rows = 1, cols = 1, row = 0, col = 0;
  };
  Grid process_grid() const;

  // ---- loops over index ranges (the porting layer; see range.hpp and dist_array.hpp) ----
  // Inside run(): every thread of the team calls it with the same range (typically the owned
  // part of a DistArray); each runs f(i) (f(i, j) for a Range2, rows split over the threads) for
  // its block, then the team meets, like the barrier that ends `#pragma omp parallel for`.
  template <class R, class F>
  requires std::same_as<R, Range> || std::same_as<R, Range2>
  void parallel_for(threads::ThreadCtx& t, R r, F&& f) {
    for_share(t, r, f);
    t.barrier();
  }
  // Outside run(), from the thread that made the Runtime: the team runs the loop (fork-join).
  template <class R, class F>
  requires std::same_as<R, Range> || std::same_as<R, Range2>
  void parallel_for(R r, F&& f) {
    run([&](threads::ThreadCtx& t) { parallel_for(t, r, f); });
  }

  // Job-wide transform-reduce (std::transform_reduce over the job): every thread of every process
  // calls it with its process's range; returns on every thread op over f(i) for every index of
  // every process's range, combined in (process, thread) order as allreduce(t, ...) does, so the
  // bits are the same on every thread and for every run of a given P x T. `identity` is op's
  // identity (each thread's partial result starts from it: 0 for a sum, -inf for a max). Cost: the
  // loop, then one allreduce(t, ...). (compas::reduce is MPI_Reduce, collectives.hpp.)
  template <class R, class T, class Op, class F>
  requires std::same_as<R, Range> || std::same_as<R, Range2> T
  transform_reduce(threads::ThreadCtx& t, R r, T identity, Op op, F&& f) {
    T acc = identity;
    for_share(t, r, [&](auto... i) { acc = op(acc, f(i...)); });
    return allreduce(t, acc, op);
  }
  // Outside run(): every process calls it (a collective); the team computes, the result is
  // returned to the caller.
  template <class R, class T, class Op, class F>
  requires std::same_as<R, Range> || std::same_as<R, Range2> T transform_reduce(R r, T identity,
                                                                                Op op, F&& f) {
    T out = identity;
    run([&](threads::ThreadCtx& t) {
      const T all = transform_reduce(t, r, identity, op, f);
      if (t.is_leader()) out = all;
    });
    return out;
  }
  // Deprecated (one release): the same calls under the name MPI_Reduce's free function has.
  template <class R, class T, class Op, class F>
  requires std::same_as<R, Range> || std::same_as<R, Range2>
  [[deprecated("use rt.transform_reduce(t, range, identity, op, f)")]] T reduce(
      threads::ThreadCtx& t, R r, T identity, Op op, F&& f) {
    return transform_reduce(t, r, identity, op, std::forward<F>(f));
  }
  template <class R, class T, class Op, class F>
  requires std::same_as<R, Range> || std::same_as<R, Range2>
  [[deprecated("use rt.transform_reduce(range, identity, op, f)")]] T reduce(R r, T identity, Op op,
                                                                             F&& f) {
    return transform_reduce(r, identity, op, std::forward<F>(f));
  }

  // True while run() executes; and whether the calling thread is the one that made the Runtime
  // (the only one allowed to call the funneled forms: DistArray::exchange_halos(), ...).
  bool in_run() const;
  bool on_main_thread() const;
  // Throws std::logic_error naming `call` unless the calling thread is the one that made the
  // Runtime and run() is not active: the funneled calls (making a window or a DistArray,
  // exchange_halos()). `instead` says what to do where the call was refused.
  void check_funneled(const char* call, const char* instead) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<detail::OpenMpThreads> openmp_;  // OpenMP's threads (runtime/src/openmp.cpp)

  void check_root(int root_process, int root_thread) const;

  // This thread's block of r (rows of a Range2), f(i) or f(i, j) for each index of it.
  template <class F>
  static void for_share(const threads::ThreadCtx& t, Range r, F&& f) {
    const Range mine = block_of(r, t.threads(), t.thread());
    for (index i = mine.lo; i < mine.hi; ++i) f(i);
  }
  template <class F>
  static void for_share(const threads::ThreadCtx& t, Range2 r, F&& f) {
    const Range mine = block_of(r.rows, t.threads(), t.thread());
    for (index i = mine.lo; i < mine.hi; ++i)
      for (index j = r.cols.lo; j < r.cols.hi; ++j) f(i, j);
  }

  // allreduce(value, op), type-erased for openmp.cpp: `combine` sets acc = op(acc, x) on values of
  // `size` bytes; `across` reduces acc over the processes (collectives().allreduce with op).
  struct ErasedOp {
    std::size_t size;
    const void* op;
    void (*combine)(void* acc, const void* x, const void* op);
    void (*across)(Runtime& rt, void* acc, const void* op);
  };
  // Which form of allreduce(value, op) the calling thread is in: true inside an active OpenMP
  // parallel region of more than one thread, false outside any. Throws std::logic_error inside
  // run() and in a region nested in another active one.
  bool openmp_region_call() const;
  // Every thread of the region: the core of the in-region form.
  void openmp_allreduce(const void* value, void* result, const ErasedOp& op);
};

}  // namespace compas
