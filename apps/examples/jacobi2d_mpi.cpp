// jacobi2d_openmp.cpp as an MPI + OpenMP program, the way it is usually written without compas:
// the baseline that jacobi2d_hybrid.cpp (the porting layer) is measured against
// (bench/port_overhead.sh). Run it with `mpirun -np P jacobi2d_mpi N STEPS`
// (OMP_NUM_THREADS threads per process).
//
//  - MPI_Init_thread(FUNNELED): only the main thread calls MPI, between the OpenMP loops.
//  - A 2-D Cartesian communicator over the process grid of compas's Runtime::process_grid()
//    (rows <= cols, rows the largest divisor of P not above sqrt(P)), so every job shape cuts
//    the grid like the compas ports; MPI_Dims_create only checks the dims given to it.
//  - Rows and columns 1..n split in near-equal blocks (the first n % parts blocks one more, as
//    compas::split), each block stored with one halo row and column on each side.
//  - Halos by MPI_Sendrecv with derived datatypes: a contiguous type for a row, MPI_Type_vector
//    for a column (no packing by hand), MPI_PROC_NULL at the domain boundary.
//  - The loop body is the original's expression, so the result is the same bits; MPI_Allreduce
//    (MAX) combines the processes' maxima, rank 0 prints.
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace {

// Block `part` of `parts` of [lo, hi): its first index and size.
void block(long lo, long hi, int parts, int part, long& first, long& size) {
  const long n = hi - lo, base = n / parts, extra = n % parts;
  first = lo + part * base + std::min<long>(part, extra);
  size = base + (part < extra ? 1 : 0);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  if (provided < MPI_THREAD_FUNNELED) {
    std::fprintf(stderr, "jacobi2d_mpi: MPI gives no MPI_THREAD_FUNNELED\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long n = argc > 1 ? std::atol(argv[1]) : 2000;  // interior points per side
  const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
  const double pi = 3.14159265358979323846, h = 1.0 / (n + 1.0), r = 0.2;

  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int dims[2] = {static_cast<int>(std::sqrt(static_cast<double>(p))), 0};
  while (dims[0] > 1 && p % dims[0] != 0) --dims[0];
  dims[1] = p / dims[0];
  MPI_Dims_create(p, 2, dims);  // both given: only checked
  const int periods[2] = {0, 0};
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int rank = 0, coords[2] = {0, 0}, north, south, west, east;
  MPI_Comm_rank(cart, &rank);
  MPI_Cart_coords(cart, rank, 2, coords);
  MPI_Cart_shift(cart, 0, 1, &north, &south);
  MPI_Cart_shift(cart, 1, 1, &west, &east);
  if (n < dims[1]) {
    if (rank == 0)
      std::fprintf(stderr, "jacobi2d_mpi: n %ld is smaller than the %d x %d process grid\n", n,
                   dims[0], dims[1]);
    MPI_Finalize();
    return 2;
  }

  long i1 = 0, rows = 0, j1 = 0, cols = 0;  // first global row / column, and counts
  block(1, n + 1, dims[0], coords[0], i1, rows);
  block(1, n + 1, dims[1], coords[1], j1, cols);
  const long w = cols + 2;  // local row length, halo columns included
  std::vector<double> u((rows + 2) * w, 0.0), v((rows + 2) * w, 0.0);

  MPI_Datatype row_t, col_t;
  MPI_Type_contiguous(static_cast<int>(cols), MPI_DOUBLE, &row_t);
  MPI_Type_vector(static_cast<int>(rows), 1, static_cast<int>(w), MPI_DOUBLE, &col_t);
  MPI_Type_commit(&row_t);
  MPI_Type_commit(&col_t);
  auto exchange = [&](double* a) {
    // first row north, the south neighbour's first row into the bottom halo row; and back
    MPI_Sendrecv(a + w + 1, 1, row_t, north, 0, a + (rows + 1) * w + 1, 1, row_t, south, 0, cart,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(a + rows * w + 1, 1, row_t, south, 1, a + 1, 1, row_t, north, 1, cart,
                 MPI_STATUS_IGNORE);
    // first column west, the east neighbour's first column into the east halo column; and back
    MPI_Sendrecv(a + w + 1, 1, col_t, west, 2, a + w + cols + 1, 1, col_t, east, 2, cart,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(a + w + cols, 1, col_t, east, 3, a + w, 1, col_t, west, 3, cart,
                 MPI_STATUS_IGNORE);
  };

#pragma omp parallel for
  for (long i = 1; i <= rows; ++i)
    for (long j = 1; j <= cols; ++j)
      u[i * w + j] = std::sin(pi * (i1 - 1 + i) * h) * std::sin(pi * (j1 - 1 + j) * h);

  for (int s = 0; s < steps; ++s) {
    exchange(u.data());
#pragma omp parallel for
    for (long i = 1; i <= rows; ++i)
      for (long j = 1; j <= cols; ++j)
        v[i * w + j] = u[i * w + j] + r * (u[(i - 1) * w + j] + u[(i + 1) * w + j] +
                                           u[i * w + j - 1] + u[i * w + j + 1] - 4 * u[i * w + j]);
    std::swap(u, v);
  }

  double mine = 0, top = 0;
#pragma omp parallel for reduction(max : mine)
  for (long i = 1; i <= rows; ++i)
    for (long j = 1; j <= cols; ++j) mine = std::max(mine, u[i * w + j]);
  MPI_Allreduce(&mine, &top, 1, MPI_DOUBLE, MPI_MAX, cart);

  const double g = 1 - 4 * r * (1 - std::cos(pi * h)), peak = std::sin(pi * ((n + 1) / 2) * h);
  const double exact = std::pow(g, steps) * peak * peak;
  if (rank == 0)
    std::printf("n %ld steps %d processes %d threads %d: result = %.15e, exact %.15e\n", n, steps,
                p, omp_get_max_threads(), top, exact);
  MPI_Type_free(&row_t);
  MPI_Type_free(&col_t);
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return std::fabs(top - exact) <= 1e-12 ? 0 : 1;
}
