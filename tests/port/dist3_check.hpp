// What the tests of 3-D partitions, levels and group arrays check on every process: owned cells
// hold a function of the global index, halo cells are marked before an exchange, and afterwards
// every halo cell holds its image's value (wrapped in a periodic dimension) or still the mark
// beyond a non-periodic boundary. Counts are summed over the job, so every process sees the same
// verdict; a process holding no cells (outside an array's group) counts none.
#pragma once

#include <array>
#include <string>

#include "../common/job_main.hpp"
#include "compas/compas.hpp"

namespace dist3 {

using compas::index;
using Array = compas::DistArray<double, 3>;

inline constexpr double kMark = -1.0;

inline double value(index i, index j, index k, int step) {
  return static_cast<double>(i) * 1e6 + static_cast<double>(j) * 1e3 + static_cast<double>(k) +
         0.25 * step;
}

// Owned cells value(., step), halo cells the mark.
inline void fill(Array& u, int step) {
  if (!u.member()) return;
  const compas::Range3 w = u.with_halos(), o = u.owned();
  for (index i = w.planes.lo; i < w.planes.hi; ++i)
    for (index j = w.rows.lo; j < w.rows.hi; ++j)
      for (index k = w.cols.lo; k < w.cols.hi; ++k)
        u(i, j, k) = o.contains(i, j, k) ? value(i, j, k, step) : kMark;
}

inline std::string cell_text(index i, index j, index k, double have, double want) {
  return "process " + std::to_string(g_rt->process()) + ": (" + std::to_string(i) + ", " +
         std::to_string(j) + ", " + std::to_string(k) + ") holds " + std::to_string(have) +
         ", not " + std::to_string(want);
}

// Cells (over the job) of `box` (owned or with halos) whose value differs from want(i, j, k);
// the first of this process's in `first`.
template <class Want>
long wrong_cells(const Array& u, const compas::Range3& box, Want want, std::string* first) {
  long bad = 0;
  if (u.member())
    for (index i = box.planes.lo; i < box.planes.hi; ++i)
      for (index j = box.rows.lo; j < box.rows.hi; ++j)
        for (index k = box.cols.lo; k < box.cols.hi; ++k) {
          const double w = want(i, j, k);
          if (u(i, j, k) == w) continue;
          if (bad++ == 0 && first) *first = cell_text(i, j, k, u(i, j, k), w);
        }
  return compas::allreduce(*g_rt, bad, compas::op::sum{});
}

// After fill(u, step) and an exchange: halo cells against the definition (owned cells too).
inline long wrong_halos(const Array& u, const std::array<bool, 3>& periodic, int step,
                        std::string* first) {
  const compas::Range3 dom = u.domain();
  const auto want = [&](index i, index j, index k) {
    std::array<index, 3> g{i, j, k};
    for (int d = 0; d < 3; ++d) {
      const compas::Range r = dom.dim(d);
      if (r.contains(g[d])) continue;
      if (!periodic[d]) return kMark;
      g[d] = r.lo + ((g[d] - r.lo) % r.size() + r.size()) % r.size();
    }
    return value(g[0], g[1], g[2], step);
  };
  return wrong_cells(u, u.member() ? u.with_halos() : u.owned(), want, first);
}

// Owned cells against value(., step).
inline long wrong_owned(const Array& u, int step, std::string* first) {
  return wrong_cells(
      u, u.owned(), [&](index i, index j, index k) { return value(i, j, k, step); }, first);
}

// Owned cells summed over the job (each process's part counted once: the parts tile the domain).
inline index owned_over_job(const Array& u) {
  return compas::allreduce(*g_rt, u.member() ? u.owned().size() : index{0}, compas::op::sum{});
}

}  // namespace dist3
