// A sparse conjugate-gradient solver on one shared-memory node with OpenMP: the HPCG-like
// problem (README.md). The grid nx x ny x nz has one row per point, numbered x fastest
// (row = (z * ny + y) * nx + x); the 27-point stencil gives 26 on the diagonal and -1 for every
// neighbour that exists; b = A * ones, so the exact solution is x = 1. Unpreconditioned CG from
// x = 0 runs --iters iterations, or fewer when ||r|| <= tol * ||r0||.
//
// Dot products add one partial sum per z-plane, the planes in order, so the residual history
// is the same bits at every thread count (and in spcg_mpi.cpp at every process count).
//
// Verification (exit 1 when it fails): the error ||x - 1||_inf is at most ||b - A x||_2 /
// lambda_min(A), lambda_min in closed form (A = 27 I - Tz (x) Ty (x) Tx, T = tridiag(1, 1, 1));
// the recomputed ||b - A x||_2 is CG's last ||r|| within 1e-8 ||r0||; and when --tol is given,
// the tolerance was reached. Bad input: a message naming the value and what is allowed, exit 2.
// Usage: spcg_openmp [--nx N] [--ny N] [--nz N] [--iters K] [--tol T]   (OMP_NUM_THREADS)
#include <omp.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Options {
  int nx = 64, ny = 64, nz = 64, iters = 50;
  double tol = 0.0;
};

struct Csr {
  std::vector<int> row_ptr, col;
  std::vector<double> val;
};

[[noreturn]] void bad_input(const std::string& message) {
  std::fprintf(stderr, "spcg_openmp: %s\n", message.c_str());
  std::exit(2);
}

int parse_int(const char* name, const char* text, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi)
    bad_input(std::string(name) + " '" + text + "': an integer from " + std::to_string(lo) +
              " to " + std::to_string(hi) + " is allowed");
  return static_cast<int>(v);
}

double parse_tol(const char* text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (*text == '\0' || *end != '\0' || errno != 0 || !(v >= 0.0 && v < 1.0))
    bad_input(std::string("--tol '") + text +
              "': a number from 0 (no tolerance) to below 1 is allowed");
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int k = 1; k < argc; k += 2) {
    const char* flag = argv[k];
    if (k + 1 >= argc) bad_input(std::string(flag) + ": a value is needed after it");
    const char* v = argv[k + 1];
    if (!std::strcmp(flag, "--nx"))
      o.nx = parse_int(flag, v, 1, 1024);
    else if (!std::strcmp(flag, "--ny"))
      o.ny = parse_int(flag, v, 1, 1024);
    else if (!std::strcmp(flag, "--nz"))
      o.nz = parse_int(flag, v, 1, 1024);
    else if (!std::strcmp(flag, "--iters"))
      o.iters = parse_int(flag, v, 1, 1000000);
    else if (!std::strcmp(flag, "--tol"))
      o.tol = parse_tol(v);
    else
      bad_input(std::string("unknown option '") + flag +
                "': --nx, --ny, --nz, --iters or --tol is allowed");
  }
  const double nnz = 27.0 * o.nx * o.ny * o.nz;
  if (nnz > 2147483647.0)
    bad_input("grid " + std::to_string(o.nx) + " x " + std::to_string(o.ny) + " x " +
              std::to_string(o.nz) + ": at most 2^31 - 1 nonzeros (int32 indices) are allowed");
  return o;
}

// The points of {c - 1, c, c + 1} inside [0, n).
int span(int c, int n) {
  return 1 + (c > 0) + (c + 1 < n);
}

// The matrix in CSR form: the row lengths first, then each row's columns in increasing order.
Csr build_matrix(const Options& o) {
  const long rows = static_cast<long>(o.nx) * o.ny * o.nz;
  Csr a;
  a.row_ptr.assign(rows + 1, 0);
  for (long i = 0; i < rows; ++i) {
    const int x = i % o.nx, y = (i / o.nx) % o.ny, z = i / (static_cast<long>(o.nx) * o.ny);
    a.row_ptr[i + 1] = a.row_ptr[i] + span(x, o.nx) * span(y, o.ny) * span(z, o.nz);
  }
  a.col.resize(a.row_ptr[rows]);
  a.val.resize(a.row_ptr[rows]);
#pragma omp parallel for
  for (long i = 0; i < rows; ++i) {
    const int x = i % o.nx, y = (i / o.nx) % o.ny, z = i / (static_cast<long>(o.nx) * o.ny);
    int e = a.row_ptr[i];
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int cx = x + dx, cy = y + dy, cz = z + dz;
          if (cx < 0 || cx >= o.nx || cy < 0 || cy >= o.ny || cz < 0 || cz >= o.nz) continue;
          a.col[e] = (cz * o.ny + cy) * o.nx + cx;
          a.val[e++] = (dx == 0 && dy == 0 && dz == 0) ? 26.0 : -1.0;
        }
  }
  return a;
}

// b = A * ones, from the definition: 26 minus the number of neighbours.
std::vector<double> build_rhs(const Options& o) {
  const long rows = static_cast<long>(o.nx) * o.ny * o.nz;
  std::vector<double> b(rows);
#pragma omp parallel for
  for (long i = 0; i < rows; ++i) {
    const int x = i % o.nx, y = (i / o.nx) % o.ny, z = i / (static_cast<long>(o.nx) * o.ny);
    b[i] = 27.0 - span(x, o.nx) * span(y, o.ny) * span(z, o.nz);
  }
  return b;
}

void spmv(const Csr& a, const std::vector<double>& x, std::vector<double>& y) {
  const long rows = static_cast<long>(y.size());
#pragma omp parallel for
  for (long i = 0; i < rows; ++i) {
    double s = 0.0;
    for (int e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) s += a.val[e] * x[a.col[e]];
    y[i] = s;
  }
}

// a . b: one partial sum per z-plane (of `plane` rows), added in plane order.
double dot(const std::vector<double>& a, const std::vector<double>& b, long plane) {
  const long planes = static_cast<long>(a.size()) / plane;
  std::vector<double> part(planes);
#pragma omp parallel for
  for (long z = 0; z < planes; ++z) {
    double s = 0.0;
    for (long i = z * plane; i < (z + 1) * plane; ++i) s += a[i] * b[i];
    part[z] = s;
  }
  double s = 0.0;
  for (long z = 0; z < planes; ++z) s += part[z];
  return s;
}

// The smallest eigenvalue of A: 27 - prod over the axes of (1 + 2 cos(pi / (n + 1))).
double lambda_min(const Options& o) {
  const double pi = 3.14159265358979323846;
  double t = 1.0;
  for (int n : {o.nx, o.ny, o.nz}) t *= 1.0 + 2.0 * std::cos(pi / (n + 1));
  return 27.0 - t;
}

struct Residuals {
  double first, last;  // ||r|| before the first iteration and after the last
};

// Unpreconditioned CG from x = 0; prints ||r|| after every iteration.
Residuals cg(const Csr& a, const std::vector<double>& b, std::vector<double>& x, const Options& o) {
  const long rows = static_cast<long>(b.size()), plane = static_cast<long>(o.nx) * o.ny;
  std::vector<double> r = b, p = b, q(rows);
  double rr = dot(r, r, plane);
  const double r0 = std::sqrt(rr);
  std::printf("iter %4d residual %.17e\n", 0, r0);
  for (int k = 1; k <= o.iters; ++k) {
    spmv(a, p, q);
    const double alpha = rr / dot(p, q, plane);
#pragma omp parallel for
    for (long i = 0; i < rows; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    const double rr_new = dot(r, r, plane), beta = rr_new / rr;
    rr = rr_new;
    std::printf("iter %4d residual %.17e\n", k, std::sqrt(rr));
    if (std::sqrt(rr) <= o.tol * r0) break;
#pragma omp parallel for
    for (long i = 0; i < rows; ++i) p[i] = r[i] + beta * p[i];
  }
  return {r0, std::sqrt(rr)};
}

// The checks against the exact solution x = 1 (the file's header); prints the figures.
bool verify(const Csr& a, const std::vector<double>& b, const std::vector<double>& x, Residuals res,
            const Options& o) {
  const long rows = static_cast<long>(b.size());
  std::vector<double> d(rows);
  spmv(a, x, d);
  double err = 0.0;
#pragma omp parallel for reduction(max : err)
  for (long i = 0; i < rows; ++i) {
    err = std::max(err, std::fabs(x[i] - 1.0));
    d[i] = b[i] - d[i];
  }
  const double true_res = std::sqrt(dot(d, d, static_cast<long>(o.nx) * o.ny));
  const double bound = true_res / lambda_min(o) * (1.0 + 1e-6) + 1e-12;
  std::printf("relative residual %.6e, true residual ||b-Ax||_2 %.6e\n", res.last / res.first,
              true_res);
  std::printf("error ||x-1||_inf %.6e (bound ||b-Ax||_2/lambda_min %.6e)\n", err, bound);
  return err <= bound && std::fabs(true_res - res.last) <= 1e-8 * res.first &&
         (o.tol == 0.0 || res.last <= o.tol * res.first);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const long rows = static_cast<long>(o.nx) * o.ny * o.nz;
  std::printf("spcg_openmp: grid %d x %d x %d (%ld rows), iters %d, tol %g, threads %d\n", o.nx,
              o.ny, o.nz, rows, o.iters, o.tol, omp_get_max_threads());

  auto t0 = std::chrono::steady_clock::now();
  const Csr a = build_matrix(o);
  const std::vector<double> b = build_rhs(o);
  std::vector<double> x(rows, 0.0);
  const double setup = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  const Residuals res = cg(a, b, x, o);
  const double solve = seconds_since(t0);

  const bool ok = verify(a, b, x, res, o);
  std::printf("time setup %.6f s, solve %.6f s\n", setup, solve);
  std::printf("Verification: %s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}
