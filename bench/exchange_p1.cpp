// exchange_p1: what a periodic 3-D halo exchange costs at one process, against the OpenMP
// original's copy loops. compas-run -n 1 -t T exchange_p1 [N] [STEPS] [REPEATS] (or alone, with
// OMP_NUM_THREADS=T): a DistArray<double, 3> of N^3 (default 128), halo 1, periodic in every
// dimension, and a plain (N + 2)^3 array filled the way an OpenMP code fills its periodic halos
// (the two column faces over the owned planes and rows, then the two row faces over the owned
// planes and every column, then the two plane faces whole: faces, edges and corners), each loop
// nest `#pragma omp parallel for` over its outer loop. Alternating within each repeat:
//   funneled  u.exchange_halos() from the main thread (as an OpenMP program calls it)
//   team      u.exchange_halos(t) by every thread inside Runtime::run
//   omp       the copy loops on the plain array
//   omp_u     the same loops on the DistArray's own memory (its padded rows: each owned row starts
//             a 64-byte line, so a column halo and its image lie in different lines)
// Prints the medians (ms per exchange) and the ratios to the copy loops, and checks that the
// array's halos hold the copy loops' values. Not a test: a measurement.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "compas/compas.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using Index = compas::index;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class At>
void fill_periodic(Index n, At at);

// The OpenMP original: a plain (n + 2)^3 array, halo 1, periodic.
struct Plain {
  Index n, m;  // owned cells per side, m = n + 2
  std::vector<double> a;
  explicit Plain(Index side) : n(side), m(side + 2), a(static_cast<std::size_t>(m * m * m)) {}
  double& operator()(Index i, Index j, Index k) {
    return a[static_cast<std::size_t>((i * m + j) * m + k)];
  }

  void fill_halos() {
    fill_periodic(n, [this](Index i, Index j, Index k) -> double& { return (*this)(i, j, k); });
  }
};

// The copy loops on any (n + 2)^3 box, indices 0 .. n + 1 (halo 1).
template <class At>
void fill_periodic(Index n, At at) {
  const Index m = n + 2;
#pragma omp parallel for
  for (Index i = 1; i <= n; ++i)
    for (Index j = 1; j <= n; ++j) {
      at(i, j, 0) = at(i, j, n);
      at(i, j, n + 1) = at(i, j, 1);
    }
#pragma omp parallel for
  for (Index i = 1; i <= n; ++i)
    for (Index k = 0; k < m; ++k) {
      at(i, 0, k) = at(i, n, k);
      at(i, n + 1, k) = at(i, 1, k);
    }
#pragma omp parallel for
  for (Index j = 0; j < m; ++j)
    for (Index k = 0; k < m; ++k) {
      at(0, j, k) = at(n, j, k);
      at(n + 1, j, k) = at(1, j, k);
    }
}

}  // namespace

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);
  const Index n = argc > 1 ? std::atol(argv[1]) : 128;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 20;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 11;
  if (rt.processes() != 1 || n < 2 || steps < 1 || repeats < 1) {
    std::fprintf(stderr,
                 "exchange_p1: one process, N >= 2, STEPS >= 1, REPEATS >= 1 (got %d processes, "
                 "N %ld, STEPS %d, REPEATS %d)\n",
                 rt.processes(), static_cast<long>(n), steps, repeats);
    return 2;
  }
  compas::DistArray<double, 3> u(rt, n, n, n, {.halo = {1, 1, 1}, .periodic = {true, true, true}});
  Plain p(n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j)
      for (Index k = 0; k < n; ++k)
        u(i, j, k) = p(i + 1, j + 1, k + 1) = static_cast<double>((i * 131 + j * 31 + k) % 977);
  auto timed = [&](auto&& body) {
    const auto t0 = Clock::now();
    for (int s = 0; s < steps; ++s) body();
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / steps;
  };
  // The same loops on the array's own memory (its padded rows), through u(i, j, k).
  auto fill_on_u = [&] {
    fill_periodic(n, [&](Index i, Index j, Index k) -> double& { return u(i - 1, j - 1, k - 1); });
  };
  std::vector<double> fun, team, omp, omp_u;
  for (int r = 0; r < repeats; ++r) {
    fun.push_back(timed([&] { u.exchange_halos(); }));
    if (rt.threads() > 1) {
      double ms = 0;
      rt.run([&](compas::threads::ThreadCtx& t) {
        t.barrier();
        const auto t0 = Clock::now();
        for (int s = 0; s < steps; ++s) u.exchange_halos(t);
        if (t.is_leader())
          ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / steps;
      });
      team.push_back(ms);
    }
    omp.push_back(timed([&] { p.fill_halos(); }));
    omp_u.push_back(timed(fill_on_u));
  }
  // The check: every halo cell marked, then one exchange, against the copy loops' plain array.
  const compas::Range3 own = u.owned();
  for (Index i = -1; i <= n; ++i)
    for (Index j = -1; j <= n; ++j)
      for (Index k = -1; k <= n; ++k)
        if (!own.contains(i, j, k)) u(i, j, k) = -1;
  u.exchange_halos();
  long wrong = 0;
  for (Index i = -1; i <= n; ++i)
    for (Index j = -1; j <= n; ++j)
      for (Index k = -1; k <= n; ++k) wrong += u(i, j, k) != p(i + 1, j + 1, k + 1);
  const double o = median(omp), f = median(fun);
  std::printf(
      "exchange_p1: %ld^3 doubles, halo 1, periodic, %d threads, %d steps x %d repeats, "
      "medians in ms per exchange\n  omp loops %.4f  funneled %.4f (x%.2f)",
      static_cast<long>(n), rt.threads(), steps, repeats, o, f, f / o);
  if (!team.empty()) std::printf("  team %.4f (x%.2f)", median(team), median(team) / o);
  std::printf("  omp loops on the array's layout %.4f (x%.2f)  halo cells differing: %ld\n",
              median(omp_u), median(omp_u) / o, wrong);
  return wrong == 0 ? 0 : 1;
}
