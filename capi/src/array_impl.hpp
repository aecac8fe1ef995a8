// ArrayImpl<T, D>: a DistArray<T, D> behind the untyped ArrayBase of handles.hpp, and the
// translation of compas_array_options into the C++ options (checked: array_options.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>

#include "compas/port/dist_array.hpp"
#include "compas/port/dist_array3.hpp"
#include "compas/port/redistribute3.hpp"
#include "handles.hpp"

namespace compas::capi {

// The C++ options of a 1-D or 2-D array (dims 1, 2) and of a 3-D one; Error(COMPAS_ERR_ARG)
// naming a value that is out of range or that the C++ layer cannot take.
DistOptions options_2d(const compas_array_options& o, int dims, int processes);
DistOptions3 options_3d(const compas_array_options& o);
// The C++ layout of a compas_layout value; Error(COMPAS_ERR_ARG) naming any other.
Layout layout_of(int layout);

// compas_array_create_with_layout, its failures recorded under `call`.
int create_array(const char* call, compas_runtime* rt, int type, int dims, const std::int64_t* lo,
                 const std::int64_t* hi, const compas_array_options* options, int layout,
                 compas_array** array);

// The domain of `domain` coarsened by `factor` (>= 1): Error(COMPAS_ERR_ARG) naming the factor
// and the dimension whose extent it does not divide (array_levels.cpp).
Range3 coarse_domain(const Range3& domain, index factor);

template <class T, int D>
class ArrayImpl final : public ArrayBase {
  using Options = std::conditional_t<D == 3, DistOptions3, DistOptions>;

 public:
  template <class Processes, class Domain>
  ArrayImpl(Processes& on, Domain domain, const Options& o, int t) : a_(on, domain, o), opts_(o) {
    type = t;
    dims = D;
  }
  ArrayImpl(DistArray<T, D>&& a, const Options& o, int t) : a_(std::move(a)), opts_(o) {
    type = t;
    dims = D;
  }

  void bounds(std::int64_t* lo, std::int64_t* hi, bool halos) const override {
    if constexpr (D == 1) {
      const Range r = halos ? a_.with_halos() : a_.owned();
      lo[0] = r.lo;
      hi[0] = r.hi;
    } else if constexpr (D == 2) {
      const Range2 r = halos ? a_.with_halos() : a_.owned();
      lo[0] = r.rows.lo, hi[0] = r.rows.hi, lo[1] = r.cols.lo, hi[1] = r.cols.hi;
    } else {
      const Range3 r = halos ? a_.with_halos() : a_.owned();
      for (int d = 0; d < 3; ++d) {
        lo[d] = r.dim(d).lo, hi[d] = r.dim(d).hi;
        if (!a_.member()) lo[d] = hi[d] = a_.domain().dim(d).lo;  // empty, halos too
      }
    }
  }

  void* data(std::int64_t* strides) override {
    if constexpr (D == 1) {
      if (strides) strides[0] = 1;
      return a_.local_with_halos().data();
    } else if constexpr (D == 2) {
      if (strides) strides[0] = a_.pitch(), strides[1] = 1;
      return a_.row(a_.with_halos().rows.lo);
    } else {
      if (!a_.member()) {  // no element: an address of this array's own, the packed empty box
        if (strides) strides[0] = 0, strides[1] = 0, strides[2] = 1;
        return &none_;
      }
      if (strides) strides[0] = a_.plane(), strides[1] = a_.pitch(), strides[2] = 1;
      const Range3 w = a_.with_halos();
      return &a_(w.planes.lo, w.rows.lo, w.cols.lo);
    }
  }

  void exchange() override { a_.exchange_halos(); }
  HaloExchange begin() override { return a_.begin_exchange(); }
  void accumulate() override {
    static_assert(std::is_arithmetic_v<T>, "every element type of the C API can be added");
    a_.accumulate_halos();
  }

  std::unique_ptr<ArrayBase> like(index factor, Group* group) const override {
    if constexpr (D == 3) {
      if (group == nullptr) {
        Options o = opts_;
        DistArray<T, 3> c = a_.coarsened(factor);
        o.partition = c.partition();
        o.grid = {0, 0, 0};
        return std::make_unique<ArrayImpl>(std::move(c), o, type);
      }
      Options o = opts_;
      o.partition = {};
      o.grid = {0, 0, 0};
      return std::make_unique<ArrayImpl>(*group, coarse_domain(a_.domain(), factor), o, type);
    } else {
      throw Error(COMPAS_ERR_ARG, "a 3-D array is needed");
    }
  }
  void redistribute_to(ArrayBase& to) override {
    if constexpr (D == 3) compas::redistribute(a_, static_cast<ArrayImpl&>(to).a_);
  }
  std::array<int, 3> grid() const override {
    if constexpr (D == 3) return a_.grid();
    return {0, 0, 0};
  }
  bool member() const override {
    if constexpr (D == 3) return a_.member();
    return true;
  }

 private:
  DistArray<T, D> a_;
  Options opts_;
  T none_{};  // a non-member's data address (3-D arrays on a group)
};

}  // namespace compas::capi
