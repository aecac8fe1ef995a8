// jacobi2d_openmp.cpp ported to hybrid mode with the porting layer: the same 2-D heat equation on
// P processes x T threads, the grid cut in blocks over a near-square process grid; every
// `#pragma omp` line is kept. Run it alone (1 x T), `compas-run -n P -t T jacobi2d_hybrid N STEPS`,
// or under mpirun / srun. What changed (diff -u jacobi2d_openmp.cpp jacobi2d_hybrid.cpp):
//
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's threads, OpenMP's
//     included.
//  2. The two std::vectors become 2-D DistArrays over the global rows and columns 1..n, in blocks
//     over the process grid, with one halo row and column on each side; u(i, j) is indexed
//     globally, so the loop bodies are the OpenMP ones, and the loops run over this process's
//     rows() and cols().
//  3. u.exchange_halos() before each step fills the halos from the neighbours (one-sided
//     put_signal; memory copies between processes of one host).
//  4. The OpenMP reduction gives this process's maximum; rt.allreduce combines the processes'.
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "compas/compas.hpp"

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);                       // (1)
  const long n = argc > 1 ? std::atol(argv[1]) : 2000;  // interior points per side
  const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
  const double pi = 3.14159265358979323846, h = 1.0 / (n + 1.0), r = 0.2;

  const compas::Range2 grid{{1, n + 1}, {1, n + 1}};  // (2)
  compas::DistArray<double, 2> u(rt, grid, {.decomposition = compas::Decomposition::grid}),
      v = u.like();
  const compas::Range rows = u.rows(), cols = u.cols();
#pragma omp parallel for
  for (long i = rows.lo; i < rows.hi; ++i)
    for (long j = cols.lo; j < cols.hi; ++j) u(i, j) = std::sin(pi * i * h) * std::sin(pi * j * h);

  for (int s = 0; s < steps; ++s) {
    u.exchange_halos();  // (3)
#pragma omp parallel for
    for (long i = rows.lo; i < rows.hi; ++i)
      for (long j = cols.lo; j < cols.hi; ++j)
        v(i, j) =
            u(i, j) + r * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) - 4 * u(i, j));
    std::swap(u, v);
  }

  double top = 0;
#pragma omp parallel for reduction(max : top)
  for (long i = rows.lo; i < rows.hi; ++i)
    for (long j = cols.lo; j < cols.hi; ++j) top = std::max(top, u(i, j));
  top = rt.allreduce(top, compas::op::max{});  // (4)

  const double g = 1 - 4 * r * (1 - std::cos(pi * h)), peak = std::sin(pi * ((n + 1) / 2) * h);
  const double exact = std::pow(g, steps) * peak * peak;
  if (rt.process() == 0)
    std::printf("n %ld steps %d processes %d threads %d: result = %.15e, exact %.15e\n", n, steps,
                rt.processes(), omp_get_max_threads(), top, exact);
  return std::fabs(top - exact) <= 1e-12 ? 0 : 1;
}
