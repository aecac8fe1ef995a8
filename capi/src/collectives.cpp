// compas_allreduce, compas_broadcast, compas_exscan and their group forms over compas::Processes.
#include "collectives.hpp"

#include <algorithm>
#include <span>

#include "counts.hpp"
#include "handles.hpp"
#include "types.hpp"

namespace compas::capi {
namespace {

// body(T{}, f, in, out, n) with the C++ type of `type`, the operator of `op`, and in, out checked
// for `count` elements (count_of).
template <class F>
void typed(int type, int op, const void* in, void* out, std::int64_t count, F body) {
  with_type(type, [&](auto t) {
    using T = decltype(t);
    with_op(op, [&](auto f) {
      const std::size_t n = count_of(count, sizeof(T), in, "in");
      count_of(count, sizeof(T), out, "out");
      body(t, f, static_cast<const T*>(in), static_cast<T*>(out), n);
    });
  });
}

}  // namespace

void allreduce(Processes ps, const void* in, void* out, std::int64_t count, int type, int op) {
  typed(type, op, in, out, count, [&](auto t, auto f, const auto* i, auto* o, std::size_t n) {
    using T = decltype(t);
    compas::allreduce<T>(ps, std::span<const T>(i, n), std::span<T>(o, n), f);
  });
}

void broadcast(Processes ps, void* data, std::int64_t count, int type, int root) {
  with_type(type, [&](auto t) {
    using T = decltype(t);
    const std::size_t n = count_of(count, sizeof(T), data, "data");
    compas::broadcast(ps, std::span<T>(static_cast<T*>(data), n), root);
  });
}

void exscan(Processes ps, const void* in, void* out, std::int64_t count, int type, int op) {
  typed(type, op, in, out, count, [&](auto t, auto f, const auto* i, auto* o, std::size_t n) {
    using T = decltype(t);
    compas::exclusive_scan<T>(ps, std::span<const T>(i, n), std::span<T>(o, n), identity_of<T>(f),
                              f);
  });
}

}  // namespace compas::capi

using namespace compas::capi;

extern "C" int compas_allreduce(compas_runtime* rt, const void* in, void* out, int64_t count,
                                int type, int op) {
  return guard("compas_allreduce",
               [&] { allreduce(*live(rt, "rt")->runtime, in, out, count, type, op); });
}

extern "C" int compas_broadcast(compas_runtime* rt, void* data, int64_t count, int type, int root) {
  return guard("compas_broadcast",
               [&] { broadcast(*live(rt, "rt")->runtime, data, count, type, root); });
}

extern "C" int compas_exscan(compas_runtime* rt, const void* in, void* out, int64_t count, int type,
                             int op) {
  return guard("compas_exscan",
               [&] { exscan(*live(rt, "rt")->runtime, in, out, count, type, op); });
}
