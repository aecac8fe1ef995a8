// Reduction operators shared by team, process and hybrid collectives. Any callable (T, T) -> T
// works with the collectives; these are the common ones, applied in rank order so results are
// reproducible for a fixed team size.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>

namespace compas::op {

struct sum {
  template <class T>
  T operator()(const T& a, const T& b) const {
    return a + b;
  }
  // Element by element: several sums in one reduction (rt.transform_reduce, allreduce).
  template <class T, std::size_t N>
  std::array<T, N> operator()(const std::array<T, N>& a, const std::array<T, N>& b) const {
    std::array<T, N> c;
    for (std::size_t k = 0; k < N; ++k) c[k] = a[k] + b[k];
    return c;
  }
};
struct prod {
  template <class T>
  T operator()(const T& a, const T& b) const {
    return a * b;
  }
};
struct min {
  template <class T>
  T operator()(const T& a, const T& b) const {
    return std::min(a, b);
  }
};
struct max {
  template <class T>
  T operator()(const T& a, const T& b) const {
    return std::max(a, b);
  }
};
struct bit_or {
  template <class T>
  T operator()(const T& a, const T& b) const {
    return a | b;
  }
};
struct bit_and {
  template <class T>
  T operator()(const T& a, const T& b) const {
    return a & b;
  }
};

}  // namespace compas::op
