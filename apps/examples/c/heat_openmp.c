/* The C original of heat_compas.c: heat_openmp.cpp written in C11, the same 1-D heat equation,
 * explicit in time, parallelised with OpenMP on one shared-memory node; it prints the same result
 * line as heat_openmp.cpp. Compare (diff -u heat_openmp.c heat_compas.c): heat_compas.c's header
 * explains each change.
 *
 * u_t = u_xx on (0, 1), u = 0 at both ends, u(x, 0) = sin(pi x): the exact discrete solution
 * after s steps is sin(pi x) * g^s with g = 1 - 2 r (1 - cos(pi h)), printed beside the result. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 1000000; /* interior points */
  const int steps = argc > 2 ? atoi(argv[2]) : 200;
  const double pi = 3.14159265358979323846, h = 1.0 / (n + 1.0), r = 0.25;

  double *u = calloc(n + 2, sizeof(double)), *v = calloc(n + 2, sizeof(double));
  if (!u || !v) return 1;
#pragma omp parallel for
  for (long i = 1; i <= n; ++i) u[i] = sin(pi * i * h);

  for (int s = 0; s < steps; ++s) {
#pragma omp parallel for
    for (long i = 1; i <= n; ++i) v[i] = u[i] + r * (u[i - 1] - 2 * u[i] + u[i + 1]);
    double* t = u;
    u = v;
    v = t;
  }

  double top = 0;
#pragma omp parallel for reduction(max : top)
  for (long i = 1; i <= n; ++i) top = top < u[i] ? u[i] : top;

  const double g = 1 - 2 * r * (1 - cos(pi * h));
  const double exact = pow(g, steps) * sin(pi * ((n + 1) / 2) * h);
  printf("n %ld steps %d threads %d: result = %.15e, exact %.15e\n", n, steps,
         omp_get_max_threads(), top, exact);
  free(u);
  free(v);
  return fabs(top - exact) <= 1e-12 ? 0 : 1;
}
