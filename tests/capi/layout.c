/* compas_array_create_with_layout under compas-run (1 to 3 processes):
 *  - COMPAS_LAYOUT_CONTIGUOUS packs the halo box: compas_array_data's strides are exactly the
 *    extents of this process's halo box, for 2-D arrays by rows, over a grid that cuts the columns
 *    unevenly and over the chosen grid, and for 3-D arrays over the chosen grid and over one that
 *    cuts the contiguous dimension unevenly (halo widths that differ per dimension);
 *  - the halo exchange of such arrays (compas_array_exchange, and begin / wait) fills every halo
 *    cell whose source exists with the global function's value, periodic and not, and leaves the
 *    halo cells past a non-periodic boundary as they were;
 *  - compas_array_create keeps its padded rows (a 2-D row of 10 doubles with halos takes whole
 *    64-byte lines, more than its 12 elements);
 *  - a layout outside the enum is COMPAS_ERR_ARG naming it; processes that pass different
 *    layouts get COMPAS_ERR_COLLECTIVE. */
#include <stdint.h>

#include "check.h"

static int np = 1;

/* The global function: what owned cell x holds. */
static double value(const int64_t* x) {
  return (double)(1 + x[0] * 1000003 + x[1] * 1009 + x[2]);
}

/* Local block geometry: halo box [hlo, hhi), strides; unused dimensions [0, 1), stride 0. */
typedef struct block {
  int dims;
  double* p;
  int64_t lo[3], hi[3], hlo[3], hhi[3], strides[3];
} block;

static block geometry(compas_array* a, int dims) {
  block b = {dims, NULL, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}};
  EXPECT_OK(compas_array_data(a, &b.p, b.strides));
  EXPECT_OK(compas_array_bounds(a, b.lo, b.hi));
  EXPECT_OK(compas_array_halo_bounds(a, b.hlo, b.hhi));
  return b;
}

static double* at(const block* b, const int64_t* x) {
  int64_t o = 0;
  for (int d = 0; d < b->dims; ++d) o += (x[d] - b->hlo[d]) * b->strides[d];
  return b->p + o;
}

/* The next cell of [lo, hi) in x (last dimension fastest); 0 after the last. */
static int next(int64_t* x, const int64_t* lo, const int64_t* hi) {
  for (int d = 2; d >= 0; --d) {
    if (++x[d] < hi[d]) return 1;
    x[d] = lo[d];
  }
  return 0;
}

/* The strides of a packed halo box: the last 1, each other the product of the extents after it. */
static void check_packed(const block* b, const char* what) {
  int64_t want = 1;
  for (int d = b->dims - 1; d >= 0; --d) {
    if (b->strides[d] != want) {
      printf("[%d] FAIL: %s: stride %d is %lld, the packed box's is %lld\n", me, what, d,
             (long long)b->strides[d], (long long)want);
      ++failures;
    }
    want *= b->hhi[d] - b->hlo[d];
  }
}

/* Owned cells the global function, halo cells -1; then the exchange (begin / wait when
 * `split`); then every halo cell the function's value at its image, or -1 past a non-periodic
 * boundary. */
static void check_exchange(compas_array* a, const block* b, const int64_t* glo, const int64_t* ghi,
                           const int* periodic, int split, const char* what) {
  int64_t x[3] = {b->hlo[0], b->hlo[1], b->hlo[2]};
  do {
    int owned = 1;
    for (int d = 0; d < 3; ++d) owned = owned && x[d] >= b->lo[d] && x[d] < b->hi[d];
    *at(b, x) = owned ? value(x) : -1;
  } while (next(x, b->hlo, b->hhi));
  if (split) {
    compas_exchange* e = NULL;
    EXPECT_OK(compas_array_begin_exchange(a, &e));
    EXPECT_OK(compas_exchange_wait(&e));
  } else {
    EXPECT_OK(compas_array_exchange(a));
  }
  int wrong = 0;
  for (int d = 0; d < 3; ++d) x[d] = b->hlo[d];
  do {
    int64_t w[3];
    int exists = 1;
    for (int d = 0; d < 3; ++d) {
      const int64_t n = ghi[d] - glo[d];
      w[d] = x[d];
      if (x[d] >= glo[d] && x[d] < ghi[d]) continue;
      if (!periodic[d]) exists = 0;
      w[d] = glo[d] + ((x[d] - glo[d]) % n + n) % n;
    }
    const double want = exists ? value(w) : -1;
    if (*at(b, x) != want && wrong++ < 3)
      printf("[%d] FAIL: %s: cell (%lld, %lld, %lld) is %g, want %g\n", me, what, (long long)x[0],
             (long long)x[1], (long long)x[2], *at(b, x), want);
  } while (next(x, b->hlo, b->hhi));
  failures += wrong;
  if (!wrong) printf("[%d] ok: %s: every halo cell right\n", me, what);
}

/* One array: made contiguous, its strides packed, its exchange right (both forms), destroyed. */
static void check_case(compas_runtime* rt, int dims, const int64_t* glo, const int64_t* ghi,
                       const compas_array_options* o, const char* what) {
  compas_array* a = NULL;
  EXPECT_OK(compas_array_create_with_layout(rt, COMPAS_DOUBLE, dims, glo, ghi, o,
                                            COMPAS_LAYOUT_CONTIGUOUS, &a));
  if (a == NULL) return;
  const block b = geometry(a, dims);
  check_packed(&b, what);
  const int64_t g0[3] = {glo[0], dims > 1 ? glo[1] : 0, dims > 2 ? glo[2] : 0};
  const int64_t g1[3] = {ghi[0], dims > 1 ? ghi[1] : 1, dims > 2 ? ghi[2] : 1};
  const int periodic[3] = {o->periodic[0], dims > 1 ? o->periodic[1] : 0,
                           dims > 2 ? o->periodic[2] : 0};
  check_exchange(a, &b, g0, g1, periodic, 0, what);
  check_exchange(a, &b, g0, g1, periodic, 1, what);
  EXPECT_OK(compas_array_destroy(&a));
}

static void check_2d(compas_runtime* rt) {
  const int64_t glo[2] = {1, 1}, ghi[2] = {8, 11}; /* 7 rows x 10 columns */
  compas_array_options o;
  for (int periodic = 0; periodic < 2; ++periodic) {
    compas_array_options_init(&o);
    o.periodic[0] = o.periodic[1] = periodic;
    check_case(rt, 2, glo, ghi, &o, periodic ? "2-D by rows, periodic" : "2-D by rows");
    o.decomposition = COMPAS_DECOMP_GRID;
    o.grid[0] = 1;
    o.grid[1] = np; /* 10 columns over 3 processes: 4, 3, 3 */
    check_case(rt, 2, glo, ghi, &o, periodic ? "2-D columns cut, periodic" : "2-D columns cut");
    o.grid[0] = o.grid[1] = 0;
    check_case(rt, 2, glo, ghi, &o, periodic ? "2-D grid, periodic" : "2-D grid");
  }
}

static void check_3d(compas_runtime* rt) {
  const int64_t glo[3] = {0, -2, 1}, ghi[3] = {5, 4, 11}; /* 5 x 6 x 10 */
  compas_array_options o;
  compas_array_options_init(&o);
  o.halo[0] = 1, o.halo[1] = 2, o.halo[2] = 1;
  o.periodic[2] = 1;
  check_case(rt, 3, glo, ghi, &o, "3-D chosen grid, periodic columns");
  o.grid[0] = o.grid[1] = 1;
  o.grid[2] = np; /* 10 columns over 3 processes: 4, 3, 3 */
  o.periodic[0] = 1;
  check_case(rt, 3, glo, ghi, &o, "3-D columns cut, periodic planes and columns");
}

/* compas_array_create's rows stay padded to whole 64-byte lines. */
static void check_padded_default(compas_runtime* rt) {
  const int64_t glo[2] = {0, 0}, ghi[2] = {6, 10};
  compas_array* a = NULL;
  EXPECT_OK(compas_array_create(rt, COMPAS_DOUBLE, 2, glo, ghi, NULL, &a));
  const block b = geometry(a, 2);
  EXPECT_TRUE(b.strides[0] > 12 && b.strides[0] % 8 == 0); /* whole lines of 8 doubles */
  EXPECT_OK(compas_array_destroy(&a));
}

static void check_misuse(compas_runtime* rt) {
  const int64_t glo[2] = {0, 0}, ghi[2] = {6, 10};
  compas_array* a = NULL;
  EXPECT_CODE(compas_array_create_with_layout(rt, COMPAS_DOUBLE, 2, glo, ghi, NULL, 7, &a),
              COMPAS_ERR_ARG, "layout 7: COMPAS_LAYOUT_PADDED (0) or COMPAS_LAYOUT_CONTIGUOUS");
  EXPECT_TRUE(a == NULL);
  if (np < 2) return;
  const int layout = me == 0 ? COMPAS_LAYOUT_CONTIGUOUS : COMPAS_LAYOUT_PADDED;
  EXPECT_CODE(compas_array_create_with_layout(rt, COMPAS_DOUBLE, 2, glo, ghi, NULL, layout, &a),
              COMPAS_ERR_COLLECTIVE, "contiguous");
  EXPECT_TRUE(a == NULL);
}

int main(int argc, char** argv) {
  compas_runtime* rt = start(&argc, &argv, &np);
  check_2d(rt);
  check_3d(rt);
  check_padded_default(rt);
  check_misuse(rt);
  EXPECT_OK(compas_finalize(&rt));
  return verdict();
}
