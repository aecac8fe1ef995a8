// jacobi2d_mpi.cpp ported incrementally: the program keeps MPI (its MPI_Init, MPI_Allreduce and
// MPI_Finalize stay) and creates the Runtime on top, which finds MPI initialised and joins the
// same job. What changed (diff -u jacobi2d_mpi.cpp jacobi2d_mpi_hybrid.cpp):
//
//  - The Cartesian communicator, the block split, the row and column datatypes and the four
//    MPI_Sendrecv calls give way to two 2-D DistArrays over the same process grid and one
//    exchange_halos() per step (one-sided; memory copies between processes of one host).
//  - The loops index globally (u(i, j)) over this process's rows() and cols(); the bodies are
//    the original's expression, so the result is the same bits.
//  - The threads: the Runtime pins OpenMP's threads inside the cores this process has
//    (COMPAS_THREADS or OMP_NUM_THREADS of them).
// Run it like the original: `mpirun -np P jacobi2d_mpi_hybrid N STEPS`.
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "compas/compas.hpp"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  if (provided < MPI_THREAD_FUNNELED) {
    std::fprintf(stderr, "jacobi2d_mpi_hybrid: MPI gives no MPI_THREAD_FUNNELED\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  double top = 0, exact = 0;
  {
    compas::Runtime rt(argc, argv);
    const long n = argc > 1 ? std::atol(argv[1]) : 2000;  // interior points per side
    const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
    const double pi = 3.14159265358979323846, h = 1.0 / (n + 1.0), r = 0.2;

    const compas::Range2 grid{{1, n + 1}, {1, n + 1}};
    compas::DistArray<double, 2> u(rt, grid, {.decomposition = compas::Decomposition::grid}),
        v = u.like();
    const compas::Range rows = u.rows(), cols = u.cols();
#pragma omp parallel for
    for (long i = rows.lo; i < rows.hi; ++i)
      for (long j = cols.lo; j < cols.hi; ++j)
        u(i, j) = std::sin(pi * i * h) * std::sin(pi * j * h);

    for (int s = 0; s < steps; ++s) {
      u.exchange_halos();
#pragma omp parallel for
      for (long i = rows.lo; i < rows.hi; ++i)
        for (long j = cols.lo; j < cols.hi; ++j)
          v(i, j) =
              u(i, j) + r * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) - 4 * u(i, j));
      std::swap(u, v);
    }

    double mine = 0;
#pragma omp parallel for reduction(max : mine)
    for (long i = rows.lo; i < rows.hi; ++i)
      for (long j = cols.lo; j < cols.hi; ++j) mine = std::max(mine, u(i, j));
    MPI_Allreduce(&mine, &top, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    const double g = 1 - 4 * r * (1 - std::cos(pi * h)), peak = std::sin(pi * ((n + 1) / 2) * h);
    exact = std::pow(g, steps) * peak * peak;
    if (rt.process() == 0)
      std::printf("n %ld steps %d processes %d threads %d: result = %.15e, exact %.15e\n", n, steps,
                  rt.processes(), omp_get_max_threads(), top, exact);
  }
  MPI_Finalize();
  return std::fabs(top - exact) <= 1e-12 ? 0 : 1;
}
