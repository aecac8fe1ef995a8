// DistArray<T, 3>: a 3-D block-distributed array with halos, for 3-D stencils (heat, Jacobi,
// lattice codes). The same porting model as the 1-D and 2-D arrays (dist_array.hpp): global
// indices, the loops of the OpenMP original, exchange_halos() where MPI codes send faces, edges
// and corners:
//
//   compas::DistArray<double, 3> u(rt, nz, ny, nx, {.halo = {1, 1, 1}}), v = u.like();
//   for (int s = 0; s < steps; ++s) {
//     u.exchange_halos();                              // all 26 neighbours' cells
//   #pragma omp parallel for
//     for (long i = u.planes().lo; i < u.planes().hi; ++i) ... v(i, j, k) = ... u(i - 1, j, k) ...
//     swap(u, v);
//   }
//
// Indices: (i, j, k) = (plane, row, column), k contiguous in memory. The domain is a Range3 (any
// origin). Distribution: a process grid of g0 x g1 x g2 processes, row-major by rank (rank =
// (p0 g1 + p1) g2 + p2); each dimension split in near-equal blocks: n cells [lo, lo + n) over g
// processes, with q = n / g and e = n % g, give process position p the cells from lo + p q +
// min(p, e), q + 1 of them when p < e, else q (the first e blocks one longer; partition3.hpp).
// DistOptions3::grid gives the sides; a side 0 is chosen by compas: the processes' prime
// factors, largest first, each to the free side with the fewest processes so far, the slowest
// dimension first on a tie (P = 2 cuts planes: every halo is then whole contiguous planes; 4 is
// 2 x 2 x 1; 8 is 2 x 2 x 2; 12 is 3 x 2 x 2).
//
// A partition of the program's own (DistOptions3::partition, partition3.hpp) replaces the block
// split: for each dimension the g + 1 boundaries of its parts, checked on every process after the
// processes agreed on them (rising strictly from the domain's first index to its end, one part per
// process; the error names the boundary). coarsened(f) makes the next coarser level of a
// multigrid hierarchy aligned with this array: coarse cell lo + c on the process that owns fine
// cells lo + f c .. lo + f c + f - 1 (f = 2, 0-based: fine cells 2c and 2c + 1), so restriction
// and prolongation read only this process's cells and its halos.
//
// An array on a Group (DistArray(group, domain, options)) lives on the group's members alone: its
// grid is over group ranks, and only members hold cells and exchange its halos (the agreement of
// an exchange runs over the group). Making it is job-wide, as every window is: every process of
// the job makes it, the members passing the group and every other process an empty Group (a
// process in no group: split with compas::undefined, group_of with no members), in the same order
// as its other arrays; the others then hold an empty part (owned() empty, member() false) and
// calling an exchange on it is a std::logic_error naming the group. The Group must outlive the
// array, at the same address. compas::redistribute (redistribute3.hpp) moves a level between an
// array on the whole job and one on a group (agglomeration onto fewer processes and back).
//
// Halos: a width per dimension (0 allowed: no neighbour in that dimension, and none across it),
// periodic per dimension. exchange_halos() fills every halo cell whose source cell exists: faces,
// edges and corners from all 26 neighbours at once (what a 27-point stencil needs), a periodic
// dimension wrapping around (onto this process itself when it is alone in that dimension). Halo
// cells beyond a non-periodic boundary are never written: they hold the program's boundary values.
// Each neighbour's block is packed, put with a signal into a receive area at the neighbour (two by
// exchange parity, as in 2-D, so a neighbour one exchange ahead overwrites nothing), and unpacked
// there once its signal arrives. begin_exchange() / HaloExchange::wait() split the exchange for
// overlap; HaloExchange::test() pushes a begun exchange on between blocks of work. At one process
// (P = 1, or an array on a group of one) exchange_halos() copies each edge straight into the halo
// it images, no window and no packing, split over the OpenMP team (funneled, outside a parallel
// region) or the Runtime's team (the (t) form) when the halos are long (kTeamCopyBytes).
// accumulate_halos() is the reverse (each halo cell added into the cell it images, for assembly).
// Call styles (detail::ExchangeForms, shared with 1-D and 2-D) as in 2-D: funneled (the thread that
// made the Runtime, outside run(); an OpenMP program outside its parallel regions or under `omp
// master` with barriers around), or every thread of the team inside run() (the (t) forms).
//
// Errors, the same on every process (the processes compare their arrays first), as the 1-D and 2-D
// arrays': arrays that differ between processes (CollectiveError naming both ranks and arrays), a
// dimension with fewer elements than processes, a halo below 0 or wider than the smallest part of
// a dimension that has neighbours, a partition that does not cover the domain, does not rise or
// does not have one part per process, group lists that differ (CollectiveError naming the
// values), a grid whose sides do not multiply to P (std::invalid_argument).
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#ifdef _OPENMP  // the program's own flag (this is a header): the in-place exchange's team
#include <omp.h>
#endif

#include "compas/port/dist_array.hpp"
#include "compas/port/partition3.hpp"
#include "compas/runtime/group.hpp"

namespace compas {

// Designated initializers name the fields in this order: {.halo = {1, 1, 1}, .periodic = {true,
// false, false}, .fill = compas::comm::Fill::none, .grid = {2, 1, 1}, .partition = p} (any may be
// left out).
struct DistOptions3 {
  std::array<index, 3> halo{1, 1, 1};  // cells on each side, per dimension (planes, rows, cols)
  std::array<bool, 3> periodic{false, false, false};
  comm::Fill fill = comm::Fill::zero;
  std::array<int, 3> grid{0, 0, 0};  // processes per dimension; 0: compas chooses that side
  Partition3 partition{};          // the parts' boundaries (partition3.hpp); empty: the block split
  Layout layout = Layout::padded;  // Layout::contiguous: the halo box packed (dist_array.hpp)
};

namespace detail {

struct DistShape3 {
  Range3 domain;
  DistOptions3 options;
  std::size_t elem_bytes = 0;
  const std::type_info* elem_type = nullptr;
};

// The untyped 3-D machinery: agreement, geometry, window, exchange (port/src/dist_halo3.cpp).
class Halo3 final : public Exchanger {
 public:
  // Over the job (group nullptr) or the members of *group (every process of the job takes part).
  Halo3(Runtime& rt, Group* group, const DistShape3& shape);
  ~Halo3();
  Halo3(const Halo3&) = delete;
  Halo3& operator=(const Halo3&) = delete;

  Range3 owned() const;
  std::array<int, 3> grid() const;      // processes per dimension
  index pitch() const;                  // elements from one local row to the next
  index plane() const;                  // elements from one local plane to the next
  std::byte* origin();                  // the first halo plane's first halo row's first halo column
  std::uint64_t number() const;         // DistArray #number in the errors of its collectives
  const Partition3& partition() const;  // the parts' boundaries, resolved
  bool member() const;                  // whether this process holds a part
  const std::vector<int>& members() const;  // job ranks in grid order (rank order: the job)
  Range3 part_of(int job_rank) const;       // that process's cells (empty: not a member)
  Runtime& runtime() const;
  const DistShape3& shape() const;

  void exchange_funneled();
  void exchange();  // thread 0 of the team, between team barriers
  void begin();
  void finish() override;
  bool test() override;
  void check_funneled(const char* call) const override;
  bool pending() const override;
  // At one process (the array's only member: every neighbour is this process itself) the exchange
  // copies each edge straight into the halo cells it images, no window and no packing.
  // copy_share(part, parts) makes part `part` of `parts` of those copies (parts may run at once:
  // they write disjoint halo cells and read owned cells only), after begin_in_place() (a pending
  // exchange refused, the call agreed on). in_place_bytes(): what one
  // exchange copies.
  bool in_place() const;
  void begin_in_place();
  void copy_share(int part, int parts);
  std::size_t in_place_bytes() const;
  // The reverse of exchange(): every halo block (faces, edges, corners) to the process owning the
  // cells it images, added there by `add`. Funneled form checked.
  void accumulate(AddFn add);
  void accumulate_funneled(AddFn add);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What the porting layer's calls on 3-D arrays (redistribute3.hpp) reach inside one.
struct DistAccess3 {
  template <class T>
  static Halo3& halo(DistArray<T, 3>& a) {
    return *a.halo_;
  }
};

}  // namespace detail

template <class T>
class DistArray<T, 3> : public detail::ExchangeForms<detail::Halo3> {
  static_assert(std::is_trivially_copyable_v<T>, "DistArray<T, 3> needs a trivially copyable T");

 public:
  // Collective: every process makes the same array, in the same order as its other arrays.
  DistArray(Runtime& rt, Range3 domain, DistOptions3 options = {})
      : DistArray(rt, nullptr, domain, std::move(options)) {}
  DistArray(Runtime& rt, index planes, index rows, index cols, DistOptions3 options = {})
      : DistArray(rt, Range3{{0, planes}, {0, rows}, {0, cols}}, std::move(options)) {}
  // Collective over the whole job: an array on the members of `group` (the grid and a partition
  // count group ranks); every other process passes an empty Group and holds nothing. `group`
  // outlives the array, at the same address.
  DistArray(Group& group, Range3 domain, DistOptions3 options = {})
      : DistArray(group.runtime(), &group, domain, std::move(options)) {}
  DistArray(DistArray&&) noexcept = default;
  DistArray& operator=(DistArray&&) = default;  // refused while an exchange is pending
  // Collective: a new array of the same domain and options (on the same processes).
  DistArray like() const { return DistArray(*rt_, group_, domain_, opts_); }
  // Collective: the next coarser level, aligned with this one: domain [lo, lo + n / factor) per
  // dimension, coarse cell lo + c on the process owning fine cells lo + factor c .. lo + factor c
  // + factor - 1, the same processes, halos, periodicity and fill. std::invalid_argument (alike
  // everywhere: the partition is) naming the boundary when this array's partition cannot be so
  // coarsened (Partition3::coarsened).
  DistArray coarsened(index factor) const {
    DistOptions3 o = opts_;
    o.partition = partition().coarsened(factor);
    o.grid = {0, 0, 0};
    const Range3 domain = o.partition.domain();
    return DistArray(*rt_, group_, domain, std::move(o));
  }

  // exchange_halos() (detail::ExchangeForms), at one process copying in place: funneled, on the
  // calling thread's OpenMP team when the program is compiled with OpenMP, is outside a parallel
  // region and the halos hold kTeamCopyBytes or more; inside run() split over the Runtime's team
  // (with TeamSync::none thread 0 alone copies: the caller's barriers stand around it).
  static constexpr std::size_t kTeamCopyBytes = 64 * 1024;
  void exchange_halos() {
    if (!halo_->in_place()) return ExchangeForms::exchange_halos();
    halo_->check_funneled("DistArray<T, 3>::exchange_halos()");
    halo_->begin_in_place();
#ifdef _OPENMP
    if (halo_->in_place_bytes() >= kTeamCopyBytes && !omp_in_parallel() &&
        omp_get_max_threads() > 1) {
#pragma omp parallel
      halo_->copy_share(omp_get_thread_num(), omp_get_num_threads());
      return;
    }
#endif
    halo_->copy_share(0, 1);
  }
  void exchange_halos(threads::ThreadCtx& t, TeamSync sync = TeamSync::barriers) {
    if (!halo_->in_place()) return ExchangeForms::exchange_halos(t, sync);
    if (sync == TeamSync::none) {
      if (t.is_leader()) {
        halo_->begin_in_place();
        halo_->copy_share(0, 1);
      }
      return;
    }
    t.barrier();  // every edge written
    if (t.is_leader()) halo_->begin_in_place();
    if (halo_->in_place_bytes() >= kTeamCopyBytes)
      halo_->copy_share(t.thread(), t.threads());
    else if (t.is_leader())
      halo_->copy_share(0, 1);
    t.barrier();  // every halo there to read
  }

  Range3 domain() const {
    return domain_;
  }
  Range3 owned() const {
    return owned_;
  }
  Range planes() const {
    return owned_.planes;
  }
  Range rows() const {
    return owned_.rows;
  }
  Range cols() const {
    return owned_.cols;
  }
  std::array<index, 3> halo() const {
    return opts_.halo;
  }
  std::array<int, 3> grid() const {
    return halo_->grid();
  }
  // The boundaries of every process's part (the block split when none was given).
  const Partition3& partition() const {
    return halo_->partition();
  }
  // Whether this process holds a part (false only outside the group of an array on a Group).
  bool member() const {
    return halo_->member();
  }
  // The processes holding parts, as job ranks in grid order (group rank order).
  const std::vector<int>& members() const {
    return halo_->members();
  }
  Range3 with_halos() const {
    Range3 w = owned_;
    for (int d = 0; d < 3; ++d)
      w.dim(d) = {w.dim(d).lo - opts_.halo[d], w.dim(d).hi + opts_.halo[d]};
    return w;
  }
  index pitch() const {
    return pitch_;
  }
  index plane() const {
    return plane_;
  }

  // The reverse of exchange_halos() (finite-element assembly): every halo cell's value, faces,
  // edges and corners alike, is added (+=) into the cell it images at the process that owns it (a
  // periodic dimension wrapping, onto this process itself when it is alone in that dimension);
  // halo cells beyond a non-periodic boundary are ignored. Halo cells keep their values (zero them
  // before the next assembly if it adds into them). A collective like exchange_halos(): funneled,
  // or by every thread of the team inside run() (the team meets before and after). Every process
  // calls it: one that does not leaves its neighbours waiting for its blocks until COMPAS_TIMEOUT
  // ends the job, naming the process waited for. Not while a begun exchange is pending
  // (std::logic_error). Arithmetic T only (other types do not compile).
  void accumulate_halos() requires std::is_arithmetic_v<T> {
    accumulate_as<T>();
  }
  void accumulate_halos(threads::ThreadCtx& t) requires std::is_arithmetic_v<T> {
    accumulate_as<T>(t);
  }

  // Global indices, valid on with_halos(); not bounds-checked (the inner loop).
  T& operator()(index i, index j, index k) {
    return origin_[(i - i0_) * plane_ + (j - j0_) * pitch_ + (k - k0_)];
  }
  const T& operator()(index i, index j, index k) const {
    return origin_[(i - i0_) * plane_ + (j - j0_) * pitch_ + (k - k0_)];
  }

  // O(1): the two arrays trade their windows (every process alike).
  friend void swap(DistArray& a, DistArray& b) noexcept {
    std::swap(a, b);
  }

 private:
  friend struct detail::DistAccess3;
  DistArray(Runtime& rt, Group* group, Range3 domain, DistOptions3 options)
      : ExchangeForms(std::make_unique<detail::Halo3>(
            rt, group, detail::DistShape3{domain, options, sizeof(T), &typeid(T)})),
        rt_(&rt),
        group_(group),
        opts_(std::move(options)),
        domain_(domain) {
    owned_ = halo_->owned();
    plane_ = halo_->plane();
    pitch_ = halo_->pitch();
    i0_ = owned_.planes.lo - opts_.halo[0];
    j0_ = owned_.rows.lo - opts_.halo[1];
    k0_ = owned_.cols.lo - opts_.halo[2];
    origin_ = reinterpret_cast<T*>(halo_->origin());
  }

  Runtime* rt_;
  Group* group_ = nullptr;  // nullptr: the whole job
  DistOptions3 opts_;
  Range3 domain_{}, owned_{};
  index plane_ = 0, pitch_ = 0, i0_ = 0, j0_ = 0, k0_ = 0;
  T* origin_ = nullptr;
};

}  // namespace compas
