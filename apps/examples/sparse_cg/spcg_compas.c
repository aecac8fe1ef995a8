/* spcg_openmp.c ported to processes x threads with the C API (compas/compas.h): the same problem
 * (README.md), options, residual history (bit for bit) and verification; every `#pragma omp` line
 * is kept. What changed (diff -u spcg_openmp.c spcg_compas.c):
 *  1. compas_start joins the job and pins this process's OpenMP threads (a failing call ends the
 *     job); compas_finalize at the end.
 *  2. The z-planes are split over the processes as --planes C1,...,CP says (each >= 1, summing to
 *     nz; by default the block split); this process builds its rows (row i in plane z0 + i / plane
 *     of the grid), with global columns.
 *  3. compas_ghosts_create_columns: a partition from this process's row count and the plan of its
 *     off-process columns, the columns rewritten to local positions in [owned | ghosts].
 *  4. p and x hold [owned | ghosts]; the SpMV first calls compas_ghosts_update.
 *  5. A dot product's plane sums go into an nz-long vector, summed over the job (each entry given
 *     by one process, 0 by the others: exact), then added in plane order as before.
 *  6. The error's max is taken over the job; only process 0 prints (the others' stdout goes to
 *     /dev/null); its times end after a collective.
 * Besides, the messages name spcg_compas and go through one FAIL (one write each: every process
 * of the job may print one).
 * Usage: spcg_compas_c [--nx N] [--ny N] [--nz N] [--iters K] [--tol T] [--planes C1,...,CP]
 *        (compas-run -n P -t T, mpirun, srun, or alone) */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compas/compas.h"

typedef struct {
  int nx, ny, nz, iters;
  double tol;
  int64_t plane, z0, z1; /* (2) rows per z-plane; this process's z-planes [z0, z1) */
} Options;

static compas_runtime* rt;  /* (1) */
static compas_ghosts* plan; /* (3) */
static int64_t ng;          /* (3) ghosts per vector */

typedef struct {
  long rows;
  int* row_ptr;
  int* col;
  double* val;
} Csr;

typedef struct {
  double first, last; /* ||r|| before the first iteration and after the last */
} Residuals;

/* The message (a printf format, a string literal, and its arguments) after the program's name, in
 * one write, then exit(status). */
#define FAIL(status, ...) (fprintf(stderr, "spcg_compas: " __VA_ARGS__), exit(status))

static int parse_int(const char* name, const char* text, long lo, long hi) {
  char* end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi)
    FAIL(2, "%s '%s': an integer from %ld to %ld is allowed\n", name, text, lo, hi);
  return (int)v;
}

static double parse_tol(const char* text) {
  char* end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (*text == '\0' || *end != '\0' || errno != 0 || !(v >= 0.0 && v < 1.0))
    FAIL(2, "--tol '%s': a number from 0 (no tolerance) to below 1 is allowed\n", text);
  return v;
}

static Options parse(int argc, char** argv, int P, int me) {
  Options o = {64, 64, 64, 50, 0.0, 0, 0, 0};
  const char* planes = NULL; /* (2) */
  for (int k = 1; k < argc; k += 2) {
    const char* flag = argv[k];
    if (k + 1 >= argc) FAIL(2, "%s: a value is needed after it\n", flag);
    const char* v = argv[k + 1];
    if (!strcmp(flag, "--nx"))
      o.nx = parse_int(flag, v, 1, 1024);
    else if (!strcmp(flag, "--ny"))
      o.ny = parse_int(flag, v, 1, 1024);
    else if (!strcmp(flag, "--nz"))
      o.nz = parse_int(flag, v, P, 1024); /* (2) a z-plane per process at least */
    else if (!strcmp(flag, "--iters"))
      o.iters = parse_int(flag, v, 1, 1000000);
    else if (!strcmp(flag, "--tol"))
      o.tol = parse_tol(v);
    else if (!strcmp(flag, "--planes")) /* (2) C1,...,CP: z-planes per process */
      planes = v;
    else
      FAIL(2, "unknown option '%s': --nx, --ny, --nz, --iters, --tol or --planes is allowed\n",
           flag);
  }
  if (27.0 * o.nx * o.ny * o.nz > 2147483647.0)
    FAIL(2, "grid %d x %d x %d: at most 2^31 - 1 nonzeros (int32 indices) are allowed\n", o.nx,
         o.ny, o.nz);
  o.plane = (int64_t)o.nx * o.ny;
  compas_block_of(0, o.nz, P, me, &o.z0, &o.z1); /* (2) by default the block split */
  int count = 0, sum = 0; /* (2) --planes: this process's planes are the me-th count */
  for (const char* t = planes; planes && (t == planes || *t++ == ','); t += strcspn(t, ",")) {
    char c[strlen(t) + 1]; /* the count's text */
    snprintf(c, sizeof c, "%.*s", (int)strcspn(t, ","), t);
    const int n = parse_int("--planes", c, 1, 1024);
    if (count++ == me) o.z0 = sum, o.z1 = sum + n;
    sum += n;
  }
  if (planes && (count != P || sum != o.nz))
    FAIL(2, "--planes '%s': %d counts, each >= 1, summing to nz %d are allowed\n", planes, P, o.nz);
  return o;
}

static void* allocate(size_t count, size_t size) {
  void* p = malloc(count * size);
  if (!p) FAIL(1, "out of memory (%zu x %zu bytes)\n", count, size);
  return p;
}

/* The points of {c - 1, c, c + 1} inside [0, n). */
static int span(int c, int n) {
  return 1 + (c > 0) + (c + 1 < n);
}

static int neighbourhood(long i, const Options* o) {
  int x = (int)(i % o->nx), y = (int)((i / o->nx) % o->ny), z = (int)(o->z0 + i / o->plane);
  return span(x, o->nx) * span(y, o->ny) * span(z, o->nz);
}

static void fill_row(long i, const Options* o, int* col, double* val) {
  int x = (int)(i % o->nx), y = (int)((i / o->nx) % o->ny), z = (int)(o->z0 + i / o->plane);
  int e = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        int cx = x + dx, cy = y + dy, cz = z + dz;
        if (cx < 0 || cx >= o->nx || cy < 0 || cy >= o->ny || cz < 0 || cz >= o->nz) continue;
        col[e] = (cz * o->ny + cy) * o->nx + cx;
        val[e++] = (dx == 0 && dy == 0 && dz == 0) ? 26.0 : -1.0;
      }
}

/* This process's rows in CSR form (global columns): the row lengths first, then each row's
 * columns in increasing order. */
static Csr build_matrix(const Options* o) {
  Csr a;
  a.rows = (o->z1 - o->z0) * o->plane; /* (2) */
  a.row_ptr = allocate(a.rows + 1, sizeof(int));
  a.row_ptr[0] = 0;
  for (long i = 0; i < a.rows; ++i) a.row_ptr[i + 1] = a.row_ptr[i] + neighbourhood(i, o);
  a.col = allocate(a.row_ptr[a.rows], sizeof(int));
  a.val = allocate(a.row_ptr[a.rows], sizeof(double));
#pragma omp parallel for
  for (long i = 0; i < a.rows; ++i) fill_row(i, o, a.col + a.row_ptr[i], a.val + a.row_ptr[i]);
  return a;
}

static void spmv(const Csr* a, double* x, double* y) {
  compas_ghosts_update(plan, x, a->rows + ng, COMPAS_DOUBLE); /* (4) */
#pragma omp parallel for
  for (long i = 0; i < a->rows; ++i) {
    double s = 0.0;
    for (int e = a->row_ptr[i]; e < a->row_ptr[i + 1]; ++e) s += a->val[e] * x[a->col[e]];
    y[i] = s;
  }
}

/* a . b over n rows: one partial sum per z-plane (of `plane` rows), added in plane order. */
static double dot(const double* a, const double* b, long n, const Options* o) {
  long planes = n / o->plane, plane = o->plane;
  double* part = calloc(o->nz, sizeof(double));
#pragma omp parallel for
  for (long z = 0; z < planes; ++z) {
    double s = 0.0;
    for (long i = z * plane; i < (z + 1) * plane; ++i) s += a[i] * b[i];
    part[o->z0 + z] = s;
  }
  compas_allreduce(rt, part, part, o->nz, COMPAS_DOUBLE, COMPAS_SUM); /* (5) */
  double s = 0.0;
  for (long z = 0; z < o->nz; ++z) s += part[z];
  free(part);
  return s;
}

/* The smallest eigenvalue of A: 27 - prod over the axes of (1 + 2 cos(pi / (n + 1))). */
static double lambda_min(const Options* o) {
  const double pi = 3.14159265358979323846;
  return 27.0 - (1.0 + 2.0 * cos(pi / (o->nx + 1))) * (1.0 + 2.0 * cos(pi / (o->ny + 1))) *
                    (1.0 + 2.0 * cos(pi / (o->nz + 1)));
}

/* Unpreconditioned CG from x = 0; prints ||r|| after every iteration. */
static Residuals cg(const Csr* a, const double* b, double* x, const Options* o) {
  const long n = a->rows;
  double* r = allocate(n, sizeof(double));
  double* p = allocate(n + ng, sizeof(double)); /* (4) */
  double* q = allocate(n, sizeof(double));
  memcpy(r, b, n * sizeof(double));
  memcpy(p, b, n * sizeof(double));
  double rr = dot(r, r, n, o);
  const double r0 = sqrt(rr);
  printf("iter %4d residual %.17e\n", 0, r0);
  for (int k = 1; k <= o->iters; ++k) {
    spmv(a, p, q);
    const double alpha = rr / dot(p, q, n, o);
#pragma omp parallel for
    for (long i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    const double rr_new = dot(r, r, n, o), beta = rr_new / rr;
    rr = rr_new;
    printf("iter %4d residual %.17e\n", k, sqrt(rr));
    if (sqrt(rr) <= o->tol * r0) break;
#pragma omp parallel for
    for (long i = 0; i < n; ++i) p[i] = r[i] + beta * p[i];
  }
  free(r);
  free(p);
  free(q);
  return (Residuals){r0, sqrt(rr)};
}

/* The checks against the exact solution x = 1 (the file's header); prints the figures. */
static int verify(const Csr* a, const double* b, double* x, Residuals res, const Options* o) {
  const long n = a->rows;
  double* d = allocate(n, sizeof(double));
  spmv(a, x, d);
  double err = 0.0;
#pragma omp parallel for reduction(max : err)
  for (long i = 0; i < n; ++i) {
    err = fmax(err, fabs(x[i] - 1.0));
    d[i] = b[i] - d[i];
  }
  compas_allreduce(rt, &err, &err, 1, COMPAS_DOUBLE, COMPAS_MAX); /* (6) */
  const double true_res = sqrt(dot(d, d, n, o));
  const double bound = true_res / lambda_min(o) * (1.0 + 1e-6) + 1e-12;
  free(d);
  printf("relative residual %.6e, true residual ||b-Ax||_2 %.6e\n", res.last / res.first, true_res);
  printf("error ||x-1||_inf %.6e (bound ||b-Ax||_2/lambda_min %.6e)\n", err, bound);
  return err <= bound && fabs(true_res - res.last) <= 1e-8 * res.first &&
         (o->tol == 0.0 || res.last <= o->tol * res.first);
}

int main(int argc, char** argv) {
  rt = compas_start(&argc, &argv); /* (1) */
  const int me = compas_rank(rt), P = compas_size(rt);
  const Options o = parse(argc, argv, P, me);
  if (me > 0) (void)!freopen("/dev/null", "w", stdout); /* (6) process 0 prints */
  printf("spcg_compas: grid %d x %d x %d, iters %d, tol %g, %d processes x %d threads\n", o.nx,
         o.ny, o.nz, o.iters, o.tol, P, omp_get_max_threads());
  const long rows = (o.z1 - o.z0) * o.plane;
  double t0 = omp_get_wtime();
  Csr a = build_matrix(&o);
  compas_ghosts_create_columns(rt, rows, a.col, a.row_ptr[rows], COMPAS_INT32, &plan); /* (3) */
  compas_ghosts_sizes(plan, NULL, NULL, &ng);
  double* b = allocate(rows, sizeof(double));
  double* x = allocate(rows + ng, sizeof(double));
#pragma omp parallel for
  for (long i = 0; i < rows; ++i) {
    b[i] = 27.0 - neighbourhood(i, &o); /* b = A * ones: 26 minus the neighbours */
    x[i] = 0.0;
  }
  const double setup = omp_get_wtime() - t0;

  t0 = omp_get_wtime();
  const Residuals res = cg(&a, b, x, &o);
  const double solve = omp_get_wtime() - t0;

  const int ok = verify(&a, b, x, res, &o);
  printf("time setup %.6f s, solve %.6f s\n", setup, solve);
  printf("Verification: %s\n", ok ? "PASSED" : "FAILED");
  free(a.row_ptr);
  free(a.col);
  free(a.val);
  free(b);
  free(x);
  compas_finalize(&rt);
  return ok ? 0 : 1;
}
