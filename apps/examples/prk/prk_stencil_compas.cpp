// prk_stencil_openmp.cpp ported to processes x threads on compas: the same star or grid stencil
// of radius 1..5 on an n x n grid cut in blocks over a near-square process grid; every
// `#pragma omp` line is kept. What changed (diff -u prk_stencil_openmp.cpp prk_stencil_compas.cpp):
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's OpenMP threads.
//  2. in and out become 2-D DistArrays over rows and columns [0, n), Decomposition::grid, with
//     `radius` halo cells; in(i, j) is indexed globally, so the loop bodies are the original's and
//     the loops run over this process's part (the stencil over its part of the active points,
//     compas::intersect of its part and the active square).
//  3. in.exchange_halos() before each sweep brings the neighbours' edges into the halos.
//  4. The timer starts after compas::barrier(rt) (PRK's MPI_Barrier); the job's time is the slowest
//     process's; the L1 norm is reduced over the processes; process 0 prints.
// Usage: prk_stencil_compas ITERATIONS N [RADIUS (2)] [star|grid (star)]  (compas-run -n P -t T)
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "compas/compas.hpp"
#include "prk_common.hpp"

using Grid = compas::DistArray<double, 2>;

// out += stencil(in) on rows x cols; radius and shape fixed at compile time.
template <int R, bool Star>
void apply(const Grid& in, Grid& out, compas::Range rows, compas::Range cols,
           const std::vector<double>& w) {
  const double* c = &w[R * (2 * R + 1) + R];  // c[di * (2R + 1) + dj] weighs in(i + di, j + dj)
#pragma omp parallel for
  for (long i = rows.lo; i < rows.hi; ++i)
    for (long j = cols.lo; j < cols.hi; ++j) {
      double s = out(i, j);
      if constexpr (Star)
        for (long k = 1; k <= R; ++k)
          s += c[-k * (2 * R + 1)] * in(i - k, j) + c[k * (2 * R + 1)] * in(i + k, j) +
               c[-k] * in(i, j - k) + c[k] * in(i, j + k);
      else
        for (long di = -R; di <= R; ++di)
          for (long dj = -R; dj <= R; ++dj) s += c[di * (2 * R + 1) + dj] * in(i + di, j + dj);
      out(i, j) = s;
    }
}
using Sweep = decltype(&apply<1, true>);
constexpr Sweep sweeps[2][6] = {
    {nullptr, apply<1, false>, apply<2, false>, apply<3, false>, apply<4, false>, apply<5, false>},
    {nullptr, apply<1, true>, apply<2, true>, apply<3, true>, apply<4, true>, apply<5, true>}};

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);  // (1)
  prk::check_count(argc, argv, 2, {"ITERATIONS", "N", "RADIUS", "star|grid"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const long r = prk::integer(argc, argv, 3, "radius", 1, 2, 5);
  const long n = prk::integer(argc, argv, 2, "n", 2 * r + 1, 0, 1L << 20);
  const bool star = prk::choice(argc, argv, 4, "stencil", "star", "grid", true);
  if (rt.process() == 0)
    std::printf(
        "Parallel Research Kernels: stencil on a 2-D grid (compas)\n"
        "Number of processes  = %d\nNumber of threads    = %d\n"
        "Grid size            = %ld\nRadius of stencil    = %ld\n"
        "Type of stencil      = %s\nNumber of iterations = %ld\n",
        rt.processes(), omp_get_max_threads(), n, r, star ? "star" : "grid", iterations);
  const std::vector<double> w = prk::stencil_weights(r, star);
  const Sweep sweep = sweeps[star][r];

  Grid in = prk::or_bad_input([&] {  // (2)
    return Grid(rt, {{0, n}, {0, n}}, {.halo = r, .decomposition = compas::Decomposition::grid});
  });
  Grid out = in.like();
  const compas::Range rows = in.rows(), cols = in.cols();
  const compas::Range2 act = compas::intersect(in.owned(), {{r, n - r}, {r, n - r}});
#pragma omp parallel for
  for (long i = rows.lo; i < rows.hi; ++i)
    for (long j = cols.lo; j < cols.hi; ++j) in(i, j) = static_cast<double>(i + j);

  double start = 0;
  for (long it = 0; it <= iterations; ++it) {
    if (it == 1) {
      compas::barrier(rt);  // (4) the processes start the clock together
      start = omp_get_wtime();
    }
    in.exchange_halos();  // (3)
    sweep(in, out, act.rows, act.cols, w);
#pragma omp parallel for
    for (long i = rows.lo; i < rows.hi; ++i)
      for (long j = cols.lo; j < cols.hi; ++j) in(i, j) += 1.0;
  }
  const double seconds = rt.allreduce(omp_get_wtime() - start, compas::op::max{});

  if (prk::perturbed() && out.owned().contains(n / 2, n / 2)) out(n / 2, n / 2) += 1.0;
  double norm = 0;
#pragma omp parallel for reduction(+ : norm)
  for (long i = act.rows.lo; i < act.rows.hi; ++i)
    for (long j = act.cols.lo; j < act.cols.hi; ++j) norm += std::fabs(out(i, j));
  norm = rt.allreduce(norm, compas::op::sum{});
  return prk::stencil_verdict(iterations, n, r, star, norm, seconds, rt.process() == 0);
}
