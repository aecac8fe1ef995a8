/* heat_openmp.c ported to hybrid mode with compas's C API: the same 1-D heat equation on P
 * processes x T threads; every `#pragma omp` line is kept. Run it alone (1 x T), or
 * `compas-run -n P -t T heat_compas N STEPS`, or under mpirun / srun. What changed
 * (diff -u heat_openmp.c heat_compas.c), and why:
 *
 *  1. compas_start joins the job and pins this process's T threads, OpenMP's included, inside the
 *     cores the launcher gave it (--threads, --bind, COMPAS_*, or OMP_NUM_THREADS). Its errors
 *     end the job with their message (as MPI's default handler does), status 2 for bad input such
 *     as a bad flag, so no call needs a check.
 *  2. The two calloc'd arrays become distributed arrays over the global indices 1..n: each
 *     process holds its block [lo, hi) and one halo point on each side. Their local blocks are
 *     indexed as the original's arrays were (u[0] and u[hi - lo + 1] the halos, u[1..hi - lo] the
 *     points, global index lo - 1 + i), so the loops keep their bodies.
 *  3. compas_exchange_halos before each step puts the edge points into the neighbours' halos; it
 *     finds the array by its address, so the pointers swap as before.
 *  4. The OpenMP reduction gives this process's maximum; compas_allreduce combines the
 *     processes'; process 0 prints the original's line; compas_finalize frees the arrays. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "compas/compas.h"

int main(int argc, char** argv) {
  compas_runtime* rt = compas_start(&argc, &argv);   /* (1) */
  const long n = argc > 1 ? atol(argv[1]) : 1000000; /* interior points */
  const int steps = argc > 2 ? atoi(argv[2]) : 200;
  const double pi = 3.14159265358979323846, h = 1.0 / (n + 1.0), r = 0.25;

  double* u = compas_alloc(rt, COMPAS_DOUBLE, 1, &(int64_t){1}, &(int64_t){n + 1}, NULL); /* (2) */
  double* v = compas_alloc(rt, COMPAS_DOUBLE, 1, &(int64_t){1}, &(int64_t){n + 1}, NULL);
  int64_t lo, hi;
  compas_bounds(u, &lo, &hi);
#pragma omp parallel for
  for (long i = 1; i <= hi - lo; ++i) u[i] = sin(pi * (lo - 1 + i) * h);

  for (int s = 0; s < steps; ++s) {
    compas_exchange_halos(u); /* (3) */
#pragma omp parallel for
    for (long i = 1; i <= hi - lo; ++i) v[i] = u[i] + r * (u[i - 1] - 2 * u[i] + u[i + 1]);
    double* t = u;
    u = v;
    v = t;
  }

  double top = 0;
#pragma omp parallel for reduction(max : top)
  for (long i = 1; i <= hi - lo; ++i) top = top < u[i] ? u[i] : top;
  compas_allreduce(rt, &top, &top, 1, COMPAS_DOUBLE, COMPAS_MAX); /* (4) */

  const double g = 1 - 2 * r * (1 - cos(pi * h));
  const double exact = pow(g, steps) * sin(pi * ((n + 1) / 2) * h);
  if (compas_rank(rt) == 0)
    printf("n %ld steps %d threads %d: result = %.15e, exact %.15e\n", n, steps,
           omp_get_max_threads(), top, exact);
  compas_finalize(&rt);
  return fabs(top - exact) <= 1e-12 ? 0 : 1;
}
