// heat_openmp.cpp ported to hybrid mode with the porting layer: the same 1-D heat equation on P
// processes x T threads; every `#pragma omp` line is kept. Run it alone (1 x T), or
// `compas-run -n P -t T heat_hybrid N STEPS`, or under mpirun / srun. What changed
// (diff -u heat_openmp.cpp heat_hybrid.cpp), and why:
//
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's T threads, OpenMP's
//     included, inside the cores the launcher gave it (--threads, --bind, COMPAS_*, or
//     OMP_NUM_THREADS).
//  2. The two std::vectors become DistArrays over the same global indices 1..n: each process
//     holds its block of points and one halo point on each side; u[i] is still indexed globally,
//     so the loops keep their bodies and run over u.lo()..u.hi() (this process's block).
//  3. u.exchange_halos() before each step puts the edge points into the neighbours' halos
//     (one-sided put_signal; plain memory copies between processes of one host).
//  4. The OpenMP reduction gives this process's maximum; rt.allreduce combines the processes'.
// heat_window.cpp is the same port written on raw windows.
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "compas/compas.hpp"

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);                          // (1)
  const long n = argc > 1 ? std::atol(argv[1]) : 1000000;  // interior points
  const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  const double pi = 3.14159265358979323846, h = 1.0 / (n + 1.0), r = 0.25;

  compas::DistArray<double> u(rt, {1, n + 1}), v(rt, {1, n + 1});  // (2)
#pragma omp parallel for
  for (long i = u.lo(); i < u.hi(); ++i) u[i] = std::sin(pi * i * h);

  for (int s = 0; s < steps; ++s) {
    u.exchange_halos();  // (3)
#pragma omp parallel for
    for (long i = u.lo(); i < u.hi(); ++i) v[i] = u[i] + r * (u[i - 1] - 2 * u[i] + u[i + 1]);
    std::swap(u, v);
  }

  double top = 0;
#pragma omp parallel for reduction(max : top)
  for (long i = u.lo(); i < u.hi(); ++i) top = std::max(top, u[i]);
  top = rt.allreduce(top, compas::op::max{});  // (4)

  const double g = 1 - 2 * r * (1 - std::cos(pi * h));
  const double exact = std::pow(g, steps) * std::sin(pi * ((n + 1) / 2) * h);
  if (rt.process() == 0)
    std::printf("n %ld steps %d processes %d threads %d: result = %.15e, exact %.15e\n", n, steps,
                rt.processes(), omp_get_max_threads(), top, exact);
  return std::fabs(top - exact) <= 1e-12 ? 0 : 1;
}
