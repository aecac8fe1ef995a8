// The values the DistArray tests write and expect (test_dist_array.cpp, test_dist_overlap.cpp):
// every owner writes a function of the global index and of the exchange, halo cells nobody should
// write hold kUnset, and the checks count the cells that differ.
#pragma once

#include <gtest/gtest.h>

#include "../common/job_main.hpp"
#include "compas/compas.hpp"

namespace {

using compas::DistArray;
using compas::index;
using compas::Range;
using compas::Range2;

inline compas::Runtime& rt() {
  return *g_rt;
}

constexpr double kUnset = -1.0;  // halo cells nobody should write

// The value a cell holds after exchange k: distinct per global index and per exchange.
inline double f2(index i, index j, int k) {
  return static_cast<double>(i) * 1000 + static_cast<double>(j) + k * 1e7;
}

inline index wrap(index i, Range d) {
  return d.lo + ((i - d.lo) % d.size() + d.size()) % d.size();
}

// What cell (i, j) must hold after exchange k: the owner's value, or kUnset past a boundary.
inline double expected2(index i, index j, Range2 d, bool periodic, int k) {
  if (d.contains(i, j)) return f2(i, j, k);
  if (!periodic) return kUnset;
  return f2(wrap(i, d.rows), wrap(j, d.cols), k);
}

// Counts the halo cells of u that differ from exchange k's values (as run2 checks them).
inline int wrong_halos(const DistArray<double, 2>& u, bool periodic, int k) {
  int wrong = 0;
  const Range2 all = u.with_halos();
  for (index i = all.rows.lo; i < all.rows.hi; ++i)
    for (index j = all.cols.lo; j < all.cols.hi; ++j)
      if (u(i, j) != expected2(i, j, u.domain(), periodic, k) && ++wrong <= 3)
        ADD_FAILURE() << "rank " << rt().process() << " cell (" << i << ", " << j << ") holds "
                      << u(i, j) << " after exchange " << k;
  return wrong;
}

inline void fill_owned(DistArray<double, 2>& u, int k) {
  const Range2 all = u.with_halos();
  for (index i = all.rows.lo; i < all.rows.hi; ++i)
    for (index j = all.cols.lo; j < all.cols.hi; ++j)
      u(i, j) = u.owned().contains(i, j) ? f2(i, j, k) : kUnset;
}

}  // namespace
