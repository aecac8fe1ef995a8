// DistArray<T, 1> and DistArray<T, 2>: block-distributed arrays with halos, the porting layer's
// data structure (DistArray<T, 3>: dist_array3.hpp). A port from OpenMP keeps its loops and
// indices; from MPI it drops the halo messages:
//
//   compas::Runtime rt(argc, argv);
//   compas::DistArray<double> u(rt, {1, n + 1}), v(rt, {1, n + 1});  // global indices 1..n
//   for (int s = 0; s < steps; ++s) {
//     u.exchange_halos();                    // neighbours' edges into u's halo cells
//   #pragma omp parallel for
//     for (long i = u.lo(); i < u.hi(); ++i) v[i] = u[i] + r * (u[i - 1] - 2 * u[i] + u[i + 1]);
//     swap(u, v);
//   }
//
// Distribution: a 1-D array's global index range is split into P near-equal blocks, one per
// process in rank order (Runtime::process_block's split; the formula in partition.hpp), or as a
// compas::Partition the program made says (unequal parts: Partition::from_local). A 2-D array's
// rows are split over the processes (Decomposition::rows), or rows and columns over the near-square
// process grid of Runtime::process_grid() (Decomposition::grid). Each process holds its block plus
// `halo` cells on every side that has a neighbour or a domain boundary. Halo cells beyond the
// domain (no neighbour, not periodic) are never written by exchange_halos(): they hold the boundary
// values the program puts there.
//
// Storage: one symmetric window per array (every process allocates the largest part's size, so
// window sizes agree even when parts do not). Rows are padded to whole 64-byte lines and the
// first owned element of every row starts on one (streaming stores then write whole lines);
// Layout::contiguous packs the halo box instead (row after row, the pitch this process's own
// width with halos), as a Fortran or C array of that shape would lie.
// Fill::none leaves the data untouched for first touch by the threads that compute on it.
//
// exchange_halos(): each process puts its edge cells into its neighbours' receive areas with
// put_signal (one-sided; on one host a plain memcpy), waits for its neighbours' signals, and
// copies what arrived into its halo cells. A 2-D part has eight neighbours: edges to the four
// sides and hr x hc corner blocks to the four diagonal ones, all sent at once, so corner cells are
// right too (9-point stencils). begin_exchange() checks the call against every process's (one
// small allgather: it returns once every process has begun), sends, and returns a HaloExchange
// whose wait() puts the halos in place: compute what needs no halo in between (overlap). The
// receive areas alternate between two copies by exchange parity, so a fast neighbour can run one
// exchange ahead without overwriting cells still being read. Two call styles: (a)
// exchange_halos(t) by every thread of the team inside Runtime::run (the team meets before and
// after; thread 0 communicates); (b) exchange_halos() by the thread that made the Runtime, outside
// run() (funneled, like MPI_THREAD_FUNNELED; around OpenMP loops). Every process calls it the same
// number of times on the same array (a collective). swap(u, v) swaps two arrays' contents in O(1),
// on every process alike.
//
// Errors (CollectiveError, a std::invalid_argument, the same on every process, at construction;
// uncaught, one line from process 0 ends the job): shapes, halos, element types or decompositions
// that differ between processes (naming both ranks and values), a halo wider than the smallest
// part, a part that would be empty; at an exchange or accumulation, processes that make different
// calls or make them on different arrays (arrays are numbered in the order they were made:
// number()), before any cell moves. std::logic_error: making an array
// (a collective) or exchange_halos() from another thread than the Runtime's or from inside run().
// Indexing is not bounds-checked (it is the inner loop); owned(), with_halos() and contains() say
// what is valid.
#pragma once

#include <atomic>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "compas/comm/window.hpp"
#include "compas/port/partition.hpp"
#include "compas/runtime/group.hpp"
#include "compas/runtime/range.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas {

enum class Decomposition {
  rows,  // 2-D: rows over processes, every process holds whole rows
  grid,  // 2-D: rows and columns over Runtime::process_grid()
};

// How a part's halo box lies in memory (2-D and 3-D; a 1-D part is one row either way): rows
// padded to whole 64-byte lines, each row's first owned element on a line, the pitch the largest
// part's (padded); or packed, the pitch this process's own width with halos (contiguous).
enum class Layout { padded, contiguous };

// exchange_halos(t, ...) inside Runtime::run: with `barriers` the team meets before (every edge
// written) and after (every halo there to read); with `none` thread 0 alone exchanges and the
// caller's own team barriers (or collectives) must stand on both sides.
enum class TeamSync { barriers, none };

// Designated initializers name the fields in this order: {.halo = 2, .periodic = true,
// .decomposition = compas::Decomposition::grid, .grid = {2, 1}} (any of them may be left out).
struct DistOptions {
  index halo = 1;         // halo cells on each side (rows and columns for 2-D)
  bool periodic = false;  // every distributed dimension wraps around (2-D: rows and columns)
  comm::Fill fill = comm::Fill::zero;
  Decomposition decomposition = Decomposition::rows;  // 2-D only
  ProcessGrid grid{};                                 // Decomposition::grid only
  Layout layout = Layout::padded;
};

namespace detail {

// What every process must agree on, and what it gets: the untyped halo machinery behind
// DistArray (one window, its geometry, the exchange). In elements of `elem_bytes`.
struct DistShape {
  int dims = 1;
  Range rows{0, 1}, cols{0, 1};  // the global domain (1-D: cols, with one row)
  index halo = 1;
  bool periodic = false;
  comm::Fill fill = comm::Fill::zero;
  Decomposition decomposition = Decomposition::rows;
  ProcessGrid grid{};
  std::size_t elem_bytes = 0;
  const std::type_info* elem_type = nullptr;  // named when processes differ (double vs int64_t)
  Layout layout = Layout::padded;
  std::vector<index> starts;  // 1-D on a user's Partition: its P + 1 split points; empty: block
};

// What a pending halo exchange (HaloExchange) completes: the 2-D machinery (Halo) or the 3-D one
// (Halo3, dist_array3.hpp). test(): progresses the pending exchange once, true when finish() would
// not block (true when none is pending).
class Exchanger {
 public:
  virtual void finish() = 0;
  virtual bool test() = 0;
  virtual void check_funneled(const char* call) const = 0;
  virtual bool pending() const = 0;  // an exchange begun, not finished
  // What a HaloExchange holds: this machinery while it lives, nullptr once it is destroyed (which
  // completes a pending exchange first), so that a handle outliving its array finds nothing to do.
  std::shared_ptr<Exchanger*> handle() {
    if (!handle_) handle_ = std::make_shared<Exchanger*>(this);
    return handle_;
  }

 protected:
  ~Exchanger() {
    if (handle_) *handle_ = nullptr;
  }

 private:
  std::shared_ptr<Exchanger*> handle_;
};

// DistArray's move assignment onto an array whose exchange is pending: std::logic_error.
[[noreturn]] void throw_assigned_while_pending();

// accumulate_halos()'s addition over untyped elements: dst[k] += src[k] for n elements of T.
using AddFn = void (*)(std::byte* dst, const std::byte* src, std::size_t n);

template <class T>
void add_elements(std::byte* dst, const std::byte* src, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    T a, b;
    std::memcpy(&a, dst + k * sizeof(T), sizeof(T));
    std::memcpy(&b, src + k * sizeof(T), sizeof(T));
    a += b;
    std::memcpy(dst + k * sizeof(T), &a, sizeof(T));
  }
}

class Halo final : public Exchanger {
 public:
  // Collective over processes: checks that every process passed the same shape, allocates.
  Halo(Runtime& rt, const DistShape& shape);
  ~Halo();
  Halo(const Halo&) = delete;
  Halo& operator=(const Halo&) = delete;

  Range2 owned() const;      // this process's part, global indices
  ProcessGrid grid() const;  // the parts' grid (1-D: 1 x P), rank r at (r / cols, r % cols)
  index halo_rows() const;   // halo depth above and below (0 for 1-D)
  index halo_cols() const;
  index pitch() const;           // elements from one local row to the next
  std::byte* origin();           // local element (0, 0): the first halo row's first halo column
  std::uint64_t number() const;  // DistArray #number in the errors of its collectives
  // Every process's part (global indices) and the byte offset of its origin in its window (the
  // same layout otherwise: pitch and halos agree); the array's window.
  Range2 part_of(int rank) const;
  std::size_t origin_bytes(int rank) const;
  comm::WindowBytes& window();

  // Funneled: the thread that made the Runtime, outside run(). Checked.
  void exchange_funneled();
  // Thread 0 of the team inside run(), between team barriers.
  void exchange();
  // exchange() in two halves: every edge on its way (std::logic_error while one is pending), and
  // every halo in place (nothing when none is pending).
  void begin();
  void finish() override;
  bool test() override;
  void check_funneled(const char* call) const override;
  bool pending() const override;
  // The reverse of exchange(): every halo cell is sent to the process that owns it and added
  // there, `add(dst, src, n)` doing dst[k] += src[k] for n elements. Funneled form checked.
  void accumulate(AddFn add);
  void accumulate_funneled(AddFn add);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The shape every process must agree on, from a DistArray's arguments.
inline DistShape shape_of(int dims, Range2 domain, const DistOptions& o, std::size_t elem_bytes,
                          const std::type_info& elem_type, const Partition* parts = nullptr) {
  DistShape s;
  s.dims = dims;
  s.rows = dims == 1 ? Range{0, 1} : domain.rows;
  s.cols = domain.cols;
  s.halo = o.halo;
  s.periodic = o.periodic;
  s.fill = o.fill;
  s.decomposition = o.decomposition;
  s.grid = o.grid;
  s.elem_bytes = elem_bytes;
  s.elem_type = &elem_type;
  s.layout = o.layout;
  if (parts && !parts->is_block()) s.starts.assign(parts->starts().begin(), parts->starts().end());
  return s;
}

class DistBase;

// What the porting layer's collectives on DistArrays (transpose.hpp) reach inside one.
struct DistAccess {
  static Halo& halo(DistBase& d);
  static Runtime& runtime(DistBase& d);
};

}  // namespace detail

// A halo exchange under way (DistArray::begin_exchange): wait() puts the halos in place. Until
// then the array's owned cells are being sent (do not write them) and its halo cells are being
// filled (do not read them): compute what needs no halo, e.g. the interior, in between. Destroying
// it unwaited waits. An array whose exchange is pending cannot be assigned to (std::logic_error);
// moved or swapped, its exchange goes with it; destroyed, it completes the exchange first, and
// wait() and test() then do nothing. test() (like MPI_Test) pushes the exchange on without
// blocking: call it between blocks of the interior's work so that messages the network needs this
// process to progress (a rendezvous over tcp) move while it computes:
//
//   auto x = u.begin_exchange();
//   for (auto& block : interior_blocks) { compute(block); (void)x.test(); }
//   x.wait();                                  // at once when test() has said true
//   compute(boundary);
template <class T, int Dims = 1>
class DistArray;

namespace detail {
template <class H>
class ExchangeForms;
}  // namespace detail

class HaloExchange {
 public:
  HaloExchange() = default;
  HaloExchange(HaloExchange&& o) noexcept = default;
  HaloExchange& operator=(HaloExchange&& o) noexcept {
    std::swap(halo_, o.halo_);
    return *this;
  }
  ~HaloExchange() noexcept(false) {
    if (target() && std::uncaught_exceptions() == 0) wait();
  }
  // Funneled form (the exchange was begun outside run()).
  void wait() {
    detail::Exchanger* h = target();
    halo_.reset();
    if (!h) return;
    h->check_funneled("HaloExchange::wait()");
    h->finish();
  }
  // Inside run(): every thread of the team calls it; thread 0 completes the exchange, then the
  // team meets (every halo in place for every thread).
  void wait(threads::ThreadCtx& t) {
    if (detail::Exchanger* h = target(); t.is_leader() && h) h->finish();
    halo_.reset();
    t.barrier();
  }
  // Funneled: progresses the exchange once and returns at once; true when every halo block has
  // arrived and every send is complete, so wait() would not block (it must still be called: it
  // copies the halos into place). Halo cells are not in place before wait(). True after wait().
  [[nodiscard]] bool test() {
    detail::Exchanger* h = target();
    if (!h) return true;
    h->check_funneled("HaloExchange::test()");
    return h->test();
  }
  // Inside run(): thread 0 progresses and tests; every thread of the team calls it and gets thread
  // 0's answer (a team broadcast: the team meets), so the team's loop over blocks stays in step.
  [[nodiscard]] bool test(threads::ThreadCtx& t) {
    bool done = true;
    if (detail::Exchanger* h = target(); t.is_leader() && h) done = h->test();
    return t.broadcast(done);
  }

 private:
  template <class>
  friend class detail::ExchangeForms;
  explicit HaloExchange(std::shared_ptr<detail::Exchanger*> h) : halo_(std::move(h)) {}
  detail::Exchanger* target() const { return halo_ ? *halo_ : nullptr; }
  std::shared_ptr<detail::Exchanger*> halo_;  // nullptr inside once the array is gone
};

namespace detail {

// What DistArray<T, 1> and DistArray<T, 2> share: the Runtime, the options, the halo machinery
// and the exchange.
// The exchange calls every DistArray offers, over its halo machinery H (Halo for 1-D and 2-D,
// Halo3 for 3-D).
template <class H>
class ExchangeForms {
 public:
  // The array's number in the errors of its collectives ("DistArray #3"): arrays are numbered 1,
  // 2, ... in the order the processes made them, the same on every process; swap() trades the
  // numbers with the contents.
  std::uint64_t number() const { return halo_->number(); }

  void exchange_halos() { halo_->exchange_funneled(); }
  void exchange_halos(threads::ThreadCtx& t, TeamSync sync = TeamSync::barriers) {
    if (sync == TeamSync::barriers) t.barrier();
    if (t.is_leader()) halo_->exchange();
    if (sync == TeamSync::barriers) t.barrier();
  }
  // The exchange in two halves, to compute while the halos travel (a collective, like
  // exchange_halos): funneled, or by every thread of the team inside run() (the team meets first,
  // so every edge is written; thread 0 posts).
  [[nodiscard]] HaloExchange begin_exchange() {
    halo_->check_funneled("DistArray::begin_exchange()");
    halo_->begin();
    return HaloExchange(halo_->handle());
  }
  [[nodiscard]] HaloExchange begin_exchange(threads::ThreadCtx& t) {
    t.barrier();
    if (t.is_leader()) halo_->begin();
    return HaloExchange(halo_->handle());
  }

 protected:
  // accumulate_halos() for elements of T, funneled or by every thread of the team (the team meets
  // before, every halo written, and after, every owned cell summed).
  template <class T>
  void accumulate_as() {
    halo_->accumulate_funneled(&add_elements<T>);
  }
  template <class T>
  void accumulate_as(threads::ThreadCtx& t) {
    t.barrier();
    if (t.is_leader()) halo_->accumulate(&add_elements<T>);
    t.barrier();
  }

  explicit ExchangeForms(std::unique_ptr<H> h) : halo_(std::move(h)) {}
  ExchangeForms(ExchangeForms&&) noexcept = default;
  // Refused while this array's exchange is pending (std::logic_error, both arrays as they were):
  // its machinery, which the exchange's handle and the neighbours' blocks still use, would go.
  ExchangeForms& operator=(ExchangeForms&& o) {
    if (halo_ && halo_->pending()) throw_assigned_while_pending();
    halo_ = std::move(o.halo_);
    return *this;
  }
  ~ExchangeForms() = default;
  std::unique_ptr<H> halo_;
};

class DistBase : public ExchangeForms<Halo> {
 public:
  Runtime& runtime() const { return *rt_; }  // the Runtime the array was made with
  // The grid of parts the array is cut into, both sides resolved (1-D and Decomposition::rows:
  // 1 x P and P x 1): rank r owns the part in row r / cols, column r % cols of it, each side
  // split as block_of() does.
  ProcessGrid process_grid() const { return halo_->grid(); }

 protected:
  DistBase(Runtime& rt, const DistOptions& o, const DistShape& shape)
      : ExchangeForms<Halo>(std::make_unique<Halo>(rt, shape)), rt_(&rt), opts_(o) {}

  Runtime* rt_;
  DistOptions opts_;
  friend struct DistAccess;
};

inline Halo& DistAccess::halo(DistBase& d) {
  return *d.halo_;
}
inline Runtime& DistAccess::runtime(DistBase& d) {
  return *d.rt_;
}

}  // namespace detail

// The owned part of a 2-D array as a strided view, local indices: (r, c) is global
// (rows().lo + r, cols().lo + c); row(r) is one owned row as a span.
template <class T>
struct LocalView2 {
  T* data = nullptr;  // element (0, 0)
  index rows = 0, cols = 0, stride = 0;

  T& operator()(index r, index c) const { return data[r * stride + c]; }
  std::span<T> row(index r) const { return {data + r * stride, static_cast<std::size_t>(cols)}; }
  index extent(int d) const { return d == 0 ? rows : cols; }
};

// A 1-D block-distributed array over a global index range, with `halo` cells on each side.
template <class T>
class DistArray<T, 1> : public detail::DistBase {
  static_assert(std::is_trivially_copyable_v<T>, "DistArray<T> needs a trivially copyable T");

 public:
  // Collective. `domain`: the global indices [lo, hi) in the block split (partition.hpp); a plain
  // n means [0, n).
  DistArray(Runtime& rt, Range domain, DistOptions options = {})
      : DistArray(rt, domain, nullptr, options) {}
  // Collective: owned ranges as the partition says (unequal parts; Partition::from_local).
  DistArray(Runtime& rt, const Partition& parts, DistOptions options = {})
      : DistArray(rt, parts.domain(), &parts, options) {}
  DistArray(Runtime& rt, index n, DistOptions options = {}) : DistArray(rt, Range{0, n}, options) {}
  DistArray(DistArray&&) noexcept = default;
  DistArray& operator=(DistArray&&) = default;  // refused while an exchange is pending
  // Collective: a new array of the same domain and options (its contents as options.fill says).
  DistArray like() const { return DistArray(*rt_, part_, opts_); }

  Range domain() const { return domain_; }
  index size() const { return domain_.size(); }
  const Partition& partition() const { return part_; }  // how the domain is cut
  Range owned() const { return owned_; }                // this process's part
  index lo() const { return owned_.lo; }
  index hi() const { return owned_.hi; }
  index halo() const { return h_; }
  Range with_halos() const { return {owned_.lo - h_, owned_.hi + h_}; }
  // The rank whose part holds global index i (inside domain()): no communication, O(1) on the
  // block split, O(log P) on a user's partition. With compas::migrate, items go to the process
  // owning their index.
  int owner(index i) const { return part_.owner(i); }

  // Global index, valid on with_halos().
  T& operator[](index i) { return origin_[i - first_]; }
  const T& operator[](index i) const { return origin_[i - first_]; }
  std::span<T> local() { return {origin_ + h_, static_cast<std::size_t>(owned_.size())}; }
  std::span<T> local_with_halos() {
    return {origin_, static_cast<std::size_t>(owned_.size() + 2 * h_)};
  }

  // The reverse of exchange_halos() (finite-element assembly): every halo cell's value is added
  // (+=) into the cell it mirrors at the process that owns it; halo cells keep their values.
  // A collective like exchange_halos(), funneled or by every thread of the team.
  void accumulate_halos() requires std::is_arithmetic_v<T> { accumulate_as<T>(); }
  void accumulate_halos(threads::ThreadCtx& t) requires std::is_arithmetic_v<T> {
    accumulate_as<T>(t);
  }

  // x op= v on element i (in domain()) wherever it lives, T a 4- or 8-byte integer, without a
  // result and without its owner taking part (an atomic post, as shmem_atomic_xor): from any
  // thread, between collectives; on this host's parts at once (CPU atomics on the shared
  // mapping), to other hosts over the network. Every update is in place everywhere after the next
  // compas::barrier(rt). A port keeps its `#pragma omp atomic` loop:
  // table.atomic_update(j, xor, v).
  void atomic_update(index i, comm::AtomicOp op,
                     T v) requires(std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8)) {
    if (!domain_.contains(i)) detail::index_outside("DistArray::atomic_update", i, domain_);
    const int r = owner(i);
    const auto at = static_cast<std::size_t>(i - first_of_[static_cast<std::size_t>(r)]);
    if (T* base = direct_[static_cast<std::size_t>(r)]) {
      std::atomic_ref<T> x(base[at]);
      if (op == comm::AtomicOp::bit_xor)
        x.fetch_xor(v, std::memory_order_relaxed);
      else if (op == comm::AtomicOp::add)
        x.fetch_add(v, std::memory_order_relaxed);
      else if (op == comm::AtomicOp::bit_and)
        x.fetch_and(v, std::memory_order_relaxed);
      else
        x.fetch_or(v, std::memory_order_relaxed);
      return;
    }
    halo_->window().atomic_update(r, halo_->origin_bytes(r) + at * sizeof(T), op,
                                  static_cast<std::uint64_t>(v), sizeof(T));
  }

  // O(1): the two arrays trade their windows (every process alike, in a time loop).
  friend void swap(DistArray& a, DistArray& b) noexcept { std::swap(a, b); }

 private:
  DistArray(Runtime& rt, Range domain, const Partition* user, DistOptions options)
      : DistBase(rt, options,
                 detail::shape_of(1, {{0, 1}, domain}, options, sizeof(T), typeid(T), user)),
        part_(user ? *user : Partition::block(rt, domain)) {
    const Range2 own = halo_->owned();
    domain_ = domain;
    owned_ = own.cols;
    h_ = halo_->halo_cols();
    first_ = owned_.lo - h_;
    origin_ = reinterpret_cast<T*>(halo_->origin());
    const int P = rt.processes();
    first_of_.resize(static_cast<std::size_t>(P));
    direct_.resize(static_cast<std::size_t>(P));
    for (int r = 0; r < P; ++r) {
      first_of_[static_cast<std::size_t>(r)] = part_.part(r).lo - h_;
      std::byte* peer = halo_->window().peer_data(r);
      direct_[static_cast<std::size_t>(r)] =
          peer ? reinterpret_cast<T*>(peer + halo_->origin_bytes(r)) : nullptr;
    }
  }

  Partition part_;
  Range domain_{}, owned_{};
  index h_ = 0, first_ = 0;
  T* origin_ = nullptr;
  std::vector<index> first_of_;  // every process's first local index (its first halo cell)
  std::vector<T*> direct_;       // every process's origin mapped here, or nullptr (another host)
};

// A 2-D block-distributed array over global rows x columns, with `halo` cells on every side.
template <class T>
class DistArray<T, 2> : public detail::DistBase {
  static_assert(std::is_trivially_copyable_v<T>, "DistArray<T, 2> needs a trivially copyable T");

 public:
  // Collective. `domain`: global rows and columns; (rows, cols) means [0, rows) x [0, cols).
  DistArray(Runtime& rt, Range2 domain, DistOptions options = {})
      : DistBase(rt, options, detail::shape_of(2, domain, options, sizeof(T), typeid(T))) {
    domain_ = domain;
    owned_ = halo_->owned();
    hr_ = halo_->halo_rows();
    hc_ = halo_->halo_cols();
    pitch_ = halo_->pitch();
    row0_ = owned_.rows.lo - hr_;
    col0_ = owned_.cols.lo - hc_;
    origin_ = reinterpret_cast<T*>(halo_->origin());
    grid_ = halo_->grid();
    row_part_ = PartHolding(domain_.rows, grid_.rows);
    col_part_ = PartHolding(domain_.cols, grid_.cols);
  }
  DistArray(Runtime& rt, index rows, index cols, DistOptions options = {})
      : DistArray(rt, Range2{{0, rows}, {0, cols}}, options) {}
  DistArray(DistArray&&) noexcept = default;
  DistArray& operator=(DistArray&&) = default;  // refused while an exchange is pending
  // Collective: a new array of the same domain and options (its contents as options.fill says).
  DistArray like() const { return DistArray(*rt_, domain_, opts_); }

  Range2 domain() const { return domain_; }
  Range2 owned() const { return owned_; }
  Range rows() const { return owned_.rows; }
  Range cols() const { return owned_.cols; }
  index halo() const { return hr_ > hc_ ? hr_ : hc_; }
  Range2 with_halos() const {
    return {{owned_.rows.lo - hr_, owned_.rows.hi + hr_},
            {owned_.cols.lo - hc_, owned_.cols.hi + hc_}};
  }
  index pitch() const { return pitch_; }  // elements between consecutive rows
  // The rank whose part holds global (i, j) (inside domain()): no communication, O(1). A
  // particle code's destination for compas::migrate: q.owner(cell row, cell column).
  int owner(index i, index j) const {
    return static_cast<int>(row_part_(i) * grid_.cols + col_part_(j));
  }
  // The owner of the cell holding the point (x, y) of the domain: owner(floor(x), floor(y)), as
  // a particle's position gives it (compas::migrate(rt, particles, [&](auto& p) { return
  // q.owner(p.x, p.y); })).
  template <std::floating_point F>
  int owner(F x, F y) const {
    return owner(static_cast<index>(std::floor(x)), static_cast<index>(std::floor(y)));
  }

  // Global indices, valid on with_halos().
  T& operator()(index i, index j) { return origin_[(i - row0_) * pitch_ + (j - col0_)]; }
  const T& operator()(index i, index j) const {
    return origin_[(i - row0_) * pitch_ + (j - col0_)];
  }
  // Global row i (of with_halos()) from its first halo column: row(i)[k] is column
  // with_halos().cols.lo + k.
  T* row(index i) { return origin_ + (i - row0_) * pitch_; }
  const T* row(index i) const { return origin_ + (i - row0_) * pitch_; }
  LocalView2<T> local() {
    return {origin_ + hr_ * pitch_ + hc_, owned_.rows.size(), owned_.cols.size(), pitch_};
  }

  // The reverse of exchange_halos(): see DistArray<T, 1>::accumulate_halos.
  void accumulate_halos() requires std::is_arithmetic_v<T> { accumulate_as<T>(); }
  void accumulate_halos(threads::ThreadCtx& t) requires std::is_arithmetic_v<T> {
    accumulate_as<T>(t);
  }

  // O(1): the two arrays trade their windows (every process alike, in a time loop).
  friend void swap(DistArray& a, DistArray& b) noexcept { std::swap(a, b); }

 private:
  Range2 domain_{}, owned_{};
  index hr_ = 0, hc_ = 0, pitch_ = 0, row0_ = 0, col0_ = 0;
  ProcessGrid grid_{1, 1};
  PartHolding row_part_, col_part_;  // owner()'s lookups
  T* origin_ = nullptr;
};

}  // namespace compas
