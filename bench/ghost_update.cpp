// The ghosted vector's costs on the sparse CG mini-app's matrix (apps/examples/sparse_cg/): each
// process's rows of the 27-point stencil on an N^3 grid, its z-planes in the block split, int32
// global columns. Prints, from process 0, the median of REPEATS runs of
//  - plan: GhostPlan::for_columns (owned columns a range check, the others hashed) against the
//    same renumbering by a full sort of the column list and a binary search per entry (what a
//    GatherPlan with positions does), both on a fresh copy of the columns;
//  - update: GhostedVector::update_ghosts(), against a plain copy of the owned entries (the
//    OpenMP original's per-step copy loop) of the same vector.
// Usage: compas-run -n P -t T ghost_update [N [REPEATS]]   (default 64 5)
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "compas/compas.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The columns of rows [first, first + rows) of the 27-point stencil on an n^3 grid.
std::vector<int> columns(int n, long first, long rows) {
  std::vector<int> c;
  for (long i = first; i < first + rows; ++i) {
    const int x = i % n, y = (i / n) % n, z = i / (static_cast<long>(n) * n);
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          if (x + dx >= 0 && x + dx < n && y + dy >= 0 && y + dy < n && z + dz >= 0 && z + dz < n)
            c.push_back(((z + dz) * n + y + dy) * n + x + dx);
  }
  return c;
}

template <class F>
double median_of(int repeats, F f) {
  std::vector<double> t;
  for (int k = 0; k < repeats; ++k) t.push_back(f());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);
  const int n = argc > 1 ? std::atoi(argv[1]) : 64, repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  const long plane = static_cast<long>(n) * n;
  const compas::Range z = compas::block_of({0, n}, rt.processes(), rt.process());
  const auto d = compas::Partition::from_local(rt, z.size() * plane);
  const std::vector<int> global = columns(n, z.lo * plane, z.size() * plane);
  const double plan_s = median_of(repeats, [&] {
    std::vector<int> c = global;
    compas::barrier(rt);
    const auto t0 = Clock::now();
    auto p = compas::GhostPlan::for_columns(d, c);
    return since(t0);
  });
  const double sort_s = median_of(repeats, [&] {
    std::vector<int> c = global;
    const auto t0 = Clock::now();
    std::vector<int> list = c;
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    for (int& e : c)
      e = static_cast<int>(std::lower_bound(list.begin(), list.end(), e) - list.begin());
    return since(t0);
  });
  std::vector<int> c = global;
  auto plan = compas::GhostPlan::for_columns(d, c);
  compas::GhostedVector<double> v(plan, 1.0);
  std::vector<double> copy(static_cast<std::size_t>(v.owned_size()));
  const int calls = 200;
  const double update_s = median_of(repeats, [&] {
    compas::barrier(rt);
    const auto t0 = Clock::now();
    for (int k = 0; k < calls; ++k) v.update_ghosts();
    return since(t0) / calls;
  });
  const double copy_s = median_of(repeats, [&] {
    const auto t0 = Clock::now();
    for (int k = 0; k < calls; ++k) {
#pragma omp parallel for
      for (long i = 0; i < v.owned_size(); ++i) copy[static_cast<std::size_t>(i)] = v[i];
    }
    return since(t0) / calls;
  });
  const long ghosts = rt.allreduce(static_cast<long>(v.ghost_count()), compas::op::max{});
  if (rt.process() == 0)
    std::printf(
        "ghost_update: %d^3, %d processes x %d threads, %zu columns and at most %ld ghosts per "
        "process\nplan: for_columns %.6f s, sort + binary search %.6f s\nupdate: "
        "update_ghosts %.3f us, copy of the owned entries %.3f us\n",
        n, rt.processes(), omp_get_max_threads(), global.size(), ghosts, plan_s, sort_s,
        update_s * 1e6, copy_s * 1e6);
  return 0;
}
