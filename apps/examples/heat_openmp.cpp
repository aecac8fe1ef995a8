// The starting point of heat_hybrid.cpp: a 1-D heat equation, explicit in time, parallelised with
// OpenMP on one shared-memory node. Compare the two files side by side
// (diff -u heat_openmp.cpp heat_hybrid.cpp): heat_hybrid.cpp's header explains each change.
//
// u_t = u_xx on (0, 1), u = 0 at both ends, u(x, 0) = sin(pi x): the exact discrete solution
// after s steps is sin(pi x) * g^s with g = 1 - 2 r (1 - cos(pi h)), printed beside the result.
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1000000;  // interior points
  const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  const double pi = 3.14159265358979323846, h = 1.0 / (n + 1.0), r = 0.25;

  std::vector<double> u(n + 2, 0.0), v(n + 2, 0.0);
#pragma omp parallel for
  for (long i = 1; i <= n; ++i) u[i] = std::sin(pi * i * h);

  for (int s = 0; s < steps; ++s) {
#pragma omp parallel for
    for (long i = 1; i <= n; ++i) v[i] = u[i] + r * (u[i - 1] - 2 * u[i] + u[i + 1]);
    std::swap(u, v);
  }

  double top = 0;
#pragma omp parallel for reduction(max : top)
  for (long i = 1; i <= n; ++i) top = std::max(top, u[i]);

  const double g = 1 - 2 * r * (1 - std::cos(pi * h));
  const double exact = std::pow(g, steps) * std::sin(pi * ((n + 1) / 2) * h);
  std::printf("n %ld steps %d threads %d: result = %.15e, exact %.15e\n", n, steps,
              omp_get_max_threads(), top, exact);
  return std::fabs(top - exact) <= 1e-12 ? 0 : 1;
}
