// The Parallel Research Kernels' stencil, written after PRK's definition for one shared-memory
// node with OpenMP: a star (the axes) or grid (the whole square) stencil of radius 1..5 applied to
// an n x n grid, out += stencil(in) on the points at least `radius` from the edge, then in += 1
// everywhere, ITERATIONS + 1 times, the first one untimed; PRK's check of the L1 norm of out and
// its rate in MFlops/s (prk_common.hpp). prk_stencil_compas.cpp is its port.
// Usage: prk_stencil_openmp ITERATIONS N [RADIUS (2)] [star|grid (star)]  (OMP_NUM_THREADS)
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "prk_common.hpp"

// out += stencil(in) on rows and columns [R, n - R); radius and shape fixed at compile time.
template <int R, bool Star>
void apply(const std::vector<double>& in, std::vector<double>& out, long n,
           const std::vector<double>& w) {
  const double* c = &w[R * (2 * R + 1) + R];  // c[di * (2R + 1) + dj] weighs in(i + di, j + dj)
#pragma omp parallel for
  for (long i = R; i < n - R; ++i)
    for (long j = R; j < n - R; ++j) {
      double s = out[i * n + j];
      if constexpr (Star)
        for (long k = 1; k <= R; ++k)
          s += c[-k * (2 * R + 1)] * in[(i - k) * n + j] +
               c[k * (2 * R + 1)] * in[(i + k) * n + j] + c[-k] * in[i * n + j - k] +
               c[k] * in[i * n + j + k];
      else
        for (long di = -R; di <= R; ++di)
          for (long dj = -R; dj <= R; ++dj)
            s += c[di * (2 * R + 1) + dj] * in[(i + di) * n + j + dj];
      out[i * n + j] = s;
    }
}
using Sweep = decltype(&apply<1, true>);
constexpr Sweep sweeps[2][6] = {
    {nullptr, apply<1, false>, apply<2, false>, apply<3, false>, apply<4, false>, apply<5, false>},
    {nullptr, apply<1, true>, apply<2, true>, apply<3, true>, apply<4, true>, apply<5, true>}};

int main(int argc, char** argv) {
  prk::check_count(argc, argv, 2, {"ITERATIONS", "N", "RADIUS", "star|grid"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const long r = prk::integer(argc, argv, 3, "radius", 1, 2, 5);
  const long n = prk::integer(argc, argv, 2, "n", 2 * r + 1, 0, 1L << 20);
  const bool star = prk::choice(argc, argv, 4, "stencil", "star", "grid", true);
  std::printf(
      "Parallel Research Kernels: stencil on a 2-D grid (OpenMP)\n"
      "Number of threads    = %d\nGrid size            = %ld\n"
      "Radius of stencil    = %ld\nType of stencil      = %s\n"
      "Number of iterations = %ld\n",
      omp_get_max_threads(), n, r, star ? "star" : "grid", iterations);
  const std::vector<double> w = prk::stencil_weights(r, star);
  const Sweep sweep = sweeps[star][r];

  std::vector<double> in(n * n), out(n * n, 0.0);
#pragma omp parallel for
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) in[i * n + j] = static_cast<double>(i + j);

  double start = 0;
  for (long it = 0; it <= iterations; ++it) {
    if (it == 1) start = omp_get_wtime();
    sweep(in, out, n, w);
#pragma omp parallel for
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) in[i * n + j] += 1.0;
  }
  const double seconds = omp_get_wtime() - start;

  if (prk::perturbed()) out[(n / 2) * n + n / 2] += 1.0;
  double norm = 0;
#pragma omp parallel for reduction(+ : norm)
  for (long i = r; i < n - r; ++i)
    for (long j = r; j < n - r; ++j) norm += std::fabs(out[i * n + j]);
  return prk::stencil_verdict(iterations, n, r, star, norm, seconds, true);
}
