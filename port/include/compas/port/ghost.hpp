// Ghosted vectors for irregular codes (PETSc's VecGhost, a mini-app's "externals"): a vector of
// one Partition (partition.hpp) stored as [owned | ghosts], the ghosts copies of entries at any
// global indices, refreshed by one call that moves only other processes' entries.
//
//   auto d = compas::Partition::from_local(rt, n_local);        // rows this process owns
//   auto plan = compas::GhostPlan::for_columns(d, csr_col);     // col rewritten to local positions
//   compas::GhostedVector<double> p(plan), q(plan);             // [owned | ghosts] each
//   for (...) {
//     p.update_ghosts();                                         // owners' entries -> ghosts
//     for (row i) for (e) y[i] += val[e] * p[col[e]];            // local positions, no lookups
//   }
//
// GhostPlan(d, ghosts): the ghosts are the global indices of `ghosts` (std::int32_t or
// std::int64_t, any order), ghost k stored at local position owned_size() + k. Duplicates are
// separate ghosts (each filled; each travels), an index this process owns is a ghost too (filled
// by a local copy). for_columns(d, cols) makes the plan of a CSR's column list instead: the
// distinct off-process columns, sorted (so grouped by owner), and rewrites `cols` in place to
// local positions (owned column c -> c - owned().lo, off-process -> owned_size() + its place).
//
// One plan serves every vector of its partition: GhostedVector<T>(plan) of any T, a program's own
// [owned | ghosts] storage (update(span)), or a DistArray<T> of the partition with a ghost buffer
// (update(u, ghosts)).
//
// Costs (P processes, g remote ghosts here, s entries this process serves to others):
//  - making a plan: linear in the list (an owned index is a range check, another an O(log P)
//    owner lookup; for_columns hashes the off-process columns only and sorts the distinct ones:
//    O(nnz + g log g)); memory O(g + s + P), not O(list); two alltoallv rounds among the
//    processes (a 168-byte record per pair with the counts, offsets and checks, then the index
//    lists).
//  - update_ghosts(): one agreement (an allreduce of 24 bytes), then one message per process
//    that owns some of this process's ghosts (packed, one put into its staging area), g + s
//    element copies; on first use with an element size, a staging window of the g arriving
//    elements (collective) and a pack buffer of s. accumulate_ghosts() the same in reverse,
//    adding (s additions at the owner, in source rank order: the same bits every run; its
//    window holds the s arriving entries). At P = 1 nothing is agreed or sent: an update copies
//    the ghosts that are own indices, none for for_columns (it costs nothing).
//
// A GhostedVector refers to its plan: keep the plan alive and in place while its vectors are used.
// Destroying a plan that has made calls is collective (its staging windows meet every process).
//
// Calls are collectives, funneled (the thread that made the Runtime, outside run() and outside
// OpenMP parallel regions; copies of 4096 entries or more run on its OpenMP team when compiled
// with OpenMP). Errors, the same on every process before any data moves: an index outside the
// partition's domain on any process (std::out_of_range naming the process, index, position and
// domain), plans made on different partitions (CollectiveError naming both), int32 local
// positions that overflow (for_columns), and at a call: a vector of another length or another
// partition, or processes calling different plans or operations (CollectiveError).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "compas/port/dist_array.hpp"
#include "compas/port/partition.hpp"

namespace compas {

namespace detail {

// One direction of a plan: what this process packs, to whom, and where what it receives goes.
// Forward: owned entries (offsets from the first owned) to the ghosts' processes, arriving into
// ghosts (ghost numbers); reverse: ghosts to their owners, added into owned entries.
struct GhostRoute {
  std::vector<std::size_t> pack;  // what is packed, grouped by destination in rank order
  std::vector<int> to;            // destinations, each with its count and its offset there
  std::vector<std::size_t> to_count, to_at;
  std::vector<std::size_t> unpack;  // where each arriving entry goes, by source rank
  std::size_t below = 0;            // arriving entries from ranks below this one
  std::size_t sources = 0;          // processes that send here
};

enum class GhostCall : int { update = 0, accumulate = 1 };

// The untyped machinery (port/src/ghost_plan.cpp).
class GhostCore {
 public:
  GhostCore(const Partition& d, std::span<const std::int32_t> ghosts, const std::string& problem);
  GhostCore(const Partition& d, std::span<const std::int64_t> ghosts, const std::string& problem);
  ~GhostCore();
  GhostCore(const GhostCore&) = delete;
  GhostCore& operator=(const GhostCore&) = delete;

  // The call agreed across the job (nothing at P = 1 but the local check): CollectiveError.
  void agree(GhostCall call, std::size_t elem, const std::type_info& type,
             const std::string& problem);
  // Every block packed in pack_buffer() put to its destination, and every arriving one waited
  // for: returns where they arrived (by source rank, as the route's unpack).
  const std::byte* transfer(GhostCall call, std::size_t elem);
  std::byte* pack_buffer(std::size_t bytes);  // at least `bytes`, kept between calls

  Partition parts;
  index owned_n = 0, ghost_n = 0;
  std::uint64_t number = 0;                         // GhostPlan #number
  GhostRoute route[2];                              // by GhostCall
  std::vector<std::size_t> self_ghost, self_owned;  // ghosts this process owns: ghost, offset

 private:
  explicit GhostCore(const Partition& d);  // the members both constructors set
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string ghost_size_problem(std::size_t have, index owned, index ghosts);

// dst[d(i)] = f(dst[d(i)], src[s(i)]) for i < n, on the OpenMP team when n >= 4096 (unless
// `ordered`: additions keep their order).
// A short or ordered copy is a plain loop: no parallel region is opened for it.
template <class T, class D, class S, class F>
void ghost_copy(std::size_t n, T* dst, const T* src, D d, S s, F f, bool ordered = false) {
  if (n < 4096 || ordered) {
    for (std::size_t i = 0; i < n; ++i) dst[d(i)] = f(dst[d(i)], src[s(i)]);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (std::size_t i = 0; i < n; ++i) dst[d(i)] = f(dst[d(i)], src[s(i)]);
}

// The CSR renumbering of GhostPlan::for_columns (port/src/ghost_columns.cpp): the distinct
// off-process columns, sorted, and the first column outside the domain (pos = -1: none).
template <class I>
struct Columns {
  std::vector<I> ghosts;
  index bad_pos = -1, bad = 0;
};
template <class I>
Columns<I> distinct_off_process(const Partition& d, std::span<const I> cols);
template <class I>
void renumber(const Partition& d, std::span<I> cols, const std::vector<I>& ghosts);
// The parts' findings as one: every part's ghosts, distinct and sorted; the first bad column of
// the first part that has one (its position counted from part k's start, starts[k]).
template <class I>
Columns<I> merge_columns(std::vector<Columns<I>>& parts, const std::vector<std::size_t>& starts);

// Where part k of `parts` equal parts of n columns starts (k = parts: n).
inline std::size_t column_part(std::size_t n, int parts, int k) {
  return n / static_cast<std::size_t>(parts) * static_cast<std::size_t>(k) +
         std::min(n % static_cast<std::size_t>(parts), static_cast<std::size_t>(k));
}
// How many parts the calling thread's OpenMP team splits a column list of n into (1 without
// OpenMP or under 64 Ki columns).
int column_parts(std::size_t n);

// f(k, cols[part k]) for each of the `parts` equal parts of cols, one per thread of the calling
// thread's OpenMP team.
template <class I, class F>
void for_each_column_part(std::span<I> cols, int parts, F f) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(parts)
#endif
  for (int k = 0; k < parts; ++k) {
    const std::size_t lo = column_part(cols.size(), parts, k);
    f(k, cols.subspan(lo, column_part(cols.size(), parts, k + 1) - lo));
  }
}

// distinct_off_process and renumber over the calling thread's OpenMP team, one part each.
template <class I>
Columns<I> distinct_off_process_team(const Partition& d, std::span<const I> cols) {
  const int parts = column_parts(cols.size());
  if (parts == 1) return distinct_off_process(d, cols);
  std::vector<Columns<I>> found(static_cast<std::size_t>(parts));
  std::vector<std::size_t> starts(static_cast<std::size_t>(parts) + 1);
  for (int k = 0; k <= parts; ++k) starts[k] = column_part(cols.size(), parts, k);
  for_each_column_part(cols, parts, [&](int k, std::span<const I> part) {
    found[static_cast<std::size_t>(k)] = distinct_off_process(d, part);
  });
  return merge_columns(found, starts);
}
template <class I>
void renumber_team(const Partition& d, std::span<I> cols, const std::vector<I>& ghosts) {
  if (ghosts.empty() && d.owned().lo == 0) return;  // every column is its own position
  const int parts = column_parts(cols.size());
  if (parts == 1) return renumber(d, cols, ghosts);
  for_each_column_part(cols, parts, [&](int, std::span<I> part) { renumber(d, part, ghosts); });
}

}  // namespace detail

class GhostPlan {
 public:
  // Collective: the ghosts of this process, any global indices of d's domain (above).
  template <class I>
  requires(std::is_same_v<I, std::int32_t> || std::is_same_v<I, std::int64_t>)
      GhostPlan(const Partition& d, std::span<const I> ghosts)
      : core_(std::make_unique<detail::GhostCore>(d, ghosts, "")) {}
  GhostPlan(const Partition& d, const std::vector<std::int32_t>& g)
      : GhostPlan(d, std::span<const std::int32_t>(g)) {}
  GhostPlan(const Partition& d, const std::vector<std::int64_t>& g)
      : GhostPlan(d, std::span<const std::int64_t>(g)) {}

  // Collective: the plan of a CSR's global column list (its off-process columns, distinct and
  // sorted), `cols` rewritten in place to local positions once the plan is made (unchanged on an
  // error). Linear in cols when most columns are owned; the two passes over cols (find the
  // off-process columns, rewrite) split over the calling thread's OpenMP team from 64 Ki columns
  // on; an owned column at owned().lo == 0 (one process, or process 0) is left unwritten, and
  // with no ghosts there too (one process) the second pass is not made.
  template <class I>
  requires(std::is_same_v<I, std::int32_t> || std::is_same_v<I, std::int64_t>) static GhostPlan
      for_columns(const Partition& d, std::span<I> cols) {
    detail::Columns<I> c = detail::distinct_off_process_team(d, std::span<const I>(cols));
    std::string problem;
    if (c.bad_pos >= 0)
      problem = "column " + std::to_string(c.bad) + " at position " + std::to_string(c.bad_pos) +
                " is outside the domain [" + std::to_string(d.domain().lo) + ", " +
                std::to_string(d.domain().hi) + ")";
    else if (std::is_same_v<I, std::int32_t> &&
             d.owned().size() + static_cast<index>(c.ghosts.size()) > INT32_MAX)
      problem = std::to_string(d.owned().size()) + " owned entries and " +
                std::to_string(c.ghosts.size()) +
                " ghosts do not fit 32-bit local positions: pass 64-bit columns";
    GhostPlan plan(d, std::span<const I>(c.ghosts), problem);
    detail::renumber_team(d, cols, c.ghosts);
    return plan;
  }
  template <class I>
  static GhostPlan for_columns(const Partition& d, std::vector<I>& cols) {
    return for_columns(d, std::span<I>(cols));
  }
  // As GhostPlan(d, ghosts), `problem` saying what else is wrong with this process's arguments
  // ("" when nothing): refused alike on every process (for wrappers: the C API).
  template <class I>
  GhostPlan(const Partition& d, std::span<const I> ghosts, const std::string& problem)
      : core_(std::make_unique<detail::GhostCore>(d, ghosts, problem)) {}

  const Partition& partition() const { return core_->parts; }
  Range owned() const { return core_->parts.owned(); }  // global indices of positions 0..
  index owned_size() const { return core_->owned_n; }
  index ghost_count() const { return core_->ghost_n; }
  index local_size() const { return core_->owned_n + core_->ghost_n; }
  std::uint64_t number() const { return core_->number; }  // "GhostPlan #n" in errors

  // Collective: v = [owned | ghosts] of local_size(); every ghost gets its owner's entry.
  template <class T>
  void update(std::span<T> v) {
    const std::string problem = detail::ghost_size_problem(v.size(), owned_size(), ghost_count());
    exchange(detail::GhostCall::update, v.data(), v.data() + owned_size(), problem);
  }
  // Collective: the ghosts of a DistArray<T> of this partition into `ghosts` (ghost_count()).
  template <class T>
  void update(DistArray<T>& u, std::span<T> ghosts) {
    std::string problem;
    if (!(u.partition() == partition()))
      problem = "the DistArray's partition is not the plan's";
    else if (static_cast<index>(ghosts.size()) != ghost_count())
      problem = "ghosts holds " + std::to_string(ghosts.size()) + " elements, " +
                std::to_string(ghost_count()) + " are needed";
    exchange(detail::GhostCall::update, u.local().data(), ghosts.data(), problem);
  }
  // Collective, the reverse: every ghost's value added (+=) into its owner's entry, in source
  // rank order (duplicates and own indices included); ghosts keep their values.
  template <class T>
  requires std::is_arithmetic_v<T>
  void accumulate(std::span<T> v) {
    const std::string problem = detail::ghost_size_problem(v.size(), owned_size(), ghost_count());
    exchange(detail::GhostCall::accumulate, v.data(), v.data() + owned_size(), problem);
  }

 private:
  // Forward: ghosts <- owners' entries; reverse: owners' entries += ghosts. `own` and `gh` are
  // this process's owned entries and ghosts.
  template <class T>
  void exchange(detail::GhostCall call, T* own, T* gh, const std::string& problem) {
    static_assert(std::is_trivially_copyable_v<T>, "a ghosted vector needs trivially copyable T");
    detail::GhostCore& c = *core_;
    c.agree(call, sizeof(T), typeid(T), problem);
    const bool fwd = call == detail::GhostCall::update;
    const detail::GhostRoute& r = c.route[static_cast<int>(call)];
    const auto same = [](std::size_t i) { return i; };
    const auto put = [](T, T b) { return b; };
    const auto ghost = [&](std::size_t i) { return c.self_ghost[i]; };
    const auto owner = [&](std::size_t i) { return c.self_owned[i]; };
    const auto pos = [](const std::vector<std::size_t>& p) {
      return [&p](std::size_t i) { return p[i]; };
    };
    if (fwd) detail::ghost_copy(c.self_ghost.size(), gh, own, ghost, owner, put);
    if (c.parts.parts() == 1 && fwd) return;
    if (c.parts.parts() == 1) return add_self(own, gh);
    T* buf = reinterpret_cast<T*>(c.pack_buffer(r.pack.size() * sizeof(T)));
    detail::ghost_copy(r.pack.size(), buf, fwd ? own : gh, same, pos(r.pack), put);
    const T* in = reinterpret_cast<const T*>(c.transfer(call, sizeof(T)));
    if (fwd) return detail::ghost_copy(r.unpack.size(), gh, in, pos(r.unpack), same, put);
    // Owners add in source rank order: the lower ranks' ghosts, this process's own, the rest.
    for (std::size_t m = 0; m < r.below; ++m) own[r.unpack[m]] += in[m];
    add_self(own, gh);
    for (std::size_t m = r.below; m < r.unpack.size(); ++m) own[r.unpack[m]] += in[m];
  }
  template <class T>
  void add_self(T* own, const T* gh) {
    const detail::GhostCore& c = *core_;
    if constexpr (std::is_arithmetic_v<T>)
      for (std::size_t i = 0; i < c.self_ghost.size(); ++i)
        own[c.self_owned[i]] += gh[c.self_ghost[i]];
  }

  std::unique_ptr<detail::GhostCore> core_;
};

namespace detail {

// An allocator whose elements are default-initialized (a double is left unwritten), so that a
// GhostedVector's constructor writes each entry once, on the team.
template <class T>
struct UnfilledAllocator : std::allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = UnfilledAllocator<U>;
  };
  UnfilledAllocator() = default;
  template <class U>
  UnfilledAllocator(const UnfilledAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
};

// dst[i] = value(i) for i < n: on the calling thread's OpenMP team from 64 Ki entries on (each
// thread touches first the part its loops will read, as an OpenMP code's own initialization).
template <class T, class V>
void team_write(T* dst, std::size_t n, V value) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (n >= (std::size_t{1} << 16))
#endif
  for (std::size_t i = 0; i < n; ++i) dst[i] = value(i);
}

}  // namespace detail

// A vector of a GhostPlan's partition stored as [owned | ghosts]: local position k < owned_size()
// is global index owned().lo + k, owned_size() + k is ghost k. Plain memory of this process (not
// collective to make); update_ghosts() and accumulate_ghosts() are the plan's collectives. The
// constructors write every entry once, on the calling thread's OpenMP team from 64 Ki entries on.
template <class T>
class GhostedVector {
 public:
  explicit GhostedVector(GhostPlan& plan, T fill = T{})
      : plan_(&plan), v_(static_cast<std::size_t>(plan.local_size())) {
    detail::team_write(v_.data(), v_.size(), [&fill](std::size_t) { return fill; });
  }
  // The owned entries from `owned` (owned_size() of them; std::invalid_argument otherwise), the
  // ghosts T{} until the first update_ghosts().
  GhostedVector(GhostPlan& plan, std::span<const T> owned) : plan_(&plan) {
    if (static_cast<index>(owned.size()) != owned_size())
      throw std::invalid_argument("GhostedVector: " + std::to_string(owned.size()) +
                                  " owned values given, " + std::to_string(owned_size()) +
                                  " are needed");
    v_.resize(static_cast<std::size_t>(plan.local_size()));
    const T* in = owned.data();
    const std::size_t n = owned.size();
    detail::team_write(v_.data(), n, [in](std::size_t i) { return in[i]; });
    detail::team_write(v_.data() + n, v_.size() - n, [](std::size_t) { return T{}; });
  }

  GhostPlan& plan() const { return *plan_; }
  Range owned_range() const { return plan_->owned(); }
  index owned_size() const { return plan_->owned_size(); }
  index ghost_count() const { return plan_->ghost_count(); }
  index size() const { return static_cast<index>(v_.size()); }  // owned + ghosts

  T& operator[](index k) { return v_[static_cast<std::size_t>(k)]; }  // local position
  const T& operator[](index k) const { return v_[static_cast<std::size_t>(k)]; }
  T* data() { return v_.data(); }
  const T* data() const { return v_.data(); }
  std::span<T> local() { return v_; }  // [owned | ghosts]
  std::span<T> owned() { return std::span<T>(v_).first(static_cast<std::size_t>(owned_size())); }
  std::span<T> ghosts() { return std::span<T>(v_).subspan(static_cast<std::size_t>(owned_size())); }

  void update_ghosts() { plan_->update(local()); }
  void accumulate_ghosts() requires std::is_arithmetic_v<T> { plan_->accumulate(local()); }

 private:
  GhostPlan* plan_;
  std::vector<T, detail::UnfilledAllocator<T>> v_;
};

}  // namespace compas
