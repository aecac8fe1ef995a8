// The starting point of jacobi2d_hybrid.cpp: the 2-D heat equation, explicit in time (a Jacobi
// sweep of the 5-point stencil per step), parallelised with OpenMP on one shared-memory node.
//
// u_t = u_xx + u_yy on the unit square, u = 0 on the boundary, u(x, y, 0) = sin(pi x) sin(pi y):
// the exact discrete solution after s steps is sin(pi x) sin(pi y) g^s with
// g = 1 - 4 r (1 - cos(pi h)), printed beside the result.
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 2000;  // interior points per side
  const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
  const double pi = 3.14159265358979323846, h = 1.0 / (n + 1.0), r = 0.2;

  const long w = n + 2;  // row length, boundary included
  std::vector<double> u(w * w, 0.0), v(w * w, 0.0);
#pragma omp parallel for
  for (long i = 1; i <= n; ++i)
    for (long j = 1; j <= n; ++j) u[i * w + j] = std::sin(pi * i * h) * std::sin(pi * j * h);

  for (int s = 0; s < steps; ++s) {
#pragma omp parallel for
    for (long i = 1; i <= n; ++i)
      for (long j = 1; j <= n; ++j)
        v[i * w + j] = u[i * w + j] + r * (u[(i - 1) * w + j] + u[(i + 1) * w + j] +
                                           u[i * w + j - 1] + u[i * w + j + 1] - 4 * u[i * w + j]);
    std::swap(u, v);
  }

  double top = 0;
#pragma omp parallel for reduction(max : top)
  for (long i = 1; i <= n; ++i)
    for (long j = 1; j <= n; ++j) top = std::max(top, u[i * w + j]);

  const double g = 1 - 4 * r * (1 - std::cos(pi * h)), peak = std::sin(pi * ((n + 1) / 2) * h);
  const double exact = std::pow(g, steps) * peak * peak;
  std::printf("n %ld steps %d threads %d: result = %.15e, exact %.15e\n", n, steps,
              omp_get_max_threads(), top, exact);
  return std::fabs(top - exact) <= 1e-12 ? 0 : 1;
}
