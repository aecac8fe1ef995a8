// A 3-D heat equation (not a PRK kernel; it follows their conventions: arguments, output, checks):
// u' = u + r (the 6 neighbours - 6 u), an explicit 7-point stencil, on the N^3 interior points of
// the unit cube with u = 0 on its faces, from u = sin(pi x) sin(pi y) sin(pi z). That product is
// an eigenvector of the discrete operator, so after s steps u is exactly g^s times it, g = 1 + 6 r
// (cos(pi h) - 1): the largest difference from it, over g^s, must stay below 1e-9. 9 flops per
// point and step. prk_heat3d_compas.cpp is its port to processes x threads.
// Usage: prk_heat3d_openmp ITERATIONS N   (threads: OMP_NUM_THREADS)
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "prk_common.hpp"

int main(int argc, char** argv) {
  prk::check_count(argc, argv, 2, {"ITERATIONS", "N"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const long n = prk::integer(argc, argv, 2, "n", 1);
  std::printf(
      "3-D heat, 7-point stencil (OpenMP)\nNumber of threads    = %d\n"
      "Grid size            = %ld^3\nNumber of iterations = %ld\n",
      omp_get_max_threads(), n, iterations);

  const long m = n + 2;  // with the boundary faces
  std::vector<double> u(m * m * m, 0.0), v(m * m * m, 0.0);
  auto at = [m](long i, long j, long k) { return (i * m + j) * m + k; };
  const double r = 0.125;
#pragma omp parallel for
  for (long i = 1; i <= n; ++i)
    for (long j = 1; j <= n; ++j)
      for (long k = 1; k <= n; ++k) u[at(i, j, k)] = prk::heat3d_mode(n, i, j, k);

  double start = 0;
  for (long it = 0; it <= iterations; ++it) {
    if (it == 1) start = omp_get_wtime();
#pragma omp parallel for
    for (long i = 1; i <= n; ++i)
      for (long j = 1; j <= n; ++j)
        for (long k = 1; k <= n; ++k)
          v[at(i, j, k)] =
              u[at(i, j, k)] + r * (u[at(i - 1, j, k)] + u[at(i + 1, j, k)] + u[at(i, j - 1, k)] +
                                    u[at(i, j + 1, k)] + u[at(i, j, k - 1)] + u[at(i, j, k + 1)] -
                                    6.0 * u[at(i, j, k)]);
    std::swap(u, v);
  }
  const double seconds = omp_get_wtime() - start;

  if (prk::perturbed()) u[at(n / 2 + 1, n / 2 + 1, n / 2 + 1)] += 1.0;
  double err = 0;
#pragma omp parallel for reduction(max : err)
  for (long i = 1; i <= n; ++i)
    for (long j = 1; j <= n; ++j)
      for (long k = 1; k <= n; ++k)
        err = std::fmax(err,
                        std::fabs(u[at(i, j, k)] - prk::heat3d_exact(n, r, iterations, i, j, k)));
  return prk::heat3d_verdict(iterations, n, r, err, seconds, true);
}
