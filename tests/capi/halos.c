/* The halo calls of the C API beyond compas_array_exchange, under compas-run (1 to 4 processes):
 *  - compas_array_accumulate_halos (and the short form compas_accumulate_halos) on 1-D, 2-D and
 *    3-D arrays, periodic and not: every process writes values that depend on its rank and on the
 *    position into its halo cells; every owned cell is then checked against a brute-force sum over
 *    every process's halo cells (their boxes gathered with compas_allreduce) that image it;
 *  - compas_exchange_test: 1 within a bounded number of polls on process 0 (a begin meets every
 *    process first: no neighbour can be held out of it), still 1 until compas_exchange_wait, then
 *    the halos right;
 *  - misuse: accumulating while an exchange is pending, a NULL done, NULL and dead handles. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"

static int np = 1;

/* One process's part: owned [lo, hi) and with its halos [hlo, hhi), 3 entries (unused dims 0..1).
 */
typedef struct box {
  int64_t lo[3], hi[3], hlo[3], hhi[3];
} box;

/* An array, its domain and every process's part, the unused dimensions [0, 1) with stride 0. */
typedef struct shape {
  compas_array* a;
  int type, dims, periodic[3];
  void* data;
  int64_t strides[3], glo[3], ghi[3];
  box* parts; /* np entries */
} shape;

static void describe(compas_runtime* rt, compas_array* a, const int64_t* glo, const int64_t* ghi,
                     const int* periodic, shape* s) {
  s->a = a;
  EXPECT_OK(compas_array_type(a, &s->type, &s->dims));
  for (int d = 0; d < 3; ++d) {
    s->strides[d] = 0;
    s->glo[d] = d < s->dims ? glo[d] : 0;
    s->ghi[d] = d < s->dims ? ghi[d] : 1;
    s->periodic[d] = d < s->dims ? periodic[d] : 0;
  }
  EXPECT_OK(compas_array_data(a, &s->data, s->strides));
  box mine = {{0, 0, 0}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}};
  EXPECT_OK(compas_array_bounds(a, mine.lo, mine.hi));
  EXPECT_OK(compas_array_halo_bounds(a, mine.hlo, mine.hhi));
  s->parts = calloc((size_t)np, sizeof(box));
  s->parts[me] = mine; /* the others zero: the sum gathers every process's part */
  EXPECT_OK(compas_allreduce(rt, s->parts, s->parts, 12 * (int64_t)np, COMPAS_INT64, COMPAS_SUM));
}

static int64_t offset(const shape* s, const int64_t* x) {
  const box* b = &s->parts[me];
  int64_t o = 0;
  for (int d = 0; d < 3; ++d) o += (x[d] - b->hlo[d]) * s->strides[d];
  return o;
}

static void put(const shape* s, const int64_t* x, int64_t v) {
  const int64_t o = offset(s, x);
  if (s->type == COMPAS_DOUBLE) ((double*)s->data)[o] = (double)v;
  if (s->type == COMPAS_INT64) ((int64_t*)s->data)[o] = v;
  if (s->type == COMPAS_INT32) ((int32_t*)s->data)[o] = (int32_t)v;
}

static int64_t get(const shape* s, const int64_t* x) {
  const int64_t o = offset(s, x);
  if (s->type == COMPAS_DOUBLE) return (int64_t)((double*)s->data)[o];
  if (s->type == COMPAS_INT64) return ((int64_t*)s->data)[o];
  return ((int32_t*)s->data)[o];
}

/* The next cell of [lo, hi) in x (last dimension fastest); 0 after the last. */
static int next(int64_t* x, const int64_t* lo, const int64_t* hi) {
  for (int d = 2; d >= 0; --d) {
    if (++x[d] < hi[d]) return 1;
    x[d] = lo[d];
  }
  return 0;
}

static int inside(const int64_t* x, const int64_t* lo, const int64_t* hi) {
  for (int d = 0; d < 3; ++d)
    if (x[d] < lo[d] || x[d] >= hi[d]) return 0;
  return 1;
}

/* The global cell that halo cell x images in w (periodic dimensions wrap); 0 when there is none
 * (outside a non-periodic boundary). */
static int image(const shape* s, const int64_t* x, int64_t* w) {
  for (int d = 0; d < 3; ++d) {
    const int64_t n = s->ghi[d] - s->glo[d];
    w[d] = x[d];
    if (x[d] >= s->glo[d] && x[d] < s->ghi[d]) continue;
    if (!s->periodic[d]) return 0;
    w[d] = s->glo[d] + (((x[d] - s->glo[d]) % n) + n) % n;
  }
  return 1;
}

static int64_t own_value(const int64_t* x) {
  return 7 + 1009 * x[0] + 101 * x[1] + 3 * x[2];
}

/* What process q writes into its halo cell x (x unwrapped: -1, not n - 1). */
static int64_t halo_value(int q, const int64_t* x) {
  return 100003 * (q + 1) + 10007 * (x[0] + 5) + 211 * (x[1] + 5) + 13 * (x[2] + 5);
}

static void fill(const shape* s) {
  const box* b = &s->parts[me];
  int64_t x[3] = {b->hlo[0], b->hlo[1], b->hlo[2]};
  do put(s, x, inside(x, b->lo, b->hi) ? own_value(x) : halo_value(me, x));
  while (next(x, b->hlo, b->hhi));
}

/* Owned cell x after accumulate_halos: its value plus every process's halo cells that image it. */
static int64_t reference(const shape* s, const int64_t* x) {
  int64_t want = own_value(x), w[3];
  for (int q = 0; q < np; ++q) {
    const box* b = &s->parts[q];
    int64_t y[3] = {b->hlo[0], b->hlo[1], b->hlo[2]};
    do
      if (!inside(y, b->lo, b->hi) && image(s, y, w) && w[0] == x[0] && w[1] == x[1] &&
          w[2] == x[2])
        want += halo_value(q, y);
    while (next(y, b->hlo, b->hhi));
  }
  return want;
}

/* Wrong cells after accumulate_halos: owned ones against reference(), halos unchanged. */
static int wrong_sums(const shape* s, const char* what) {
  const box* b = &s->parts[me];
  int64_t x[3] = {b->hlo[0], b->hlo[1], b->hlo[2]};
  int wrong = 0;
  do {
    const int owned = inside(x, b->lo, b->hi);
    const int64_t want = owned ? reference(s, x) : halo_value(me, x), got = get(s, x);
    if (got != want && ++wrong <= 3)
      printf("[%d] FAIL: %s: %s cell (%lld, %lld, %lld) holds %lld, want %lld\n", me, what,
             owned ? "owned" : "halo", (long long)x[0], (long long)x[1], (long long)x[2],
             (long long)got, (long long)want);
  } while (next(x, b->hlo, b->hhi));
  return wrong;
}

/* One array: created (or compas_alloc'd for the short form), filled, accumulated, checked. */
static void accumulate_case(compas_runtime* rt, int type, int dims, const int64_t* lo,
                            const int64_t* hi, const compas_array_options* o, int short_form,
                            const char* what) {
  compas_array* a = NULL;
  if (short_form) {
    void* p = compas_alloc(rt, type, dims, lo, hi, o);
    EXPECT_TRUE(p != NULL);
    a = compas_array_of(p);
  } else {
    EXPECT_OK(compas_array_create(rt, type, dims, lo, hi, o, &a));
  }
  shape s;
  describe(rt, a, lo, hi, o->periodic, &s);
  fill(&s);
  if (short_form)
    EXPECT_OK(compas_accumulate_halos(s.data));
  else
    EXPECT_OK(compas_array_accumulate_halos(a));
  const int wrong = wrong_sums(&s, what);
  printf("[%d] %s: %s\n", me, what, wrong ? "wrong sums" : "ok");
  failures += wrong != 0;
  free(s.parts);
  EXPECT_OK(compas_array_destroy(&a));
}

static compas_array_options options(int64_t h0, int64_t h1, int64_t h2, int p0, int p1, int p2) {
  compas_array_options o;
  compas_array_options_init(&o);
  o.halo[0] = h0, o.halo[1] = h1, o.halo[2] = h2;
  o.periodic[0] = p0, o.periodic[1] = p1, o.periodic[2] = p2;
  return o;
}

static void accumulate_1d_2d(compas_runtime* rt) {
  for (int periodic = 0; periodic < 2; ++periodic) {
    compas_array_options o = options(2, 2, 2, periodic, periodic, periodic);
    accumulate_case(rt, COMPAS_DOUBLE, 1, (int64_t[]){-2}, (int64_t[]){4 * np + 3}, &o, 0,
                    periodic ? "1-D periodic" : "1-D");
    o = options(1, 1, 1, periodic, periodic, periodic);
    const int64_t lo[2] = {0, 1}, hi[2] = {3 * np + 1, 2 * np + 4};
    accumulate_case(rt, COMPAS_INT64, 2, lo, hi, &o, 0,
                    periodic ? "2-D rows periodic" : "2-D rows");
    o = options(2, 2, 2, periodic, periodic, periodic);
    o.decomposition = COMPAS_DECOMP_GRID;
    accumulate_case(rt, COMPAS_INT64, 2, lo, hi, &o, 0,
                    periodic ? "2-D grid periodic" : "2-D grid");
    accumulate_case(rt, COMPAS_DOUBLE, 2, lo, hi, &o, 1,
                    periodic ? "2-D grid periodic, short form" : "2-D grid, short form");
  }
}

static void accumulate_3d(compas_runtime* rt) {
  const int periodic[4][3] = {{0, 0, 0}, {1, 1, 1}, {1, 0, 1}, {0, 1, 0}};
  const int64_t lo[3] = {0, 0, -1}, hi[3] = {2 * np + 2, 5, 5};
  for (int c = 0; c < 4; ++c) {
    const int* p = periodic[c];
    const compas_array_options o = options(2, 1, 1, p[0], p[1], p[2]);
    char what[64];
    snprintf(what, sizeof what, "3-D periodic %d %d %d", p[0], p[1], p[2]);
    accumulate_case(rt, COMPAS_INT32, 3, lo, hi, &o, 0, what);
  }
}

/* Polls until *done or `polls` tries, 50 us apart; the number of polls made. */
static int poll(compas_exchange* x, int* done, int polls) {
  int n = 0;
  for (*done = 0; n < polls && !*done; ++n) {
    const int code = compas_exchange_test(x, done);
    if (code != COMPAS_OK) { /* one line, not one per poll */
      EXPECT_CODE(code, COMPAS_OK, NULL);
      return n;
    }
    if (!*done) nanosleep(&(struct timespec){0, 50000}, NULL);
  }
  return n;
}

/* Halo cells whose image exists not holding their image's owned value. */
static int wrong_halos(const shape* s) {
  const box* b = &s->parts[me];
  int64_t x[3] = {b->hlo[0], b->hlo[1], b->hlo[2]}, w[3];
  int wrong = 0;
  do
    if (!inside(x, b->lo, b->hi) && image(s, x, w) && get(s, x) != own_value(w)) ++wrong;
  while (next(x, b->hlo, b->hhi));
  return wrong;
}

static void exchange_test(compas_runtime* rt) {
  const int64_t lo[3] = {0, 0, 0}, hi[3] = {2 * np + 2, 5, 6};
  const compas_array_options o = options(1, 1, 1, 1, 1, 1);
  compas_array* a = NULL;
  EXPECT_OK(compas_array_create(rt, COMPAS_DOUBLE, 3, lo, hi, &o, &a));
  shape s;
  describe(rt, a, lo, hi, o.periodic, &s);
  fill(&s);
  compas_exchange* x = NULL;
  int done = 0;
  EXPECT_OK(compas_array_begin_exchange(a, &x));
  if (me == 0) {
    const int polls = poll(x, &done, 200000);
    printf("[%d] compas_exchange_test: done after %d polls\n", me, polls);
    int again = 0;
    EXPECT_OK(compas_exchange_test(x, &again));
    EXPECT_TRUE(again == 1); /* the exchange stays alive and done until wait */
  } else {
    EXPECT_OK(compas_exchange_test(x, &done));
    EXPECT_TRUE(done == 0 || done == 1);
    done = 1;
  }
  EXPECT_OK(compas_exchange_wait(&x));
  EXPECT_TRUE(x == NULL);
  EXPECT_TRUE(done == 1);
  EXPECT_TRUE(wrong_halos(&s) == 0);
  free(s.parts);
  EXPECT_OK(compas_array_destroy(&a));
}

static void misuse(compas_runtime* rt) {
  const int64_t lo[2] = {0, 0}, hi[2] = {4 * np, 6};
  double* u = compas_alloc(rt, COMPAS_DOUBLE, 2, lo, hi, NULL);
  compas_array* a = compas_array_of(u);
  compas_exchange* x = NULL;
  int done = -1;
  EXPECT_OK(compas_array_begin_exchange(a, &x));
  EXPECT_CODE(compas_array_accumulate_halos(a), COMPAS_ERR_STATE,
              "compas_array_accumulate_halos: the array has an exchange pending");
  EXPECT_CODE(compas_accumulate_halos(u), COMPAS_ERR_STATE, "exchange pending");
  EXPECT_CODE(compas_exchange_test(x, NULL), COMPAS_ERR_ARG, "compas_exchange_test: done is NULL");
  EXPECT_CODE(compas_exchange_test(NULL, &done), COMPAS_ERR_HANDLE,
              "compas_exchange_test: exchange is NULL");
  EXPECT_TRUE(done == -1);
  EXPECT_OK(compas_exchange_wait(&x));
  EXPECT_CODE(compas_exchange_test(x, &done), COMPAS_ERR_HANDLE, "exchange is NULL");
  EXPECT_OK(compas_array_accumulate_halos(a)); /* fine again once the exchange is over */
  EXPECT_CODE(compas_array_accumulate_halos(NULL), COMPAS_ERR_HANDLE,
              "compas_array_accumulate_halos: array is NULL");
  EXPECT_CODE(compas_accumulate_halos(u + 1), COMPAS_ERR_HANDLE,
              "compas_accumulate_halos: data is not the local block of a live array");
  EXPECT_OK(compas_free(u));
  EXPECT_CODE(compas_accumulate_halos(u), COMPAS_ERR_HANDLE, "not the local block");
}

int main(int argc, char** argv) {
  compas_runtime* rt = start(&argc, &argv, &np);
  accumulate_1d_2d(rt);
  accumulate_3d(rt);
  exchange_test(rt);
  misuse(rt);
  EXPECT_OK(compas_finalize(&rt));
  return verdict();
}
