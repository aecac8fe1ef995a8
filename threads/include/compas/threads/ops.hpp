// Reduction operators shared by team, node and hybrid collectives. Any callable (T, T) -> T
// works with the collectives; these are the common ones, applied in rank order so results are
// reproducible for a fixed team size.
#pragma once

#include <algorithm>

namespace compas::op {

struct sum {
  template <class T>
  T operator()(const T& a, const T& b) const {
    return a + b;
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
