// prk_p2p_openmp.cpp ported to processes x threads on compas: the same pipelined wavefront, the
// grid's i cut in one block per process and each block in strips per thread, as in the original.
// What changed (diff -u prk_p2p_openmp.cpp prk_p2p_compas.cpp):
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's OpenMP threads.
//  2. The grid becomes a 2-D DistArray, rows j and columns i, the columns cut over the processes
//     ({1, P} grid) with one halo column: A(i, j) indexes it globally, so the loop is the
//     original's, over this process's columns.
//  3. A Channel carries "row j is done" between processes: the first thread takes the left
//     neighbour's A(lo - 1, j), the last one sends its A(hi - 1, j) on; the corner goes from the
//     last process to process 0 the same way (the original's corner flag).
//  4. The timer starts after compas::barrier(rt) (PRK's MPI_Barrier); the job's time is the slowest
//     process's; the corner comes from the process that holds it; process 0 prints.
// Usage: prk_p2p_compas ITERATIONS M N   (compas-run -n P -t T, mpirun, srun, or alone)
#include <omp.h>

#include <cstdio>
#include <vector>

#include "compas/compas.hpp"
#include "prk_common.hpp"

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);  // (1)
  prk::check_count(argc, argv, 3, {"ITERATIONS", "M", "N"});
  const long iterations = prk::integer(argc, argv, 1, "iterations", 1);
  const long m = prk::integer(argc, argv, 2, "m", rt.processes() + 1L);
  const long n = prk::integer(argc, argv, 3, "n", 2);
  const int threads = omp_get_max_threads(), me = rt.process(), P = rt.processes();
  if (me == 0)
    std::printf(
        "Parallel Research Kernels: synch_p2p, pipelined wavefront (compas)\n"
        "Number of processes  = %d\nNumber of threads    = %d\n"
        "Grid sizes           = %ld, %ld\nNumber of iterations = %ld\n",
        P, threads, m, n, iterations);

  compas::DistArray<double, 2> grid(
      rt, n, m, {.decomposition = compas::Decomposition::grid, .grid = {1, P}});  // (2)
  auto A = [&](long i, long j) -> double& { return grid(j, i); };
  const long first = grid.owned().cols.lo, last = grid.owned().cols.hi;  // this process's i
  for (long j = 0; j < n && me == 0; ++j) A(0, j) = static_cast<double>(j);
  for (long i = first - (me > 0); i < last; ++i) A(i, 0) = static_cast<double>(i);
  std::vector<prk::Flag> done(static_cast<std::size_t>(threads * n));
  compas::Channel<double> row_done(rt, 1024);  // (3)

  double start = 0;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const long from = me == 0 ? 1 : first;
    const long lo = from + (last - from) * t / threads,
               hi = from + (last - from) * (t + 1) / threads;
    for (long it = 0; it <= iterations; ++it) {
      if (it == 1) {
        if (t == 0) compas::barrier(rt);  // (4) the processes, then the threads, start the clock together
#pragma omp barrier
#pragma omp master
        start = omp_get_wtime();
      }
      if (t == 0 && me == 0 && it > 0) A(0, 0) = row_done.recv(P - 1);  // (3)
      for (long j = 1; j < n; ++j) {
        if (t > 0) prk::wait_for(done[(t - 1) * n + j], it + 1);
        if (t == 0 && me > 0) A(first - 1, j) = row_done.recv(me - 1);  // (3)
        for (long i = lo; i < hi; ++i) A(i, j) = A(i - 1, j) + A(i, j - 1) - A(i - 1, j - 1);
        done[t * n + j].sweeps.store(it + 1, std::memory_order_release);
        if (t == threads - 1 && me + 1 < P) row_done.send(me + 1, A(last - 1, j));  // (3)
      }
      if (t == threads - 1 && me == P - 1) row_done.send(0, -A(m - 1, n - 1));  // (3)
    }
  }
  const double seconds = rt.allreduce(omp_get_wtime() - start, compas::op::max{});  // (4)

  if (prk::perturbed() && me == P - 1) A(m - 1, n - 1) += 1.0;
  const double corner = rt.allreduce(me == P - 1 ? A(m - 1, n - 1) : 0.0, compas::op::sum{});
  return prk::p2p_verdict(iterations, m, n, corner, seconds, me == 0);
}
