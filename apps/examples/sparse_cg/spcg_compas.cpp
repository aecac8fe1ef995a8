// spcg_openmp.cpp ported to processes x threads on compas: the same problem (README.md), options,
// residual history (bit for bit) and verification; every `#pragma omp` line is kept.
// What changed (diff -u spcg_openmp.cpp spcg_compas.cpp):
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's OpenMP threads.
//  2. The z-planes are split over the processes as --planes C1,...,CP says (each >= 1, summing to
//     nz; by default the block split); this process builds its rows, with global columns.
//  3. A compas::Partition from this process's row count; GhostPlan::for_columns rewrites the
//     columns to local positions in [owned | ghosts] and plans the ghosts (spcg_mpi's externals).
//  4. p and x are compas::GhostedVector<double>s: the SpMV first calls update_ghosts() (one
//     message per neighbour); the other vectors hold the owned rows only.
//  5. A dot product's plane sums go into an nz-long vector, summed over the job (each entry
//     given by one process, 0 by the others: exact), then added in plane order as before.
//  6. The error's max is taken over the job; only process 0 prints (the others' stdout goes to
//     /dev/null); its times end after a collective (the last dot product, the plan).
// Usage: spcg_compas [--nx N] [--ny N] [--nz N] [--iters K] [--tol T] [--planes C1,...,CP]
//        (compas-run -n P -t T, mpirun, srun, or alone)
#include <omp.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "compas/compas.hpp"

namespace {

struct Options {
  int nx = 64, ny = 64, nz = 64, iters = 50;
  double tol = 0.0;
  std::vector<compas::index> planes;  // (2) z-planes per process
  long plane = 0, nloc = 0, z0 = 0;
};

struct Csr {
  std::vector<int> row_ptr, col;
  std::vector<double> val;
};

[[noreturn]] void bad_input(const std::string& message) {
  std::fprintf(stderr, "spcg_compas: %s\n", message.c_str());
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

Options parse(int argc, char** argv, int P, int me) {
  Options o;
  const char* planes = "";
  for (int k = 1; k < argc; k += 2) {
    const char* flag = argv[k];
    if (k + 1 >= argc) bad_input(std::string(flag) + ": a value is needed after it");
    const char* v = argv[k + 1];
    if (!std::strcmp(flag, "--nx"))
      o.nx = parse_int(flag, v, 1, 1024);
    else if (!std::strcmp(flag, "--ny"))
      o.ny = parse_int(flag, v, 1, 1024);
    else if (!std::strcmp(flag, "--nz"))
      o.nz = parse_int(flag, v, P, 1024);  // (2) a z-plane per process at least
    else if (!std::strcmp(flag, "--iters"))
      o.iters = parse_int(flag, v, 1, 1000000);
    else if (!std::strcmp(flag, "--tol"))
      o.tol = parse_tol(v);
    else if (!std::strcmp(flag, "--planes"))  // (2) --planes C1,...,CP
      for (const char* t = planes = v; t == v || *t++ == ','; t += std::strcspn(t, ","))
        o.planes.push_back(parse_int(flag, std::string(t, std::strcspn(t, ",")).c_str(), 1, 1024));
    else
      bad_input(std::string("unknown option '") + flag +
                "': --nx, --ny, --nz, --iters, --tol or --planes is allowed");
  }
  o.plane = static_cast<long>(o.nx) * o.ny;
  if (27.0 * o.plane * o.nz > 2147483647.0)
    bad_input("grid " + std::to_string(o.nx) + " x " + std::to_string(o.ny) + " x " +
              std::to_string(o.nz) + ": at most 2^31 - 1 nonzeros (int32 indices) are allowed");
  for (int k = 0; k < P && !*planes; ++k) o.planes.push_back(o.nz / P + (k < o.nz % P));
  if (std::ssize(o.planes) != P || std::reduce(o.planes.begin(), o.planes.end()) != o.nz)
    bad_input(std::string("--planes '") + planes + "': " + std::to_string(P) +
              " counts, each >= 1, summing to nz " + std::to_string(o.nz) + " are allowed");
  o.z0 = std::reduce(o.planes.begin(), o.planes.begin() + me);
  o.nloc = o.planes[me] * o.plane;
  return o;
}

// The points of {c - 1, c, c + 1} inside [0, n).
int span(int c, int n) {
  return 1 + (c > 0) + (c + 1 < n);
}

// This process's rows of the matrix in CSR form (global columns): the row lengths first, then
// each row's columns in increasing order.
Csr build_matrix(const Options& o) {
  const long rows = o.nloc, first = o.z0 * o.plane;  // (2)
  Csr a;
  a.row_ptr.assign(rows + 1, 0);
  for (long i = first, j = 0; j < rows; ++i, ++j) {
    const int x = i % o.nx, y = (i / o.nx) % o.ny, z = i / o.plane;
    a.row_ptr[j + 1] = a.row_ptr[j] + span(x, o.nx) * span(y, o.ny) * span(z, o.nz);
  }
  a.col.resize(a.row_ptr[rows]);
  a.val.resize(a.row_ptr[rows]);
#pragma omp parallel for
  for (long i = first; i < first + rows; ++i) {
    const int x = i % o.nx, y = (i / o.nx) % o.ny, z = i / o.plane;
    int e = a.row_ptr[i - first];
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
  const long rows = o.nloc, first = o.z0 * o.plane;
  std::vector<double> b(rows);
#pragma omp parallel for
  for (long i = first; i < first + rows; ++i) {
    const int x = i % o.nx, y = (i / o.nx) % o.ny, z = i / o.plane;
    b[i - first] = 27.0 - span(x, o.nx) * span(y, o.ny) * span(z, o.nz);
  }
  return b;
}

void spmv(const Csr& a, compas::GhostedVector<double>& x, std::vector<double>& y) {
  const long rows = static_cast<long>(y.size());
  x.update_ghosts();  // (4)
#pragma omp parallel for
  for (long i = 0; i < rows; ++i) {
    double s = 0.0;
    for (int e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) s += a.val[e] * x[a.col[e]];
    y[i] = s;
  }
}

// a . b: one partial sum per z-plane (of `plane` rows), added in plane order.
double dot(compas::Runtime& rt, const double* a, const double* b, const Options& o) {
  const long planes = o.nloc / o.plane;
  std::vector<double> part(o.nz, 0.0);
#pragma omp parallel for
  for (long z = 0; z < planes; ++z) {
    double s = 0.0;
    for (long i = z * o.plane; i < (z + 1) * o.plane; ++i) s += a[i] * b[i];
    part[o.z0 + z] = s;
  }
  compas::allreduce(rt, std::span(part), std::span(part), compas::op::sum{});  // (5)
  double s = 0.0;
  for (long z = 0; z < o.nz; ++z) s += part[z];
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

// Unpreconditioned CG from x = 0; process 0 prints ||r|| after every iteration.
Residuals cg(compas::Runtime& rt, const Csr& a, const std::vector<double>& b,
             compas::GhostedVector<double>& x, compas::GhostedVector<double>& p, const Options& o) {
  const long rows = o.nloc;
  std::vector<double> r = b, q(rows);
  double rr = dot(rt, r.data(), r.data(), o);
  const double r0 = std::sqrt(rr);
  std::printf("iter %4d residual %.17e\n", 0, r0);
  for (int k = 1; k <= o.iters; ++k) {
    spmv(a, p, q);
    const double alpha = rr / dot(rt, p.data(), q.data(), o);
#pragma omp parallel for
    for (long i = 0; i < rows; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    const double rr_new = dot(rt, r.data(), r.data(), o), beta = rr_new / rr;
    rr = rr_new;
    std::printf("iter %4d residual %.17e\n", k, std::sqrt(rr));
    if (std::sqrt(rr) <= o.tol * r0) break;
#pragma omp parallel for
    for (long i = 0; i < rows; ++i) p[i] = r[i] + beta * p[i];
  }
  return {r0, std::sqrt(rr)};
}

// The checks against the exact solution x = 1 (the file's header); process 0 prints the figures.
bool verify(compas::Runtime& rt, const Csr& a, const std::vector<double>& b,
            compas::GhostedVector<double>& x, Residuals res, const Options& o) {
  const long rows = o.nloc;
  std::vector<double> d(rows);
  spmv(a, x, d);
  double err = 0.0;
#pragma omp parallel for reduction(max : err)
  for (long i = 0; i < rows; ++i) {
    err = std::max(err, std::fabs(x[i] - 1.0));
    d[i] = b[i] - d[i];
  }
  err = rt.allreduce(err, compas::op::max{});  // (6)
  const double true_res = std::sqrt(dot(rt, d.data(), d.data(), o));
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
  compas::Runtime rt(argc, argv);  // (1)
  const Options o = parse(argc, argv, rt.processes(), rt.process());
  if (rt.process() > 0) (void)std::freopen("/dev/null", "w", stdout);  // (6) process 0 prints
  std::printf("spcg_compas: grid %d x %d x %d, iters %d, tol %g, %d processes x %d threads\n", o.nx,
              o.ny, o.nz, o.iters, o.tol, rt.processes(), omp_get_max_threads());

  auto t0 = std::chrono::steady_clock::now();
  Csr a = build_matrix(o);
  auto plan = compas::GhostPlan::for_columns(compas::Partition::from_local(rt, o.nloc), a.col);
  const std::vector<double> b = build_rhs(o);
  compas::GhostedVector<double> x(plan), p(plan, b);  // (4)
  const double setup = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  const Residuals res = cg(rt, a, b, x, p, o);
  const double solve = seconds_since(t0);

  const bool ok = verify(rt, a, b, x, res, o);
  std::printf("time setup %.6f s, solve %.6f s\n", setup, solve);
  std::printf("Verification: %s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}
