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
// (p0 g1 + p1) g2 + p2); each dimension split in near-equal blocks (the first n % g blocks one
// longer). DistOptions3::grid gives the sides; a side 0 is chosen by compas: the processes' prime
// factors, largest first, each to the free side with the fewest processes so far, the slowest
// dimension first on a tie (P = 2 cuts planes: every halo is then whole contiguous planes; 4 is
// 2 x 2 x 1; 8 is 2 x 2 x 2; 12 is 3 x 2 x 2).
//
// Halos: a width per dimension (0 allowed: no neighbour in that dimension, and none across it),
// periodic per dimension. exchange_halos() fills every halo cell whose source cell exists: faces,
// edges and corners from all 26 neighbours at once (what a 27-point stencil needs), a periodic
// dimension wrapping around (onto this process itself when it is alone in that dimension). Halo
// cells beyond a non-periodic boundary are never written: they hold the program's boundary values.
// Each neighbour's block is packed, put with a signal into a receive area at the neighbour (two by
// exchange parity, as in 2-D, so a neighbour one exchange ahead overwrites nothing), and unpacked
// there once its signal arrives. begin_exchange() / HaloExchange::wait() split the exchange for
// overlap; HaloExchange::test() pushes a begun exchange on between blocks of work.
// accumulate_halos() is the reverse (each halo cell added into the cell it images, for assembly).
// Call styles (detail::ExchangeForms, shared with 1-D and 2-D) as in 2-D: funneled (the thread that
// made the Runtime, outside run(); an OpenMP program outside its parallel regions or under `omp
// master` with barriers around), or every thread of the team inside run() (the (t) forms).
//
// Errors, the same on every process (the processes compare their arrays first), as the 1-D and 2-D
// arrays': arrays that differ between processes (CollectiveError naming both ranks and arrays), a
// dimension with fewer elements than processes, a halo below 0 or wider than the smallest part of
// a dimension that has neighbours (CollectiveError naming the values), a grid whose sides do not
// multiply to P (std::invalid_argument).
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "compas/port/dist_array.hpp"

namespace compas {

// Designated initializers name the fields in this order: {.halo = {1, 1, 1}, .periodic = {true,
// false, false}, .fill = compas::comm::Fill::none, .grid = {2, 1, 1}} (any may be left out).
struct DistOptions3 {
  std::array<index, 3> halo{1, 1, 1};  // cells on each side, per dimension (planes, rows, cols)
  std::array<bool, 3> periodic{false, false, false};
  comm::Fill fill = comm::Fill::zero;
  std::array<int, 3> grid{0, 0, 0};  // processes per dimension; 0: compas chooses that side
  Layout layout = Layout::padded;    // Layout::contiguous: the halo box packed (dist_array.hpp)
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
  Halo3(Runtime& rt, const DistShape3& shape);
  ~Halo3();
  Halo3(const Halo3&) = delete;
  Halo3& operator=(const Halo3&) = delete;

  Range3 owned() const;
  std::array<int, 3> grid() const;  // processes per dimension
  index pitch() const;              // elements from one local row to the next
  index plane() const;              // elements from one local plane to the next
  std::byte* origin();              // the first halo plane's first halo row's first halo column
  std::uint64_t number() const;     // DistArray #number in the errors of its collectives

  void exchange_funneled();
  void exchange();  // thread 0 of the team, between team barriers
  void begin();
  void finish() override;
  bool test() override;
  void check_funneled(const char* call) const override;
  bool pending() const override;
  // The reverse of exchange(): every halo block (faces, edges, corners) to the process owning the
  // cells it images, added there by `add`. Funneled form checked.
  void accumulate(AddFn add);
  void accumulate_funneled(AddFn add);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace detail

template <class T>
class DistArray<T, 3> : public detail::ExchangeForms<detail::Halo3> {
  static_assert(std::is_trivially_copyable_v<T>, "DistArray<T, 3> needs a trivially copyable T");

 public:
  // Collective: every process makes the same array, in the same order as its other arrays.
  DistArray(Runtime& rt, Range3 domain, DistOptions3 options = {})
      : ExchangeForms(std::make_unique<detail::Halo3>(
            rt, detail::DistShape3{domain, options, sizeof(T), &typeid(T)})),
        rt_(&rt),
        opts_(options),
        domain_(domain) {
    owned_ = halo_->owned();
    plane_ = halo_->plane();
    pitch_ = halo_->pitch();
    i0_ = owned_.planes.lo - options.halo[0];
    j0_ = owned_.rows.lo - options.halo[1];
    k0_ = owned_.cols.lo - options.halo[2];
    origin_ = reinterpret_cast<T*>(halo_->origin());
  }
  DistArray(Runtime& rt, index planes, index rows, index cols, DistOptions3 options = {})
      : DistArray(rt, Range3{{0, planes}, {0, rows}, {0, cols}}, options) {}
  DistArray(DistArray&&) noexcept = default;
  DistArray& operator=(DistArray&&) = default;  // refused while an exchange is pending
  // Collective: a new array of the same domain and options.
  DistArray like() const { return DistArray(*rt_, domain_, opts_); }

  Range3 domain() const { return domain_; }
  Range3 owned() const { return owned_; }
  Range planes() const { return owned_.planes; }
  Range rows() const { return owned_.rows; }
  Range cols() const { return owned_.cols; }
  std::array<index, 3> halo() const { return opts_.halo; }
  std::array<int, 3> grid() const { return halo_->grid(); }
  Range3 with_halos() const {
    Range3 w = owned_;
    for (int d = 0; d < 3; ++d)
      w.dim(d) = {w.dim(d).lo - opts_.halo[d], w.dim(d).hi + opts_.halo[d]};
    return w;
  }
  index pitch() const { return pitch_; }
  index plane() const { return plane_; }

  // The reverse of exchange_halos() (finite-element assembly): every halo cell's value, faces,
  // edges and corners alike, is added (+=) into the cell it images at the process that owns it (a
  // periodic dimension wrapping, onto this process itself when it is alone in that dimension);
  // halo cells beyond a non-periodic boundary are ignored. Halo cells keep their values (zero them
  // before the next assembly if it adds into them). A collective like exchange_halos(): funneled,
  // or by every thread of the team inside run() (the team meets before and after). Every process
  // calls it: one that does not leaves its neighbours waiting for its blocks until COMPAS_TIMEOUT
  // ends the job, naming the process waited for. Not while a begun exchange is pending
  // (std::logic_error). Arithmetic T only (other types do not compile).
  void accumulate_halos() requires std::is_arithmetic_v<T> { accumulate_as<T>(); }
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
  friend void swap(DistArray& a, DistArray& b) noexcept { std::swap(a, b); }

 private:
  Runtime* rt_;
  DistOptions3 opts_;
  Range3 domain_{}, owned_{};
  index plane_ = 0, pitch_ = 0, i0_ = 0, j0_ = 0, k0_ = 0;
  T* origin_ = nullptr;
};

}  // namespace compas
