// jacobi2d_openmp.cpp ported to hybrid mode on raw windows: the same 2-D heat equation on
// P processes x T threads, with the halo protocol written by hand. jacobi2d_hybrid.cpp is the same
// port on the porting layer (DistArray, exchange_halos()); this file is what a user without that
// layer writes, and what the layer does inside. Run it alone (1 x T), or
// `compas-run -n P -t T jacobi2d_window N STEPS`, or under mpirun / srun. What changed from
// jacobi2d_openmp.cpp, and why:
//
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's threads, OpenMP's
//     included.
//  2. The grid's rows and columns 1..n are cut in blocks over the near-square process grid
//     (rt.process_grid(), compas::split): this process owns rows i0+1..i0+rows and columns
//     j0+1..j0+cols, stored with one halo row and column on each side, local (i, j) at
//     i * stride + j. The domain boundary is a halo that nobody writes: it stays 0.
//  3. u, v and the receive areas for the halo columns live in ONE window, of the same size on
//     every process (the largest block's), so a neighbour can compute where to write.
//  4. Before each step the main thread exchanges halos (funneled, between the OpenMP loops):
//     it packs its west/east edge columns into buffers and put_signals them into the
//     neighbours' receive areas, put_signals its north/south edge rows straight into the
//     neighbours' halo rows (rows are contiguous), waits on one signal count per direction, and
//     copies the columns that arrived into its halo columns. Corners are not exchanged: the
//     5-point stencil does not read them.
//  5. The OpenMP loops run over the local block with raw pointers and a row stride; the loop body
//     is the original's expression, point for point, so the result is the same bits.
//  6. The OpenMP reduction gives this process's maximum; rt.allreduce combines the processes'.
//
// Why no data still being read is ever overwritten, with no synchronisation but the signals:
// exchange e (before step e) needs every neighbour's signal of exchange e, and a process sends its
// signals of exchange e+1 only after its sweep e, which is after its exchange e has finished
// (unpacking included). So a neighbour runs at most one exchange ahead.
//  - Halo rows: exchange e writes the halo rows of the array current at step e, u or v by the
//    parity of e. The next write into the same halo rows is exchange e+2, which needs this
//    process's signals of exchange e+1, sent after its sweep e has finished reading them. The
//    write of exchange e+1 goes to the other array's halo rows, which sweep e does not touch
//    (it reads u's, writes only v's owned points).
//  - Column receive areas: this process signals exchange e before it unpacks exchange e's
//    columns (it puts first and then waits, or every process would wait for the others), so a
//    neighbour may already be in exchange e+1 while it unpacks. Hence two receive areas per side,
//    chosen by the parity of e (as the layer does): exchange e+1 writes the other one, and
//    exchange e+2, the next write into this one, needs this process's signal of exchange e+1,
//    sent after the unpack of exchange e.
//  - Pack buffers and the sources of the row puts are reused only after their puts completed
//    (the requests are waited at the end of each exchange).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <utility>
#include <vector>

#include "compas/compas.hpp"

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);                       // (1)
  const long n = argc > 1 ? std::atol(argv[1]) : 2000;  // interior points per side
  const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
  const double pi = 3.14159265358979323846, h = 1.0 / (n + 1.0), r = 0.2;

  const compas::Runtime::Grid grid = rt.process_grid();  // (2)
  if (n < grid.cols) {
    std::fprintf(stderr, "jacobi2d_window: n %ld is smaller than the %d x %d process grid\n", n,
                 grid.rows, grid.cols);
    return 2;
  }
  const compas::Range all{1, n + 1};
  const compas::Range my_rows = compas::block_of(all, grid.rows, grid.row);
  const compas::Range my_cols = compas::block_of(all, grid.cols, grid.col);
  const long i0 = my_rows.lo - 1, j0 = my_cols.lo - 1;  // global = local + i0 (j0)
  const long rows = my_rows.size(), cols = my_cols.size();
  const long rows_max = (n + grid.rows - 1) / grid.rows, cols_max = (n + grid.cols - 1) / grid.cols;
  const long stride = cols_max + 2;
  const long field = (rows_max + 2) * stride;

  // (3) Window layout, in doubles: u, v, then the column receive areas [parity][side].
  enum : std::size_t { kFromWest = 0, kFromEast = 1, kFromNorth = 2, kFromSouth = 3 };
  auto inbox = [&](std::size_t side, std::uint64_t parity) {
    return static_cast<std::size_t>(2 * field + static_cast<long>(parity * 2 + side) * rows_max);
  };
  auto w = rt.window<double>(static_cast<std::size_t>(2 * field + 4 * rows_max), 4);
  double* const win = w.local().data();
  const int me = rt.process();
  const int west = grid.col > 0 ? me - 1 : -1;
  const int east = grid.col + 1 < grid.cols ? me + 1 : -1;
  const int north = grid.row > 0 ? me - grid.cols : -1;
  const int south = grid.row + 1 < grid.rows ? me + grid.cols : -1;
  const long north_rows = north >= 0 ? compas::block_of(all, grid.rows, grid.row - 1).size() : 0;
  std::vector<double> to_west(static_cast<std::size_t>(rows)), to_east(to_west.size());

  // (4) Exchange number e (1, 2, ...) of the array at window offset `base`.
  auto exchange = [&](std::size_t base, std::uint64_t e) {
    double* const a = win + base;
    const std::uint64_t parity = e % 2;
    const auto rows_n = static_cast<std::size_t>(rows), cols_n = static_cast<std::size_t>(cols);
    compas::comm::Request req[4];
    if (west >= 0) {
      for (long i = 1; i <= rows; ++i) to_west[static_cast<std::size_t>(i - 1)] = a[i * stride + 1];
      req[0] = w.put_signal_nb(west, inbox(kFromEast, parity),
                               std::span<const double>(to_west.data(), rows_n), kFromEast);
    }
    if (east >= 0) {
      for (long i = 1; i <= rows; ++i)
        to_east[static_cast<std::size_t>(i - 1)] = a[i * stride + cols];
      req[1] = w.put_signal_nb(east, inbox(kFromWest, parity),
                               std::span<const double>(to_east.data(), rows_n), kFromWest);
    }
    if (north >= 0)  // my first row into north's last halo row
      req[2] =
          w.put_signal_nb(north, base + static_cast<std::size_t>((north_rows + 1) * stride + 1),
                          std::span<const double>(a + stride + 1, cols_n), kFromSouth);
    if (south >= 0)  // my last row into south's first halo row
      req[3] = w.put_signal_nb(south, base + 1,
                               std::span<const double>(a + rows * stride + 1, cols_n), kFromNorth);
    if (west >= 0) {
      w.wait_until(kFromWest, e, west);
      const double* in = win + inbox(kFromWest, parity);
      for (long i = 1; i <= rows; ++i) a[i * stride] = in[i - 1];
    }
    if (east >= 0) {
      w.wait_until(kFromEast, e, east);
      const double* in = win + inbox(kFromEast, parity);
      for (long i = 1; i <= rows; ++i) a[i * stride + cols + 1] = in[i - 1];
    }
    if (north >= 0) w.wait_until(kFromNorth, e, north);
    if (south >= 0) w.wait_until(kFromSouth, e, south);
    for (auto& q : req) q.wait();
  };

  std::size_t cur = 0, next = static_cast<std::size_t>(field);  // window offsets of u and v
  {
    double* const u = win + cur;
#pragma omp parallel for
    for (long i = 1; i <= rows; ++i)
      for (long j = 1; j <= cols; ++j)
        u[i * stride + j] = std::sin(pi * (i0 + i) * h) * std::sin(pi * (j0 + j) * h);
  }

  for (int s = 0; s < steps; ++s) {
    exchange(cur, static_cast<std::uint64_t>(s) + 1);  // (4)
    const double* const u = win + cur;
    double* const v = win + next;
#pragma omp parallel for
    for (long i = 1; i <= rows; ++i)  // (5)
      for (long j = 1; j <= cols; ++j)
        v[i * stride + j] =
            u[i * stride + j] +
            r * (u[(i - 1) * stride + j] + u[(i + 1) * stride + j] + u[i * stride + j - 1] +
                 u[i * stride + j + 1] - 4 * u[i * stride + j]);
    std::swap(cur, next);
  }

  const double* const u = win + cur;
  double top = 0;
#pragma omp parallel for reduction(max : top)
  for (long i = 1; i <= rows; ++i)
    for (long j = 1; j <= cols; ++j) top = std::max(top, u[i * stride + j]);
  top = rt.allreduce(top, compas::op::max{});  // (6)

  const double g = 1 - 4 * r * (1 - std::cos(pi * h)), peak = std::sin(pi * ((n + 1) / 2) * h);
  const double exact = std::pow(g, steps) * peak * peak;
  if (rt.process() == 0)
    std::printf("n %ld steps %d processes %d threads %d: result = %.15e, exact %.15e\n", n, steps,
                rt.processes(), omp_get_max_threads(), top, exact);
  return std::fabs(top - exact) <= 1e-12 ? 0 : 1;
}
