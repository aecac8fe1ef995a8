// prk_heat3d_openmp.cpp ported to processes x threads on compas, with the halo exchange
// overlapped with the interior's update. What changed (diff -u prk_heat3d_openmp.cpp
// prk_heat3d_compas.cpp):
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's OpenMP threads.
//  2. u and v become 3-D DistArrays over the interior [1, N]^3 with one halo cell on every side
//     (over the faces of the cube they stay 0: the boundary); the loops run over this process's
//     part, with the original's loop body in a lambda over a box of it.
//  3. Each step begins the halo exchange, updates the part that needs no halo (compas::inner),
//     waits, then updates the rest (compas::rim); swap(u, v) as before.
//  4. The timer starts after compas::barrier(rt); the job's time is the slowest process's; the error is
//     the largest over the processes; process 0 prints.
// Usage: prk_heat3d_compas ITERATIONS N   (compas-run -n P -t T, mpirun, srun, or alone)
#include <omp.h>

#include <cmath>
#include <cstdio>

#include "compas/compas.hpp"
#include "prk_common.hpp"

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);  // (1)
  prk::check_count(argc, argv, 2, {"ITERATIONS", "N"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const long n = prk::integer(argc, argv, 2, "n", rt.processes());
  if (rt.process() == 0)
    std::printf(
        "3-D heat, 7-point stencil (compas)\nNumber of processes  = %d\nNumber of threads    = %d\n"
        "Grid size            = %ld^3\nNumber of iterations = %ld\n",
        rt.processes(), omp_get_max_threads(), n, iterations);

  compas::DistArray<double, 3> u(rt, {{1, n + 1}, {1, n + 1}, {1, n + 1}}), v = u.like();  // (2)
  const compas::Range3 own = u.owned();
  const double r = 0.125;
#pragma omp parallel for
  for (long i = own.planes.lo; i < own.planes.hi; ++i)
    for (long j = own.rows.lo; j < own.rows.hi; ++j)
      for (long k = own.cols.lo; k < own.cols.hi; ++k) u(i, j, k) = prk::heat3d_mode(n, i, j, k);

  auto step = [&](const compas::Range3& b) {  // (2) (a rim slab may be one plane thick)
#pragma omp parallel for collapse(2)
    for (long i = b.planes.lo; i < b.planes.hi; ++i)
      for (long j = b.rows.lo; j < b.rows.hi; ++j)
        for (long k = b.cols.lo; k < b.cols.hi; ++k)
          v(i, j, k) =
              u(i, j, k) + r * (u(i - 1, j, k) + u(i + 1, j, k) + u(i, j - 1, k) + u(i, j + 1, k) +
                                u(i, j, k - 1) + u(i, j, k + 1) - 6.0 * u(i, j, k));
  };
  double start = 0;
  for (long it = 0; it <= iterations; ++it) {
    if (it == 1) {
      compas::barrier(rt);  // (4)
      start = omp_get_wtime();
    }
    auto halos = u.begin_exchange();  // (3)
    step(compas::inner(own, 1));
    halos.wait();
    for (const compas::Range3& b : compas::rim(own, 1)) step(b);
    swap(u, v);
  }
  const double seconds = rt.allreduce(omp_get_wtime() - start, compas::op::max{});  // (4)

  const long mid = n / 2 + 1;
  if (prk::perturbed() && own.contains(mid, mid, mid)) u(mid, mid, mid) += 1.0;
  double err = 0;
#pragma omp parallel for reduction(max : err)
  for (long i = own.planes.lo; i < own.planes.hi; ++i)
    for (long j = own.rows.lo; j < own.rows.hi; ++j)
      for (long k = own.cols.lo; k < own.cols.hi; ++k)
        err = std::fmax(err, std::fabs(u(i, j, k) - prk::heat3d_exact(n, r, iterations, i, j, k)));
  err = rt.allreduce(err, compas::op::max{});
  return prk::heat3d_verdict(iterations, n, r, err, seconds, rt.process() == 0);
}
