// The typed operators of allreduce and reduce (collectives.cpp, collectives_reduce.cpp): integer
// sums and products that wrap, and loops combining two vectors element by element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "compas/comm/collectives.hpp"

namespace compas::comm::detail {

// The element type's code in a chunk's header (Header::arg).
template <class T>
constexpr std::uint64_t type_code() {
  if constexpr (std::is_same_v<T, std::int32_t>) return 1;
  if constexpr (std::is_same_v<T, std::int64_t>) return 2;
  if constexpr (std::is_same_v<T, std::uint32_t>) return 3;
  if constexpr (std::is_same_v<T, std::uint64_t>) return 4;
  if constexpr (std::is_same_v<T, float>) return 5;
  if constexpr (std::is_same_v<T, double>) return 6;
  return 0;
}

// Integer sums and products wrap instead of overflowing (signed overflow is undefined).
template <class T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// dst[i] = f(src[i], dst[i]) when src_first, f(dst[i], src[i]) otherwise.
template <class T, class F>
void combine_with(T* dst, const T* src, std::size_t n, bool src_first, F f) {
  if (src_first)
    for (std::size_t i = 0; i < n; ++i) dst[i] = f(src[i], dst[i]);
  else
    for (std::size_t i = 0; i < n; ++i) dst[i] = f(dst[i], src[i]);
}

// dst[i] = f(a[i], b[i]); dst may be a.
template <class T, class F>
void combine_into(T* dst, const T* a, const T* b, std::size_t n, F f) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = f(a[i], b[i]);
}
template <class T>
void combine_into(T* dst, const T* a, const T* b, std::size_t n, Op op) {
  switch (op) {
    case Op::sum:
      combine_into(dst, a, b, n, wrap_add<T>);
      break;
    case Op::prod:
      combine_into(dst, a, b, n, wrap_mul<T>);
      break;
    case Op::min:
      combine_into(dst, a, b, n, [](T x, T y) { return y < x ? y : x; });
      break;
    case Op::max:
      combine_into(dst, a, b, n, [](T x, T y) { return x < y ? y : x; });
      break;
  }
}

template <class T>
void combine(T* dst, const T* src, std::size_t n, bool src_first, Op op) {
  switch (op) {
    case Op::sum:
      combine_with(dst, src, n, src_first, wrap_add<T>);
      break;
    case Op::prod:
      combine_with(dst, src, n, src_first, wrap_mul<T>);
      break;
    case Op::min:
      combine_with(dst, src, n, src_first, [](T a, T b) { return b < a ? b : a; });
      break;
    case Op::max:
      combine_with(dst, src, n, src_first, [](T a, T b) { return a < b ? b : a; });
      break;
  }
}

// Binomial tree over virtual ranks 0..n-1 rooted at 0 (collectives.cpp).
void binomial(int v, int n, int& parent, std::vector<int>& children);

}  // namespace compas::comm::detail
