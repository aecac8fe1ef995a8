// heat_openmp.cpp ported to hybrid mode on raw windows: the same 1-D heat equation on P
// processes x T threads, with the halo protocol written by hand. heat_hybrid.cpp is the same port
// on the porting layer (DistArray, OpenMP loops kept); this file shows what that layer does inside,
// for programs that want one-sided control. Run it alone (1 x T), or
// `compas-run -n P -t T heat_window N STEPS`, or under mpirun / srun. What changed from
// heat_openmp.cpp, and why:
//
//  1. `compas::Runtime rt(argc, argv)` replaces the OpenMP runtime: it joins the job, pins T
//     threads inside this process's cores, and takes --threads/--bind/--wait out of argv.
//  2. Data is split over processes first: rt.process_block(n) is this process's share of the
//     points. Each process keeps only its points plus one ghost point on each side, instead of
//     the whole array; the ghosts start as the neighbours' first values.
//  3. The arrays live in a window (rt.window) so that neighbours can write the ghost points
//     directly: no message buffers, no receive copy (COMPaS section 3).
//  4. `#pragma omp parallel for` becomes rt.run(...) once around the time loop, with each thread
//     taking its share of the process's points (threads::block_range); t.barrier() replaces the
//     implicit barrier at the end of the parallel for. The team stays alive for the whole loop.
//  5. After each step thread 0 puts its edge values into the neighbours' ghost points with
//     put_signal and waits for theirs (wait_until on the signal count): the only communication.
//  6. `reduction(max : top)` becomes rt.allreduce(t, top, compas::op::max{}): threads first,
//     then one thread per process across processes, then back to every thread.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "compas/compas.hpp"

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);  // (1)
  const long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  const double pi = 3.14159265358979323846, h = 1.0 / static_cast<double>(n + 1), r = 0.25;
  if (n < rt.processes()) {
    std::fprintf(stderr, "heat_hybrid: n %ld is smaller than the %d processes\n", n,
                 rt.processes());
    return 2;
  }

  const auto [lo, hi] = rt.process_block(n);  // (2) global points lo+1..hi
  const long local = static_cast<long>(hi - lo);
  const long stride = n / rt.processes() + 3;  // the same on every process: the window is symmetric
  auto w = rt.window<double>(2 * static_cast<std::size_t>(stride), 2);  // (3) u and v, ghosts
  double* u = w.local().data();
  double* v = u + stride;
  const int left = rt.process() - 1,
            right = rt.process() + 1 < rt.processes() ? rt.process() + 1 : -1;
  enum { kFromLeft = 0, kFromRight = 1 };

  double top = 0;
  rt.run([&](compas::ThreadCtx& t) {  // (4)
    const auto [a, b] =
        compas::threads::block_range(static_cast<std::size_t>(local), t.threads(), t.thread());
    for (long i = static_cast<long>(a) + 1; i <= static_cast<long>(b); ++i)
      u[i] = std::sin(pi * static_cast<double>(static_cast<long>(lo) + i) * h);
    if (t.is_leader()) {  // ghosts start as the neighbours' first values (0 at the ends)
      if (left >= 0) u[0] = std::sin(pi * static_cast<double>(lo) * h);
      if (right >= 0) u[local + 1] = std::sin(pi * static_cast<double>(hi + 1) * h);
    }
    t.barrier();
    double* cur = u;
    double* next = v;
    for (int s = 0; s < steps; ++s) {
      for (long i = static_cast<long>(a) + 1; i <= static_cast<long>(b); ++i)
        next[i] = cur[i] + r * (cur[i - 1] - 2 * cur[i] + cur[i + 1]);
      t.barrier();
      if (t.is_leader() && rt.processes() > 1) {  // (5)
        const std::size_t base = next == u ? 0 : static_cast<std::size_t>(stride);
        if (left >= 0) {
          const long left_local = static_cast<long>(
              compas::threads::block_range(static_cast<std::size_t>(n), rt.processes(), left)
                  .second -
              compas::threads::block_range(static_cast<std::size_t>(n), rt.processes(), left)
                  .first);
          w.put_signal(left, base + static_cast<std::size_t>(left_local) + 1,
                       std::span<const double>(next + 1, 1), kFromRight);
        }
        if (right >= 0)
          w.put_signal(right, base, std::span<const double>(next + local, 1), kFromLeft);
        if (left >= 0) w.wait_until(kFromLeft, static_cast<std::uint64_t>(s + 1), left);
        if (right >= 0) w.wait_until(kFromRight, static_cast<std::uint64_t>(s + 1), right);
      }
      t.barrier();
      std::swap(cur, next);
    }
    double mine = 0;
    for (long i = static_cast<long>(a) + 1; i <= static_cast<long>(b); ++i)
      mine = std::max(mine, cur[i]);
    const double all = rt.allreduce(t, mine, compas::op::max{});  // (6)
    if (t.is_leader()) top = all;
  });

  const double g = 1 - 2 * r * (1 - std::cos(pi * h));
  const double exact = std::pow(g, steps) * std::sin(pi * static_cast<double>((n + 1) / 2) * h);
  if (rt.process() == 0)
    std::printf("n %ld steps %d processes %d threads %d: result = %.15e, exact %.15e\n", n, steps,
                rt.processes(), rt.threads(), top, exact);
  return std::fabs(top - exact) <= 1e-12 ? 0 : 1;
}
