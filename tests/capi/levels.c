/* The 3-D level calls under compas-run (1 to 4 processes):
 *  - compas_array_create_split: the planes cut at split points of the test's own (parts of 2 and
 *    4 planes by rank), every process's bounds the part the split points give it, its halos after
 *    a periodic exchange the global function's values at the wrapped cells;
 *  - compas_array_create_like by 2 on the same processes: the coarse part of every process the
 *    fine part's boundaries halved (1-based: coarse c with fine 2c - 1 and 2c);
 *  - the coarse level onto a group of the first two processes (create_like with a group, factor
 *    1) and back by compas_array_redistribute: every owned cell holds the value computed here;
 *    a non-member holds nothing (member 0, empty bounds) and compas_array_of finds its array;
 *  - errors naming the value: a partition that does not end at the domain's end, a count below
 *    2, a factor of 0, a factor that misaligns a boundary or does not divide a group level's
 *    extent, a 2-D array, arrays of another type or domain, a group with arrays on it (one
 *    swapped onto another handle included). */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

static int np = 1;

static double value(int64_t i, int64_t j, int64_t k) {
  return (double)(1 + i * 10007 + j * 101 + k);
}

/* The planes' split points: part p holds 2 planes when p is even, 4 when odd, from plane 1. */
static int64_t plane_split(int p) {
  int64_t b = 1;
  for (int q = 0; q < p; ++q) b += q % 2 ? 4 : 2;
  return b;
}

typedef struct block {
  double* p;
  int64_t lo[3], hi[3], hlo[3], strides[3];
} block;

static block geometry(compas_array* a) {
  block b;
  int64_t hhi[3];
  EXPECT_OK(compas_array_data(a, &b.p, b.strides));
  EXPECT_OK(compas_array_bounds(a, b.lo, b.hi));
  EXPECT_OK(compas_array_halo_bounds(a, b.hlo, hhi));
  return b;
}

static double* at(const block* b, int64_t i, int64_t j, int64_t k) {
  return b->p + (i - b->hlo[0]) * b->strides[0] + (j - b->hlo[1]) * b->strides[1] +
         (k - b->hlo[2]) * b->strides[2];
}

/* Every owned cell of a set to value() times `scale`. */
static void fill(compas_array* a, double scale) {
  block b = geometry(a);
  for (int64_t i = b.lo[0]; i < b.hi[0]; ++i)
    for (int64_t j = b.lo[1]; j < b.hi[1]; ++j)
      for (int64_t k = b.lo[2]; k < b.hi[2]; ++k) *at(&b, i, j, k) = scale * value(i, j, k);
}

/* The cells of [lo, hi) that do not hold value() times scale at their index wrapped into the
 * domain [dlo, dhi). */
static int wrong_cells(compas_array* a, const int64_t* lo, const int64_t* hi, const int64_t* dlo,
                       const int64_t* dhi, double scale) {
  block b = geometry(a);
  int wrong = 0;
  for (int64_t i = lo[0]; i < hi[0]; ++i)
    for (int64_t j = lo[1]; j < hi[1]; ++j)
      for (int64_t k = lo[2]; k < hi[2]; ++k) {
        const int64_t x[3] = {i, j, k};
        int64_t w[3];
        for (int d = 0; d < 3; ++d) {
          const int64_t n = dhi[d] - dlo[d];
          w[d] = dlo[d] + ((x[d] - dlo[d]) % n + n) % n;
        }
        wrong += *at(&b, i, j, k) != scale * value(w[0], w[1], w[2]);
      }
  return wrong;
}

int main(int argc, char** argv) {
  compas_runtime* rt = start(&argc, &argv, &np);
  compas_array_options o;
  EXPECT_OK(compas_array_options_init(&o));
  for (int d = 0; d < 3; ++d) o.periodic[d] = 1;
  const int64_t lo[3] = {1, 1, 1}, hi[3] = {plane_split(np), 5, 7};
  int64_t* splits = malloc(sizeof(int64_t) * (size_t)(np + 5));
  for (int p = 0; p <= np; ++p) splits[p] = plane_split(p);
  splits[np + 1] = 1, splits[np + 2] = 5, splits[np + 3] = 1, splits[np + 4] = 7;
  const int counts[3] = {np + 1, 2, 2};

  compas_array* u = NULL;
  EXPECT_OK(compas_array_create_split(rt, NULL, COMPAS_DOUBLE, lo, hi, splits, counts, &o,
                                      COMPAS_LAYOUT_CONTIGUOUS, &u));
  block b = geometry(u);
  EXPECT_TRUE(b.lo[0] == plane_split(me) && b.hi[0] == plane_split(me + 1));
  EXPECT_TRUE(b.lo[1] == 1 && b.hi[1] == 5 && b.lo[2] == 1 && b.hi[2] == 7);
  int grid[3] = {0, 0, 0}, member = 0;
  EXPECT_OK(compas_array_grid(u, grid));
  EXPECT_TRUE(grid[0] == np && grid[1] == 1 && grid[2] == 1);
  fill(u, 1.0);
  EXPECT_OK(compas_array_exchange(u));
  const int64_t hlo[3] = {b.lo[0] - 1, 0, 0}, hhi[3] = {b.hi[0] + 1, 6, 8};
  EXPECT_TRUE(wrong_cells(u, hlo, hhi, lo, hi, 1.0) == 0);

  /* The coarser level, aligned: fine boundary b becomes 1 + (b - 1) / 2. */
  compas_array* uc = NULL;
  EXPECT_OK(compas_array_create_like(u, 2, NULL, &uc));
  block c = geometry(uc);
  const int64_t clo[3] = {1, 1, 1}, chi[3] = {1 + (hi[0] - 1) / 2, 3, 4};
  EXPECT_TRUE(c.lo[0] == 1 + (plane_split(me) - 1) / 2 &&
              c.hi[0] == 1 + (plane_split(me + 1) - 1) / 2);
  EXPECT_TRUE(c.lo[1] == 1 && c.hi[1] == 3 && c.lo[2] == 1 && c.hi[2] == 4);

  /* Onto the first two processes and back. */
  const int in_group = me < 2;
  compas_group* few = NULL;
  EXPECT_OK(compas_group_split(rt, in_group ? 0 : -1, me, &few));
  compas_array* ug = NULL;
  EXPECT_OK(compas_array_create_like(uc, 1, few, &ug));
  EXPECT_OK(compas_array_member(ug, &member));
  EXPECT_TRUE(member == in_group);
  fill(uc, 1.0);
  EXPECT_OK(compas_array_redistribute(uc, ug));
  block g = geometry(ug);
  if (!in_group) {
    EXPECT_TRUE(g.lo[0] == g.hi[0] && g.lo[1] == g.hi[1] && g.lo[2] == g.hi[2]);
    EXPECT_TRUE(compas_array_of(g.p) == ug);
  }
  EXPECT_TRUE(wrong_cells(ug, g.lo, g.hi, clo, chi, 1.0) == 0);
  fill(ug, -3.0);
  EXPECT_OK(compas_array_redistribute(ug, uc));
  EXPECT_TRUE(wrong_cells(uc, c.lo, c.hi, clo, chi, -3.0) == 0);
  /* The block split on the group: its members' parts make up the domain. */
  compas_array* ub = NULL;
  EXPECT_OK(compas_array_create_split(rt, few, COMPAS_FLOAT, lo, hi, NULL, NULL, &o,
                                      COMPAS_LAYOUT_PADDED, &ub));
  int64_t blo[3], bhi[3], cells = 1, all = 0;
  EXPECT_OK(compas_array_bounds(ub, blo, bhi));
  for (int d = 0; d < 3; ++d) cells *= bhi[d] - blo[d];
  EXPECT_OK(compas_allreduce(rt, &cells, &all, 1, COMPAS_INT64, COMPAS_SUM));
  EXPECT_TRUE(all == (hi[0] - 1) * 4 * 6 && (in_group || cells == 0));
  EXPECT_OK(compas_array_destroy(&ub));
  int gsum = 0, one = member;
  EXPECT_OK(compas_allreduce(rt, &one, &gsum, 1, COMPAS_INT32, COMPAS_SUM));
  EXPECT_TRUE(gsum == (np < 2 ? np : 2));

  /* Errors, the same on every process. */
  compas_array* bad = NULL;
  const int64_t short_hi[3] = {hi[0] + 2, 5, 7};
  EXPECT_CODE(compas_array_create_split(rt, NULL, COMPAS_DOUBLE, lo, short_hi, splits, counts, &o,
                                        COMPAS_LAYOUT_CONTIGUOUS, &bad),
              COMPAS_ERR_COLLECTIVE, "the last boundary is the domain's end");
  const int few_counts[3] = {np + 1, 1, 2};
  EXPECT_CODE(compas_array_create_split(rt, NULL, COMPAS_DOUBLE, lo, hi, splits, few_counts, &o,
                                        COMPAS_LAYOUT_CONTIGUOUS, &bad),
              COMPAS_ERR_ARG, "counts[1] = 1");
  EXPECT_CODE(compas_array_create_like(u, 0, NULL, &bad), COMPAS_ERR_ARG, "factor 0");
  EXPECT_CODE(compas_array_create_like(u, 4, NULL, &bad), COMPAS_ERR_ARG, "boundary");
  EXPECT_CODE(compas_array_create_like(u, 3, few, &bad), COMPAS_ERR_ARG, "not a multiple of it");
  EXPECT_TRUE(bad == NULL);
  compas_array* flat = NULL;
  EXPECT_OK(compas_array_create(rt, COMPAS_DOUBLE, 2, lo, hi, NULL, &flat));
  EXPECT_CODE(compas_array_create_like(flat, 2, NULL, &bad), COMPAS_ERR_ARG, "3-D");
  compas_array* ints = NULL;
  EXPECT_OK(compas_array_create_split(rt, NULL, COMPAS_INT32, lo, hi, splits, counts, &o,
                                      COMPAS_LAYOUT_PADDED, &ints));
  EXPECT_CODE(compas_array_redistribute(u, ints), COMPAS_ERR_ARG, "one element type");
  EXPECT_CODE(compas_array_redistribute(u, uc), COMPAS_ERR_COLLECTIVE, "one domain");
  EXPECT_CODE(compas_group_destroy(&few), COMPAS_ERR_STATE, "1 array(s) lie on the group");

  /* A swap takes the group along: uc's handle now holds the array on the group. */
  EXPECT_OK(compas_array_swap(uc, ug));
  EXPECT_OK(compas_array_destroy(&ug));
  EXPECT_CODE(compas_group_destroy(&few), COMPAS_ERR_STATE, "1 array(s) lie on the group");
  EXPECT_OK(compas_array_destroy(&uc));
  EXPECT_OK(compas_group_destroy(&few));
  EXPECT_OK(compas_array_destroy(&ints));
  EXPECT_OK(compas_array_destroy(&flat));
  EXPECT_OK(compas_array_destroy(&u));
  free(splits);
  EXPECT_OK(compas_finalize(&rt));
  return verdict();
}
