// The C API's element types and operators as C++ types: with_type(type, f) calls f(T{}) for the
// enum compas_type value, with_op(op, f) calls f with compas::op::sum{} ... for enum compas_op.
// Both throw Error(COMPAS_ERR_ARG) naming a value outside their enum and what is allowed.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "compas/compas.h"
#include "compas/threads/ops.hpp"
#include "errors.hpp"

namespace compas::capi {

template <class F>
decltype(auto) with_type(int type, F&& f) {
  switch (type) {
    case COMPAS_DOUBLE:
      return f(double{});
    case COMPAS_FLOAT:
      return f(float{});
    case COMPAS_INT32:
      return f(std::int32_t{});
    case COMPAS_INT64:
      return f(std::int64_t{});
  }
  throw Error(COMPAS_ERR_ARG, "type " + std::to_string(type) +
                                  " is not an element type: COMPAS_DOUBLE (1), COMPAS_FLOAT (2), "
                                  "COMPAS_INT32 (3) or COMPAS_INT64 (4)");
}

template <class F>
decltype(auto) with_op(int op, F&& f) {
  switch (op) {
    case COMPAS_SUM:
      return f(compas::op::sum{});
    case COMPAS_MIN:
      return f(compas::op::min{});
    case COMPAS_MAX:
      return f(compas::op::max{});
    case COMPAS_PROD:
      return f(compas::op::prod{});
  }
  throw Error(COMPAS_ERR_ARG, "op " + std::to_string(op) +
                                  " is not an operator: COMPAS_SUM (1), COMPAS_MIN (2), "
                                  "COMPAS_MAX (3) or COMPAS_PROD (4)");
}

// op's identity for T (what an exclusive scan gives process 0).
template <class T, class Op>
T identity_of(Op) {
  if constexpr (std::is_same_v<Op, compas::op::sum>) return T{0};
  if constexpr (std::is_same_v<Op, compas::op::prod>) return T{1};
  if constexpr (std::is_same_v<Op, compas::op::min>) return std::numeric_limits<T>::max();
  if constexpr (std::is_same_v<Op, compas::op::max>) return std::numeric_limits<T>::lowest();
}

// The bytes of one element of `type` (Error as with_type's for a value outside the enum).
inline std::size_t size_of(int type) {
  return with_type(type, [](auto t) { return sizeof(t); });
}

}  // namespace compas::capi
