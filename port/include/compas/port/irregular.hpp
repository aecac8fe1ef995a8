// Irregular access to a DistArray by global index: read entries owned by any process (gather),
// add or combine into them (scatter), add and get the old values back (fetch_add), aggregated
// per owner: one message to each peer per call, never one per element. What a port calls instead
// of the MPI_Alltoall(v) of index lists and values a sparse matrix-vector product, a graph code
// or RandomAccess writes by hand (Global Arrays' NGA_Gather / NGA_Scatter_acc).
//
//   compas::DistArray<double> x(rt, n);
//   std::vector<compas::index> cols = ...;         // any global indices, duplicates allowed
//   compas::GatherPlan plan(x, cols);               // once: the index lists go to their owners
//   std::vector<double> xs(cols.size());
//   for (int it = 0; it < iterations; ++it) {
//     plan.gather(xs);                              // xs[k] = x[cols[k]]: only values move
//     ...
//   }
//   plan.scatter_add(contrib);                      // x[cols[k]] += contrib[k] at the owners
//   plan.scatter(bits, [](auto a, auto b) { return a ^ b; });  // any operator
//   plan.fetch_add(incr, old);                      // old[k]: x[cols[k]] before incr[k] was added
//   compas::scatter_indexed(x, idx, bits, op);      // one-shot: a plan made and used once
//   compas::GatherPlan sp(x, col, col);             // a raw column list (duplicates, any order)
//                                                   // rewritten to positions: xs[col[e]]
//
// Inspector / executor: the constructor sorts the indices by owner (the array's block split),
// exchanges the index lists once (the counts with the checks, then the lists) and keeps, on every
// owner, the local positions it serves to each peer. gather() and scatter() then make one alltoallv
// of values; fetch_add() two (the additions out, the old values back). Indices this process owns
// move no message (read and written in place). A 2-D array takes (row, column) pairs. Compiled
// with OpenMP, the copies of 4096 entries or more run on the calling thread's OpenMP team (a block
// of consecutive positions is at most 16,384 entries long, so the team shares a long one). Each
// call first checks that every process calls the same plan and operation with right sizes: an
// allgather of a 184-byte record per process (O(P) bytes per call; nothing is sent at P = 1).
//
// Order. An owner applies what it receives in source rank order, and each source's entries in
// the order of its index list (its own entries at its own rank's turn). So duplicates add up,
// scatter's op is applied as old = op(old, value) in that order, and fetch_add's old[k] is the
// entry's value before this call plus every addition from lower ranks and from earlier positions
// of the same rank.
//
// All calls are collectives, funneled like those of collectives.hpp: the thread that made the
// Runtime, outside run() and outside OpenMP parallel regions, every process the same calls on
// plans made in the same order (std::logic_error from another thread). The plan refers to the
// array (keep it alive and in place; swap(u, v) is fine: the plan reads whatever u holds) and
// reads and writes owned cells only: after a scatter, exchange_halos() refreshes the halos.
//
// Errors, the same on every process, before any data moves: an index outside the array's global
// range on any process (std::out_of_range naming the process, the index, its position and the
// range); arrays of different shapes or element sizes (CollectiveError naming both processes);
// at a call, a span of the wrong length, or processes calling different operations or plans
// (CollectiveError). Each plan and each call first gathers a few words from every process.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "compas/port/dist_array.hpp"
#include "compas/runtime/collectives.hpp"
#include "compas/runtime/range.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas {

namespace detail {

// The array as the plan sees it on this process (untyped): its shape and local storage.
struct IrregularArray {
  int dims = 1;
  Range2 domain{}, owned{};
  index pitch = 0;  // elements from one local row to the next (2-D)
  std::size_t elem = 0;
  ProcessGrid grid{1, 1};     // DistArray::process_grid(): where every other part is
  std::vector<index> starts;  // 1-D on a user's Partition: its split points; empty: block split
};

// Who asks whom for what, for any element type (port/src/irregular_plan.cpp).
struct IrregularPlan {
  std::size_t n = 0;     // length of the index list (out, values)
  std::uint64_t id = 0;  // which plan: every process makes its plans in the same order
  std::size_t me = 0;    // this process's rank
  std::vector<std::size_t> ask_counts;       // per rank: how many of my indices it owns (0 for me)
  std::vector<std::size_t> remote_k;         // by owner: the position k of each of them
  std::vector<std::size_t> serve_counts;     // per rank: how many of its indices I own (0 for me)
  std::vector<std::size_t> serve;            // grouped by rank: each one's local offset here
  std::vector<std::size_t> self_k, self_at;  // indices I own: position k, local offset
  // The copies of gather() as blocks, where positions run on consecutively on both sides (a
  // sorted index list): dst[i] = src[i] for i in [0, len) from (dst, src). Empty when blocks
  // would not make the list 4 times shorter: then element by element.
  struct Run {
    std::size_t dst = 0, src = 0, len = 0;
  };
  std::vector<Run> serve_runs;   // value buffer <- local (serve)
  std::vector<Run> remote_runs;  // out <- value buffer (remote_k)
  std::vector<Run> self_runs;    // out <- local (self_k, self_at)
};

// dst[d(i)] = src[s(i)] for i < n, by the blocks of `runs` when there are any (`back`: the
// runs' dst and src swapped).
// Compiled with OpenMP (the program's own flag: this is a header), copies of 4096 elements or more
// run on the calling thread's OpenMP team (the plan's calls are made outside parallel regions;
// every destination is written once).
template <class T, class D, class S>
void move(const std::vector<IrregularPlan::Run>& runs, bool back, std::size_t n, T* dst,
          const T* src, D d, S s) {
  [[maybe_unused]] const bool team = n >= 4096;
  if (runs.empty()) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (team)
#endif
    for (std::size_t i = 0; i < n; ++i) dst[d(i)] = src[s(i)];
    return;
  }
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic) if (team && runs.size() > 1)
#endif
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const auto& r = runs[k];
    std::memcpy(dst + (back ? r.src : r.dst), src + (back ? r.dst : r.src), r.len * sizeof(T));
  }
}

// positions[e] = the position of indices[e] in `list` (sorted, holding it); the two spans may be
// one (rewritten in place). On the OpenMP team as move().
template <class Key>
void to_positions(std::span<const Key> indices, const std::vector<Key>& list,
                  std::span<index> positions) {
  const std::size_t n = indices.size();
  [[maybe_unused]] const bool team = n >= 4096;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (team)
#endif
  for (std::size_t e = 0; e < n; ++e)
    positions[e] = std::lower_bound(list.begin(), list.end(), indices[e]) - list.begin();
}

// The distinct entries of `indices`, sorted.
template <class Key>
std::vector<Key> distinct_sorted(std::span<const Key> indices) {
  std::vector<Key> list(indices.begin(), indices.end());
  std::sort(list.begin(), list.end());
  list.erase(std::unique(list.begin(), list.end()), list.end());
  return list;
}

// Checks the indices and the array against every process's, then builds the plan (collective).
// `problem`: what is wrong with this process's other arguments ("" when nothing), refused alike.
IrregularPlan make_plan(Runtime& rt, const IrregularArray& a,
                        std::span<const std::array<index, 2>> keys, const std::string& problem);
// make_plan's first half, one round: the same checks (and `problem`, what else is wrong with this
// process's arguments; `what`, which call: a plan or a one-shot scatter of `a.elem` bytes), the
// keys sorted by owner, the counts exchanged (plan.ask_counts, plan.serve_counts); `asked`: the
// keys for other processes, by owner. The plan's serve offsets are left empty.
struct Routed {
  IrregularPlan plan;
  std::vector<std::array<index, 2>> asked;
};
enum class RouteFor : std::int64_t { plan = 1, scatter };
Routed route(Runtime& rt, const IrregularArray& a, std::span<const std::array<index, 2>> keys,
             RouteFor what, const std::string& problem);
// The element offset of `key` from this process's first owned element.
inline std::size_t local_offset(const IrregularArray& a, const std::array<index, 2>& key) {
  return static_cast<std::size_t>((key[0] - a.owned.rows.lo) * a.pitch +
                                  (key[1] - a.owned.cols.lo));
}

enum class IrregularCall : std::uint32_t { gather = 1, scatter, fetch_add };
// Every process makes the same call on the same plan with spans of the plan's length: checked
// alike everywhere (CollectiveError), before any data moves.
// `problem`: what is wrong with this process's own arguments ("" when nothing).
void agree_call(Runtime& rt, const IrregularPlan& plan, IrregularCall call, std::size_t elem,
                const std::string& problem);

template <class T>
IrregularArray irregular_array(const DistArray<T, 1>& u) {
  IrregularArray a{1, {{0, 1}, u.domain()}, {{0, 1}, u.owned()}, 0, sizeof(T), u.process_grid(),
                   {}};
  if (!u.partition().is_block())
    a.starts.assign(u.partition().starts().begin(), u.partition().starts().end());
  return a;
}
template <class T>
IrregularArray irregular_array(const DistArray<T, 2>& u) {
  return {2, u.domain(), u.owned(), u.pitch(), sizeof(T), u.process_grid(), {}};
}
template <class T>
T* local_base(DistArray<T, 1>& u) {
  return u.local().data();
}
template <class T>
T* local_base(DistArray<T, 2>& u) {
  return u.local().data;
}
std::vector<std::array<index, 2>> keys_of(std::span<const index> indices);

}  // namespace detail

template <class T, int Dims = 1>
class GatherPlan {
  static_assert(std::is_trivially_copyable_v<T>, "GatherPlan needs a trivially copyable T");

 public:
  // A global index (1-D) or a (row, column) pair (2-D).
  using Key = std::conditional_t<Dims == 1, index, std::array<index, 2>>;

  // Collective: `indices` may differ in length (0 included) and content on every process.
  GatherPlan(DistArray<T, Dims>& u, std::span<const Key> indices)
      : u_(&u), rt_(&u.runtime()), plan_(make(u, indices)) {}

  // Collective: the plan of the distinct entries of `indices` (any order, duplicates), sorted,
  // and positions[e] = the position of indices[e] among them, so that after gather(xs), xs has
  // size() elements and xs[positions[e]] is u[indices[e]]. `positions` has indices.size()
  // elements and may be `indices` itself (1-D: the index list rewritten in place, as a sparse
  // product reads xs[col[e]]); written only once the plan is made (nothing on an error).
  GatherPlan(DistArray<T, Dims>& u, std::span<const Key> indices, std::span<index> positions)
      : GatherPlan(u, indices, positions, detail::distinct_sorted(indices)) {}

  std::size_t size() const { return plan_.n; }

  // out[k] = u[indices[k]], whoever owns it; out has size() elements.
  void gather(std::span<T> out) {
    detail::agree_call(*rt_, plan_, detail::IrregularCall::gather, sizeof(T),
                       detail::size_problem("out", out.size(), plan_.n));
    const T* local = detail::local_base(*u_);
    serve_.resize(plan_.serve.size());
    pack_served(local);
    ask_.resize(plan_.remote_k.size());
    detail::exchange<T>(*rt_, serve_, plan_.serve_counts, ask_, plan_.ask_counts);
    unpack_asked(out);
    detail::move(
        plan_.self_runs, false, plan_.self_k.size(), out.data(), local,
        [&](std::size_t s) { return plan_.self_k[s]; },
        [&](std::size_t s) { return plan_.self_at[s]; });
  }

  // u[indices[k]] = op(u[indices[k]], values[k]) at the owners, in the order at the top.
  template <class Op>
  void scatter(std::span<const T> values, Op op) {
    send_values(values, detail::IrregularCall::scatter, "");
    apply(values, [&](T& cell, const T& v, std::size_t, std::size_t) { cell = op(cell, v); });
  }
  // u[indices[k]] += values[k] at the owners; duplicates add up.
  void scatter_add(std::span<const T> values) requires std::is_arithmetic_v<T> {
    scatter(values, [](T a, T b) { return static_cast<T>(a + b); });
  }
  // scatter_add, and old_out[k] = the entry's value just before values[k] was added there.
  void fetch_add(std::span<const T> values, std::span<T> old_out) requires std::is_arithmetic_v<T> {
    send_values(values, detail::IrregularCall::fetch_add,
                detail::size_problem("old_out", old_out.size(), plan_.n));
    old_.resize(serve_.size());
    apply(values, [&](T& cell, const T& v, std::size_t k, std::size_t m) {
      (k != kRemote ? old_out[k] : old_[m]) = cell;
      cell = static_cast<T>(cell + v);
    });
    detail::exchange<T>(*rt_, old_, plan_.serve_counts, ask_, plan_.ask_counts);
    unpack_asked(old_out);
  }

 private:
  static constexpr std::size_t kRemote = static_cast<std::size_t>(-1);
  static std::size_t identity(std::size_t i) { return i; }

  // serve_[m] = the local entry asked as m-th; out[k] = ask_[m] for the m-th remote entry.
  void pack_served(const T* local) {
    detail::move(plan_.serve_runs, false, serve_.size(), serve_.data(), local, identity,
                 [&](std::size_t m) { return plan_.serve[m]; });
  }
  void unpack_asked(std::span<T> out) {
    detail::move(
        plan_.remote_runs, false, ask_.size(), out.data(), ask_.data(),
        [&](std::size_t m) { return plan_.remote_k[m]; }, identity);
  }

  GatherPlan(DistArray<T, Dims>& u, std::span<const Key> indices, std::span<index> positions,
             const std::vector<Key>& list)
      : u_(&u),
        rt_(&u.runtime()),
        plan_(make(u, list, detail::size_problem("positions", positions.size(), indices.size()))) {
    detail::to_positions(indices, list, positions);
  }

  static detail::IrregularPlan make(DistArray<T, Dims>& u, std::span<const Key> indices,
                                    const std::string& problem = "") {
    if constexpr (Dims == 1)
      return detail::make_plan(u.runtime(), detail::irregular_array(u), detail::keys_of(indices),
                               problem);
    else
      return detail::make_plan(u.runtime(), detail::irregular_array(u), indices, problem);
  }
  // Agrees on the call, then sends each owner its values (into serve_ at the owners).
  void send_values(std::span<const T> values, detail::IrregularCall call, std::string problem) {
    if (const std::string own = detail::size_problem("values", values.size(), plan_.n);
        !own.empty())
      problem = own;
    detail::agree_call(*rt_, plan_, call, sizeof(T), problem);
    ask_.resize(plan_.remote_k.size());
    detail::move(plan_.remote_runs, true, ask_.size(), ask_.data(), values.data(), identity,
                 [&](std::size_t m) { return plan_.remote_k[m]; });
    serve_.resize(plan_.serve.size());
    detail::exchange<T>(*rt_, ask_, plan_.ask_counts, serve_, plan_.serve_counts);
  }
  // f(cell, value, k, m) over every entry this process owns, in source rank order: its own
  // (k: the position in its list, m unused) at its rank's turn, a peer's (k = kRemote, m: the
  // position in serve_) at the peer's.
  template <class F>
  void apply(std::span<const T> values, F f) {
    T* local = detail::local_base(*u_);
    std::size_t m = 0;
    for (std::size_t r = 0; r < plan_.serve_counts.size(); ++r) {
      if (r == plan_.me)
        for (std::size_t s = 0; s < plan_.self_k.size(); ++s)
          f(local[plan_.self_at[s]], values[plan_.self_k[s]], plan_.self_k[s], 0);
      for (const std::size_t end = m + plan_.serve_counts[r]; m < end; ++m)
        f(local[plan_.serve[m]], serve_[m], kRemote, m);
    }
  }

  DistArray<T, Dims>* u_;
  Runtime* rt_;
  detail::IrregularPlan plan_;
  // Values in this process's list by owner, values it serves by asker, fetch_add's old values.
  std::vector<T> ask_, serve_, old_;
};

template <class T>
GatherPlan(DistArray<T, 1>&, std::span<const index>) -> GatherPlan<T, 1>;
template <class T>
GatherPlan(DistArray<T, 1>&, const std::vector<index>&) -> GatherPlan<T, 1>;
template <class T>
GatherPlan(DistArray<T, 1>&, std::span<index>, std::span<index>) -> GatherPlan<T, 1>;
template <class T>
GatherPlan(DistArray<T, 1>&, std::vector<index>&, std::vector<index>&) -> GatherPlan<T, 1>;
template <class T>
GatherPlan(DistArray<T, 2>&, std::span<const std::array<index, 2>>) -> GatherPlan<T, 2>;
template <class T>
GatherPlan(DistArray<T, 2>&, const std::vector<std::array<index, 2>>&) -> GatherPlan<T, 2>;

// One-shot forms: a plan made and used once (collective, as the plan's calls). Named _indexed,
// as Global Arrays' NGA_Gather / NGA_Scatter: compas::gather is MPI_Gather (collectives.hpp).
template <class T, int Dims>
void gather_indexed(DistArray<T, Dims>& u,
                    std::span<const typename GatherPlan<T, Dims>::Key> indices,
                    std::span<std::type_identity_t<T>> out) {
  GatherPlan<T, Dims>(u, indices).gather(out);
}
template <class T, int Dims>
void scatter_add_indexed(
    DistArray<T, Dims>& u, std::span<const typename GatherPlan<T, Dims>::Key> indices,
    std::span<const std::type_identity_t<T>> values) requires std::is_arithmetic_v<T> {
  GatherPlan<T, Dims>(u, indices).scatter_add(values);
}
// u[indices[k]] = op(u[indices[k]], values[k]) without a plan: each index travels with its value
// (two rounds: the agreement with the counts, the pairs), in the order GatherPlan::scatter applies
// them. For index lists used once (RandomAccess); a list used again is cheaper as a plan.
template <class T, int Dims, class Op>
void scatter_indexed(DistArray<T, Dims>& u,
                     std::span<const typename GatherPlan<T, Dims>::Key> indices,
                     std::span<const std::type_identity_t<T>> values, Op op) {
  static_assert(std::is_trivially_copyable_v<T>, "scatter_indexed needs a trivially copyable T");
  const detail::IrregularArray a = detail::irregular_array(u);
  std::vector<std::array<index, 2>> keys;
  std::span<const std::array<index, 2>> ks;
  if constexpr (Dims == 1) {
    keys = detail::keys_of(indices);
    ks = keys;
  } else {
    ks = indices;
  }
  detail::Routed r = detail::route(u.runtime(), a, ks, detail::RouteFor::scatter,
                                   detail::size_problem("values", values.size(), ks.size()));
  struct Item {
    std::array<index, 2> key;
    T value;
  };
  std::vector<Item> items(r.asked.size());
  for (std::size_t m = 0; m < items.size(); ++m)
    items[m] = {r.asked[m], values[r.plan.remote_k[m]]};
  // route() exchanged the counts: one round for the pairs.
  Gathered<Item> got;
  got.counts = r.plan.serve_counts;
  got.data.resize(detail::offsets_of(got.counts).back() + got.counts.back());
  detail::exchange<Item>(u.runtime(), items, r.plan.ask_counts, got.data, got.counts);
  T* local = detail::local_base(u);
  std::size_t m = 0;
  for (std::size_t src = 0; src < got.counts.size(); ++src) {
    if (src == r.plan.me)
      for (std::size_t s = 0; s < r.plan.self_k.size(); ++s)
        local[r.plan.self_at[s]] = op(local[r.plan.self_at[s]], values[r.plan.self_k[s]]);
    for (const std::size_t end = m + got.counts[src]; m < end; ++m) {
      T& cell = local[detail::local_offset(a, got.data[m].key)];
      cell = op(cell, got.data[m].value);
    }
  }
}

// Deprecated (one release): the one-shot irregular forms are the _indexed ones (compas::gather
// is MPI_Gather).
template <class T, int Dims>
[[deprecated("use compas::gather_indexed(u, indices, out)")]] void gather(
    DistArray<T, Dims>& u, std::span<const typename GatherPlan<T, Dims>::Key> indices,
    std::span<std::type_identity_t<T>> out) {
  gather_indexed(u, indices, out);
}
template <class T, int Dims>
[[deprecated("use compas::scatter_add_indexed(u, indices, values)")]] void scatter_add(
    DistArray<T, Dims>& u, std::span<const typename GatherPlan<T, Dims>::Key> indices,
    std::span<const std::type_identity_t<T>> values) requires std::is_arithmetic_v<T> {
  scatter_add_indexed(u, indices, values);
}
template <class T, int Dims, class Op>
[[deprecated("use compas::scatter_indexed(u, indices, values, op)")]] void scatter(
    DistArray<T, Dims>& u, std::span<const typename GatherPlan<T, Dims>::Key> indices,
    std::span<const std::type_identity_t<T>> values, Op op) {
  scatter_indexed(u, indices, values, op);
}

}  // namespace compas
