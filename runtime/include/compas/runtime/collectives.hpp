// Process-level collectives: what a program ported from MPI calls instead of MPI_Barrier,
// MPI_Bcast, MPI_Allgather(v), MPI_Alltoall(v), MPI_Gather(v), MPI_Reduce, MPI_Allreduce and
// MPI_Exscan. One spelling each: a free function over Processes (the Runtime or a Group). The
// Runtime's own members are the team forms (every thread calls them with its ThreadCtx) and the
// one-value rt.allreduce(value, op) that also works inside an OpenMP region.
//
//   #include "compas/runtime/collectives.hpp"
//   compas::broadcast(rt, std::span<double>(params), 0);          // MPI_Bcast
//   const auto all = compas::allgatherv(rt, std::span<const int>(mine));  // MPI_Allgatherv
//   // all.data: every process's elements in rank order; all.counts[r], all.offsets[r]: rank r's
//   compas::broadcast(row, std::span<double>(panel), k % row.processes());  // over a Group
//   const long first = compas::exclusive_scan(rt, count, 0L, compas::op::sum{});  // MPI_Exscan
//   const double start = compas::barrier(rt);  // MPI_Barrier, then the time
//
// Free functions taking the processes first (as MPI's calls take a communicator): the Runtime for
// the whole job, or a Group (group.hpp) for its members, in group ranks; not members:
// runtime.hpp stays the Runtime's own interface (threads, hybrid collectives, partitioning), a
// program that does not port MPI calls does not compile them, and their shared checks live in
// runtime/src/collectives.cpp.
//
// Funneled: the thread that made the Runtime calls them, outside Runtime::run and outside OpenMP
// parallel regions, every process the same calls in the same order (std::logic_error otherwise,
// before anything collective; Runtime::check_funneled). Elements are any trivially copyable T.
//
// Arguments are checked on every process alike. Before any data moves, each call gathers a few
// words from every process (which call, the element size and type, the operator, its length, its
// root, the object a method is on, and what is wrong with its own arguments, such as a receive
// span of the wrong size): first one allreduce of 24 bytes (a hash of what must be alike, with
// the type and operator ids; O(log P)), and an allgather of a 208-byte record per process only
// when lengths may differ (allgatherv, alltoallv, gather, migrate) or the allreduce shows that
// something differs; the collective methods of the porting layer's objects (UpdateBatch::flush,
// DistArray's halo exchanges) begin with the same step. Then every process throws the same CollectiveError (a std::invalid_argument) when the
// calls or their objects differ, when the element types or the operators differ (even of one
// size: int and float), when one process's own arguments are wrong (naming it), when a root is
// outside 0..P-1 (naming the value and the range; on a Group, P is its size and processes are
// named by group rank and job rank), when the roots differ or when lengths that
// must agree differ (naming both processes and both values): never a hang, never data from the
// wrong call. With one process nothing is exchanged and the same checks apply.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "compas/runtime/runtime.hpp"

namespace compas {

class Group;  // group.hpp

// The processes a collective of this file runs on: every process of the job (a Runtime) or the
// members of a Group (group.hpp); both convert to it, so every call takes either. Ranks, roots
// and counts are in its numbering: job ranks for a Runtime, group ranks 0..processes()-1 for a
// Group.
class Processes {
 public:
  Processes(Runtime& rt) : rt_(&rt) {}  // the whole job
  Processes(Group& g);                  // its members; std::logic_error when g is in no group

  Runtime& runtime() const { return *rt_; }
  bool whole_job() const { return group_ == nullptr; }  // the Runtime's, not a Group's
  int process() const;    // this process's rank in it (a group rank on a Group)
  int processes() const;  // how many processes it holds
  [[deprecated("use process()")]] int rank() const { return process(); }
  [[deprecated("use processes()")]] int size() const { return processes(); }
  int job_rank(int rank) const;                   // the job rank of member `rank`
  comm::ProcessCollectives& collectives() const;  // processes() > 1 only
  // How messages name a member: "process 3", or "group rank 1 (process 3)".
  std::string name(int rank) const;
  // "job" or "group", and what its ranks are called ("processes", "group ranks").
  const char* scope() const { return group_ ? "group" : "job"; }
  const char* ranks() const { return group_ ? "group ranks" : "processes"; }
  // "" for the job, " on the group of processes {0, 2}" for a group.
  std::string where() const;

 private:
  friend double barrier(Processes ps);
  Runtime* rt_;
  Group* group_ = nullptr;
};

// What allgatherv, alltoallv and gather(span) return: the elements received, `counts[r]` of them
// from rank r stored from `offsets[r]` on (rank order).
template <class T>
struct Gathered {
  std::vector<T> data;
  std::vector<std::size_t> counts, offsets;
};

namespace detail {

enum class CollectiveCall : std::uint32_t {
  broadcast = 2,
  allgather,
  allgatherv,
  alltoall,
  alltoallv,
  gather,
  reduce,
  allreduce,
  migrate,           // migrate.hpp
  update_flush,      // update_batch.hpp: a batch's flush, on the batch
  exscan,            // an exclusive scan (the C API's compas_exscan)
  update_make,       // making a batch, on its table
  halo_exchange,     // DistArray's exchange_halos / begin_exchange, on the array
  halo_accumulate,   // DistArray's accumulate_halos, on the array
  redist_from,       // compas::redistribute (redistribute3.hpp), on the array copied from
  redist_to,         // and on the array copied to
  ghost_update,      // GhostPlan's update (ghost.hpp), on the plan
  ghost_accumulate,  // GhostPlan's accumulate, on the plan
};

// The porting layer's objects whose collectives name them: each kind numbered 1, 2, ... in the
// order this process made its objects (collectively, so the same numbers on every process).
enum class ObjectKind { dist_array, update_batch, ghost_plan };
// The number the next object of `kind` made here takes (`take`: counted; else only looked at).
std::uint64_t object_number(ObjectKind kind, bool take);

// What one process passes to a collective, checked against every other's (runtime/src).
struct CallArgs {
  CollectiveCall call;
  std::size_t elem = 0;      // sizeof(T)
  std::size_t n = 0;         // its length in elements
  int root = -1;             // -1: the call has no root
  bool same_n = false;       // n must be the same on every process
  std::string problem = {};  // what is wrong with this process's own arguments; "" when nothing
  std::uint64_t object = 0;  // the number of the object the call is on (ObjectKind); 0: none
  // The element type and the operator (typeid), compared by base::type_id when given.
  const std::type_info* type = nullptr;
  const std::type_info* op = nullptr;
};
// Checks `mine` against every process's: throws the same CollectiveError everywhere on a
// mismatch; returns every process's n in rank order. First one allreduce of 24 bytes (a hash of
// what must be alike, and whether some process found its own arguments wrong): O(log P), and all
// of it when the lengths must be alike and are; every process's record (an allgather) only when
// the lengths may differ (they are returned) or something differs (the same message everywhere).
std::vector<std::size_t> agree(const Processes& ps, const CallArgs& mine);
// "" when `have` == `need`, else what is wrong ("recv holds 5 elements, 6 are needed").
std::string size_problem(const char* what, std::size_t have, std::size_t need);
// What is wrong with alltoallv's send counts ("" when nothing): P of them, their sum in `send`.
std::string counts_problem(std::span<const std::size_t> counts, std::size_t send_size, int P);
// Rank r's offset: the sum of counts before r.
std::vector<std::size_t> offsets_of(const std::vector<std::size_t>& counts);
// recv_counts[r] = rank r's send_counts[me]: the counts exchanged for alltoallv.
std::vector<std::size_t> exchange_counts(const Processes& ps,
                                         std::span<const std::size_t> send_counts);
inline const char* const kFunneled = "from the thread that made the Runtime, outside run()";
// Throws std::logic_error "CALL on a group: WHY; call it with the Runtime" unless ps is the whole
// job: for the calls that take Processes but cannot run within a group (making a Group or a
// Channel: their windows are made collectively over the whole job). Nothing collective happens
// before it, so members and non-members of the group alike return without waiting.
void require_whole_job(const Processes& ps, const char* call, const char* why);

// compas::op::sum / prod / min / max on an element type comm reduces with a typed loop (one the
// compiler vectorises, combined chunk by chunk as the data arrives), and its comm::Op.
template <class T, class Op>
inline constexpr bool typed_op_v = comm::is_reducible_v<T> &&
                                   (std::is_same_v<Op, op::sum> || std::is_same_v<Op, op::prod> ||
                                    std::is_same_v<Op, op::min> || std::is_same_v<Op, op::max>);
template <class Op>
constexpr comm::Op comm_op(Op op) {
  if constexpr (std::is_same_v<Op, comm::Op>) return op;
  if constexpr (std::is_same_v<Op, op::sum>) return comm::Op::sum;
  if constexpr (std::is_same_v<Op, op::prod>) return comm::Op::prod;
  if constexpr (std::is_same_v<Op, op::min>) return comm::Op::min;
  return comm::Op::max;
}
// op over every process's `data`, the result replacing it everywhere (P > 1): the typed loop for
// typed_op_v, the caller's operator (applied element by element through a pointer) otherwise.
template <class T, class Op>
void allreduce_in_place(const Processes& ps, std::span<T> data, Op op) {
  if constexpr (typed_op_v<T, Op>)
    ps.collectives().allreduce(data, comm_op(op));
  else
    ps.collectives().allreduce(data, op);
}
// At least `bytes` aligned to 64, kept by the calling thread between calls and grown when too
// small: where reduce's processes other than the root combine.
std::byte* reduce_scratch(std::size_t bytes);

// send_counts[r] elements of `send` to rank r, recv_counts[r] from rank r into `recv`.
template <class T>
void exchange(const Processes& ps, std::span<const T> send,
              std::span<const std::size_t> send_counts, std::span<T> recv,
              std::span<const std::size_t> recv_counts) {
  if (ps.processes() == 1) {
    std::copy(send.begin(), send.begin() + static_cast<std::ptrdiff_t>(send_counts[0]),
              recv.begin());
    return;
  }
  ps.collectives().alltoallv(send, send_counts, recv, recv_counts);
}

}  // namespace detail

// `data` of process `root` into `data` of every process (MPI_Bcast); the same length everywhere.
template <class T>
void broadcast(Processes ps, std::span<T> data, int root) {
  static_assert(std::is_trivially_copyable_v<T> && !std::is_const_v<T>,
                "broadcast needs a span of a trivially copyable, non-const T");
  ps.runtime().check_funneled("compas::broadcast", detail::kFunneled);
  detail::agree(
      ps,
      {detail::CollectiveCall::broadcast, sizeof(T), data.size(), root, true, {}, 0, &typeid(T)});
  if (ps.processes() > 1) ps.collectives().broadcast(data, root);
}
// Process root's value, returned on every process.
template <class T>
T broadcast(Processes ps, const T& value, int root) {
  static_assert(std::is_trivially_copyable_v<T>,
                "broadcast needs a trivially copyable T (for arrays, pass a std::span)");
  T v = value;
  broadcast(ps, std::span<T>(&v, 1), root);
  return v;
}

// Every process's `mine` in rank order, on every process (MPI_Allgather): all[r * n + i] is
// element i of rank r; mine has the same length n everywhere and all holds P * n.
template <class T>
void allgather(Processes ps, std::span<const std::type_identity_t<T>> mine, std::span<T> all) {
  static_assert(std::is_trivially_copyable_v<T>, "allgather needs a trivially copyable T");
  ps.runtime().check_funneled("compas::allgather", detail::kFunneled);
  const auto P = static_cast<std::size_t>(ps.processes());
  detail::agree(ps, {detail::CollectiveCall::allgather, sizeof(T), mine.size(), -1, true,
                     detail::size_problem("all", all.size(), P * mine.size()), 0, &typeid(T)});
  if (P == 1)
    std::copy(mine.begin(), mine.end(), all.begin());
  else
    ps.collectives().allgather(std::span<const T>(mine), all);
}
// One value per process, in rank order.
template <class T>
std::vector<T> allgather(Processes ps, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>,
                "allgather needs a trivially copyable T (for arrays, pass std::span)");
  std::vector<T> all(static_cast<std::size_t>(ps.processes()));
  allgather<T>(ps, std::span<const T>(&value, 1), std::span<T>(all));
  return all;
}

// A numbering of every process's `count` items across the job, in rank order: {the first number
// of this process's items (the counts of the processes before it summed: MPI_Exscan), the job's
// total (MPI_Allreduce)}, in one allgather: global serial numbers, offsets into a shared file.
template <class T>
std::pair<T, T> numbering(Processes ps, T count) requires std::is_arithmetic_v<T> {
  const std::vector<T> all = allgather(ps, count);
  T before{}, total{};
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (static_cast<int>(r) == ps.process()) before = total;
    total += all[r];
  }
  return {before, total};
}

// Every process's `mine`, of any length (0 included), in rank order on every process
// (MPI_Allgatherv, with the counts exchanged by the call).
template <class T, std::size_t N>
Gathered<std::remove_const_t<T>> allgatherv(Processes ps, std::span<T, N> mine) {
  using U = std::remove_const_t<T>;
  static_assert(std::is_trivially_copyable_v<U>, "allgatherv needs a trivially copyable T");
  ps.runtime().check_funneled("compas::allgatherv", detail::kFunneled);
  Gathered<U> out;
  out.counts = detail::agree(ps, {detail::CollectiveCall::allgatherv, sizeof(U), mine.size()});
  out.offsets = detail::offsets_of(out.counts);
  out.data.resize(out.offsets.back() + out.counts.back());
  // The same block to every process: alltoallv from P copies of it.
  const std::vector<std::size_t> send_counts(out.counts.size(), mine.size());
  std::vector<U> send;
  send.reserve(mine.size() * out.counts.size());
  for (std::size_t r = 0; r < out.counts.size(); ++r)
    send.insert(send.end(), mine.begin(), mine.end());
  detail::exchange<U>(ps, send, send_counts, out.data, out.counts);
  return out;
}

// Block r of `send` to rank r, block r of `recv` from rank r (MPI_Alltoall): send and recv hold
// P blocks of the same length, the same on every process.
template <class T>
void alltoall(Processes ps, std::span<const std::type_identity_t<T>> send, std::span<T> recv) {
  static_assert(std::is_trivially_copyable_v<T>, "alltoall needs a trivially copyable T");
  ps.runtime().check_funneled("compas::alltoall", detail::kFunneled);
  const auto P = static_cast<std::size_t>(ps.processes());
  std::string problem = send.size() % P != 0
                            ? "send holds " + std::to_string(send.size()) +
                                  " elements, not a multiple of the " + std::to_string(P) +
                                  " processes"
                            : detail::size_problem("recv", recv.size(), send.size());
  detail::agree(ps, {detail::CollectiveCall::alltoall, sizeof(T), send.size() / P, -1, true,
                     std::move(problem), 0, &typeid(T)});
  const std::vector<std::size_t> counts(P, send.size() / P);
  detail::exchange<T>(ps, send, counts, recv, counts);
}

// send_counts[r] elements to rank r, taken from `send` in rank order (MPI_Alltoallv, with the
// receive counts exchanged by the call): P counts, `send` holding at least their sum. Returns
// what came from each rank, in rank order.
template <class T, std::size_t N>
Gathered<std::remove_const_t<T>> alltoallv(Processes ps, std::span<T, N> send,
                                           std::span<const std::size_t> send_counts) {
  using U = std::remove_const_t<T>;
  static_assert(std::is_trivially_copyable_v<U>, "alltoallv needs a trivially copyable T");
  ps.runtime().check_funneled("compas::alltoallv", detail::kFunneled);
  detail::agree(ps, {detail::CollectiveCall::alltoallv, sizeof(U), send.size(), -1, false,
                     detail::counts_problem(send_counts, send.size(), ps.processes())});
  Gathered<U> out;
  out.counts = detail::exchange_counts(ps, send_counts);
  out.offsets = detail::offsets_of(out.counts);
  out.data.resize(out.offsets.back() + out.counts.back());
  detail::exchange<U>(ps, std::span<const U>(send), send_counts, out.data, out.counts);
  return out;
}

// Every process's `mine`, of any length (0 included), in rank order on process `root` (MPI_Gather
// and MPI_Gatherv). On the root, data holds them all; elsewhere data is empty. counts and offsets
// are every process's, on every process.
template <class T, std::size_t N>
Gathered<std::remove_const_t<T>> gather(Processes ps, std::span<T, N> mine, int root) {
  using U = std::remove_const_t<T>;
  static_assert(std::is_trivially_copyable_v<U>, "gather needs a trivially copyable T");
  ps.runtime().check_funneled("compas::gather", detail::kFunneled);
  Gathered<U> out;
  out.counts = detail::agree(ps, {detail::CollectiveCall::gather, sizeof(U), mine.size(), root});
  out.offsets = detail::offsets_of(out.counts);
  const bool at_root = ps.process() == root;
  std::vector<std::size_t> send_counts(out.counts.size(), 0), recv_counts(out.counts.size(), 0);
  send_counts[static_cast<std::size_t>(root)] = mine.size();
  if (at_root) {
    recv_counts = out.counts;
    out.data.resize(out.offsets.back() + out.counts.back());
  }
  detail::exchange<U>(ps, std::span<const U>(mine), send_counts, out.data, recv_counts);
  return out;
}
// One value per process in rank order on process `root`; an empty vector elsewhere.
template <class T>
std::vector<T> gather(Processes ps, const T& value, int root) {
  static_assert(std::is_trivially_copyable_v<T>,
                "gather needs a trivially copyable T (for arrays, pass std::span)");
  return gather(ps, std::span<const T>(&value, 1), root).data;
}

// op element by element over every process's `in`, into `out` of process `root` (MPI_Reduce):
// in and out of the same length, the same on every process; `out` may be `in`. op is a
// comm::Op (sum, min, max, prod on int32/int64/uint32/uint64/float/double) or any associative
// (T, T) -> T (compas::op::sum{}, a lambda). A comm::Op, and compas::op::sum / prod / min / max
// on those six types, go to comm's reduce: a binomial tree whose chunks are combined by a typed
// loop as they arrive, straight into the root's `out` (the operands grouped by the tree). Any
// other operator or type is an allreduce applying the operator element by element through a
// pointer, in rank order: in place in the root's `out`, elsewhere in a buffer kept by the
// calling thread between calls. `out` is left as it was on the other processes.
template <class T, class Op>
void reduce(Processes ps, std::span<const std::type_identity_t<T>> in, std::span<T> out, Op op,
            int root) {
  static_assert(std::is_trivially_copyable_v<T>, "reduce needs a trivially copyable T");
  ps.runtime().check_funneled("compas::reduce", detail::kFunneled);
  detail::agree(ps,
                {detail::CollectiveCall::reduce, sizeof(T), in.size(), root, true,
                 detail::size_problem("out", out.size(), in.size()), 0, &typeid(T), &typeid(Op)});
  if (ps.processes() == 1) {
    if (out.data() != in.data()) std::copy(in.begin(), in.end(), out.begin());
    return;
  }
  if constexpr (detail::typed_op_v<T, Op> || std::is_same_v<Op, comm::Op>) {  // a tree
    ps.collectives().reduce(std::span<const T>(in), out, detail::comm_op(op), root);
    return;
  }
  // Otherwise an allreduce (ceil(log2 P) rounds): in place in the root's `out`, in a buffer kept
  // between calls elsewhere (no allocation once it has grown).
  if (ps.process() == root) {
    if (out.data() != in.data()) std::copy(in.begin(), in.end(), out.begin());
    detail::allreduce_in_place(ps, out, op);
    return;
  }
  if constexpr (alignof(T) > 64) {
    std::vector<T> partial(in.begin(), in.end());
    detail::allreduce_in_place(ps, std::span<T>(partial), op);
  } else {
    T* partial = reinterpret_cast<T*>(detail::reduce_scratch(in.size_bytes()));
    std::copy(in.begin(), in.end(), partial);
    detail::allreduce_in_place(ps, std::span<T>(partial, in.size()), op);
  }
}
// op over every process's value on process `root`; the others get their own value back.
template <class T, class Op>
T reduce(Processes ps, const T& value, Op op, int root) {
  static_assert(std::is_trivially_copyable_v<T>,
                "reduce needs a trivially copyable T (for arrays, pass spans)");
  T out = value;
  reduce<T>(ps, std::span<const T>(&value, 1), std::span<T>(&out, 1), op, root);
  return out;
}

// Returns when every process has called it (MPI_Barrier), with omp_get_wtime() then: a port's
// timer starts there (`start = compas::barrier(rt);` ... `omp_get_wtime() - start`). On the job
// it is the Comm's barrier (two levels when a host holds several processes), on a Group its
// members' dissemination barrier.
double barrier(Processes ps);

// op element by element over every process's `in`, into `out` of every process (MPI_Allreduce):
// in and out of the same length, the same on every process; `out` may be `in`. op as reduce's.
// Checked as the other calls (Runtime::allreduce(in, out, op) is the same without the check).
template <class T, class Op>
void allreduce(Processes ps, std::span<const std::type_identity_t<T>> in, std::span<T> out, Op op) {
  static_assert(std::is_trivially_copyable_v<T>, "allreduce needs a trivially copyable T");
  ps.runtime().check_funneled("compas::allreduce", detail::kFunneled);
  detail::agree(ps,
                {detail::CollectiveCall::allreduce, sizeof(T), in.size(), -1, true,
                 detail::size_problem("out", out.size(), in.size()), 0, &typeid(T), &typeid(Op)});
  if (out.data() != in.data()) std::copy(in.begin(), in.end(), out.begin());
  if (ps.processes() > 1) detail::allreduce_in_place(ps, out, op);
}
// op over every process's value, on every process.
template <class T, class Op>
T allreduce(Processes ps, const T& value, Op op) {
  static_assert(std::is_trivially_copyable_v<T>,
                "allreduce needs a trivially copyable T (for arrays, pass spans)");
  T out = value;
  allreduce<T>(ps, std::span<const T>(&value, 1), std::span<T>(&out, 1), op);
  return out;
}

// op over the `in` of the processes before this one in rank order, element by element, into
// `out` (MPI_Exscan): `identity` on process 0 (its op's identity element, given first as in
// Runtime::transform_reduce). in and out of the same length, the same on every process; `out` may
// be `in`. op is any associative (T, T) -> T (compas::op::sum{}, a lambda), combined in rank order
// in ceil(log2 P) rounds. Checked as the other calls: a different type, operator or length on
// one process is the same CollectiveError everywhere, before `out` is written.
template <class T, class Op>
void exclusive_scan(Processes ps, std::span<const std::type_identity_t<T>> in, std::span<T> out,
                    const std::type_identity_t<T>& identity, Op op) {
  static_assert(std::is_trivially_copyable_v<T>, "exclusive_scan needs a trivially copyable T");
  static_assert(std::is_invocable_r_v<T, Op&, const T&, const T&>,
                "exclusive_scan's op is an associative (T, T) -> T, given after the identity");
  ps.runtime().check_funneled("compas::exclusive_scan", detail::kFunneled);
  detail::agree(ps,
                {detail::CollectiveCall::exscan, sizeof(T), in.size(), -1, true,
                 detail::size_problem("out", out.size(), in.size()), 0, &typeid(T), &typeid(Op)});
  if (ps.processes() > 1 && !in.empty())  // leaves rank 0's out as it was
    ps.collectives().exclusive_scan(std::span<const T>(in), out, op);
  if (ps.process() == 0) std::fill(out.begin(), out.end(), identity);
}
// op over the values of the processes before this one; `identity` on rank 0.
template <class T, class Op>
T exclusive_scan(Processes ps, const T& value, const std::type_identity_t<T>& identity, Op op) {
  static_assert(std::is_trivially_copyable_v<T>,
                "exclusive_scan needs a trivially copyable T (for arrays, pass spans)");
  T out = value;
  exclusive_scan<T>(ps, std::span<const T>(&value, 1), std::span<T>(&out, 1), identity, op);
  return out;
}

}  // namespace compas
