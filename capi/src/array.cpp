// compas_array_*: creating, querying, exchanging, accumulating and swapping distributed arrays.
#include <string>
#include <utility>

#include "array_impl.hpp"
#include "types.hpp"

using namespace compas::capi;

namespace {

std::unique_ptr<ArrayBase> make_array(compas::Runtime& rt, int type, int dims,
                                      const std::int64_t* lo, const std::int64_t* hi,
                                      const compas_array_options& o, compas::Layout layout) {
  return with_type(type, [&](auto t) -> std::unique_ptr<ArrayBase> {
    using T = decltype(t);
    if (dims == 3) {
      compas::DistOptions3 d = options_3d(o);
      d.layout = layout;
      return std::make_unique<ArrayImpl<T, 3>>(
          rt, compas::Range3{{lo[0], hi[0]}, {lo[1], hi[1]}, {lo[2], hi[2]}}, d, type);
    }
    compas::DistOptions d = options_2d(o, dims, rt.processes());
    d.layout = layout;
    if (dims == 1)
      return std::make_unique<ArrayImpl<T, 1>>(rt, compas::Range{lo[0], hi[0]}, d, type);
    return std::make_unique<ArrayImpl<T, 2>>(rt, compas::Range2{{lo[0], hi[0]}, {lo[1], hi[1]}}, d,
                                             type);
  });
}

}  // namespace

int compas::capi::create_array(const char* call, compas_runtime* rt, int type, int dims,
                               const int64_t* lo, const int64_t* hi,
                               const compas_array_options* options, int layout,
                               compas_array** array) {
  return guard(call, [&] {
    need(array, "array");
    *array = nullptr;
    compas_runtime* r = live(rt, "rt");
    if (dims < 1 || dims > 3)
      throw Error(COMPAS_ERR_ARG, "dims " + std::to_string(dims) + ": 1, 2 or 3");
    with_type(type, [](auto) {});  // an unknown type is refused before anything collective
    const compas::Layout l = layout_of(layout);
    need(lo, "lo");
    need(hi, "hi");
    compas_array_options o;
    compas_array_options_init(&o);
    if (options != nullptr) o = *options;
    auto impl = make_array(*r->runtime, type, dims, lo, hi, o, l);
    *array = track(new compas_array(r, std::move(impl)));
  });
}

extern "C" int compas_array_create(compas_runtime* rt, int type, int dims, const int64_t* lo,
                                   const int64_t* hi, const compas_array_options* options,
                                   compas_array** array) {
  return create_array("compas_array_create", rt, type, dims, lo, hi, options, COMPAS_LAYOUT_PADDED,
                      array);
}

extern "C" int compas_array_create_with_layout(compas_runtime* rt, int type, int dims,
                                               const int64_t* lo, const int64_t* hi,
                                               const compas_array_options* options, int layout,
                                               compas_array** array) {
  return create_array("compas_array_create_with_layout", rt, type, dims, lo, hi, options, layout,
                      array);
}

extern "C" int compas_array_destroy(compas_array** array) {
  return guard("compas_array_destroy", [&] { destroy(array, "array"); });
}

extern "C" int compas_array_type(const compas_array* array, int* type, int* dims) {
  return guard("compas_array_type", [&] {
    const ArrayBase& a = *live(array, "array")->impl;
    if (type != nullptr) *type = a.type;
    if (dims != nullptr) *dims = a.dims;
  });
}

namespace {

int bounds(const char* call, const compas_array* array, int64_t* lo, int64_t* hi, bool halos) {
  return guard(call, [&] {
    const ArrayBase& a = *live(array, "array")->impl;
    need(lo, "lo");
    need(hi, "hi");
    a.bounds(lo, hi, halos);
  });
}

}  // namespace

extern "C" int compas_array_bounds(const compas_array* array, int64_t* lo, int64_t* hi) {
  return bounds("compas_array_bounds", array, lo, hi, false);
}

extern "C" int compas_array_halo_bounds(const compas_array* array, int64_t* lo, int64_t* hi) {
  return bounds("compas_array_halo_bounds", array, lo, hi, true);
}

extern "C" int compas_array_data(const compas_array* array, void* data, int64_t* strides) {
  return guard("compas_array_data", [&] {
    ArrayBase& a = *live(array, "array")->impl;
    need(data, "data");
    *static_cast<void**>(data) = a.data(strides);
  });
}

namespace {

// The live array, with no exchange pending on it.
compas_array* idle(compas_array* array) {
  compas_array* a = live(array, "array");
  if (a->pending != nullptr)
    throw Error(COMPAS_ERR_STATE, "the array has an exchange pending: wait for it first");
  return a;
}

}  // namespace

extern "C" int compas_array_exchange(compas_array* array) {
  return guard("compas_array_exchange", [&] { idle(array)->impl->exchange(); });
}

extern "C" int compas_array_accumulate_halos(compas_array* array) {
  return guard("compas_array_accumulate_halos", [&] { idle(array)->impl->accumulate(); });
}

extern "C" int compas_array_begin_exchange(compas_array* array, compas_exchange** exchange) {
  return guard("compas_array_begin_exchange", [&] {
    need(exchange, "exchange");
    *exchange = nullptr;
    compas_array* a = idle(array);
    auto x = std::make_unique<compas_exchange>(a);
    x->x = a->impl->begin();
    a->pending = track(x.release());
    *exchange = a->pending;
  });
}

extern "C" int compas_exchange_wait(compas_exchange** exchange) {
  return guard("compas_exchange_wait", [&] {
    need(exchange, "exchange");
    compas_exchange* x = live(*exchange, "*exchange");
    finish_pending(*x->array);
    *exchange = nullptr;
  });
}

extern "C" int compas_exchange_test(compas_exchange* exchange, int* done) {
  return guard("compas_exchange_test", [&] {
    compas_exchange* x = live(exchange, "exchange");
    need(done, "done");
    *done = x->x.test() ? 1 : 0;
  });
}

extern "C" int compas_array_swap(compas_array* a, compas_array* b) {
  return guard("compas_array_swap", [&] {
    compas_array* x = live(a, "a");
    compas_array* y = live(b, "b");
    check_collective_thread(*x->rt);
    if (x->impl->type != y->impl->type || x->impl->dims != y->impl->dims)
      throw Error(COMPAS_ERR_ARG, "a is of type " + std::to_string(x->impl->type) + " in " +
                                      std::to_string(x->impl->dims) + " dims, b of type " +
                                      std::to_string(y->impl->type) + " in " +
                                      std::to_string(y->impl->dims) + ": the same are needed");
    if (x->pending != nullptr || y->pending != nullptr)
      throw Error(COMPAS_ERR_STATE, "an exchange is pending: wait for it before the swap");
    std::swap(x->impl, y->impl);
    std::swap(x->on, y->on);  // the group an array lies on goes with its contents
  });
}
