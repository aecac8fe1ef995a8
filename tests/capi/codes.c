/* The error codes keep compas.h's contract, under compas-run (2 or more processes; alone there is
 * nothing to disagree on and the program checks the calls succeed): errors of a collective's
 * arguments that every process sees alike are COMPAS_ERR_COLLECTIVE on every process at once,
 * 3-D arrays as 1-D and 2-D ones (a halo wider than a part, a dimension with fewer cells than
 * processes); collectives whose processes pass another element type of the same size (int32 and
 * float) or another operator, in the job and in a group; channels made differently (double and
 * int64 included). After each,
 * the job's collectives still work. */
#include <stdint.h>

#include "check.h"

static void arrays(compas_runtime* rt, int np) {
  const int64_t lo[3] = {0, 0, 0}, hi[3] = {2, 2, 2};
  compas_array_options o;
  compas_array_options_init(&o);
  o.halo[0] = o.halo[1] = o.halo[2] = 3;
  o.periodic[0] = o.periodic[1] = o.periodic[2] = 1;
  compas_array* a = NULL;
  for (int dims = 1; dims <= 3; ++dims) /* 2 cells per dimension, halo 3, periodic */
    EXPECT_CODE(compas_array_create(rt, COMPAS_DOUBLE, dims, lo, hi, &o, &a), COMPAS_ERR_COLLECTIVE,
                np < 2 ? "wider than the smallest part" : "DistArray");
  if (np < 2) return;
  const int64_t few[3] = {np - 1, 8, 8};
  compas_array_options_init(&o);
  o.grid[0] = np, o.grid[1] = o.grid[2] = 1;
  EXPECT_CODE(compas_array_create(rt, COMPAS_DOUBLE, 3, lo, few, &o, &a), COMPAS_ERR_COLLECTIVE,
              "leave some process without any");
  const int64_t few1[1] = {np - 1};
  EXPECT_CODE(compas_array_create(rt, COMPAS_DOUBLE, 1, lo, few1, NULL, &a), COMPAS_ERR_COLLECTIVE,
              "leave some process without any");
}

/* The last process passes float (or max) where the others pass int32 (or sum). */
static void types_and_operators(compas_runtime* rt, compas_group* g, int np) {
  const int last = me == np - 1 && np > 1;
  const int type = last ? COMPAS_FLOAT : COMPAS_INT32, op = last ? COMPAS_MAX : COMPAS_SUM;
  const int want = np > 1 ? COMPAS_ERR_COLLECTIVE : COMPAS_OK;
  int32_t x[2] = {1, 2};
  EXPECT_CODE(compas_allreduce(rt, x, x, 2, type, COMPAS_SUM), want, "type");
  EXPECT_CODE(compas_allreduce(rt, x, x, 2, COMPAS_INT32, op), want, "operator");
  EXPECT_CODE(compas_exscan(rt, x, x, 2, type, COMPAS_SUM), want, "type");
  EXPECT_CODE(compas_exscan(rt, x, x, 2, COMPAS_INT32, op), want, "operator");
  EXPECT_CODE(compas_broadcast(rt, x, 2, type, 0), want, "type");
  EXPECT_CODE(compas_group_allreduce(g, x, x, 2, type, COMPAS_SUM), want, "type");
  EXPECT_CODE(compas_group_exscan(g, x, x, 2, COMPAS_INT32, op), want, "operator");
  EXPECT_CODE(compas_group_broadcast(g, x, 2, type, 0), want, "type");
}

static void channels(compas_runtime* rt, int np) {
  const int last = me == np - 1 && np > 1;
  compas_channel* c = NULL;
  const int want = np > 1 ? COMPAS_ERR_COLLECTIVE : COMPAS_OK;
  EXPECT_CODE(compas_channel_create(rt, COMPAS_DOUBLE, last ? 5 : 4, 8, &c), want, "capacity");
  if (c) EXPECT_OK(compas_channel_destroy(&c));
  EXPECT_CODE(compas_channel_create(rt, COMPAS_DOUBLE, 4, last ? 9 : 8, &c), want, "max_count");
  if (c) EXPECT_OK(compas_channel_destroy(&c));
  /* double and int64: the same size, another type */
  EXPECT_CODE(compas_channel_create(rt, last ? COMPAS_INT64 : COMPAS_DOUBLE, 4, 8, &c), want,
              "type");
  if (c) EXPECT_OK(compas_channel_destroy(&c));
}

int main(int argc, char** argv) {
  int np = 0;
  compas_runtime* rt = start(&argc, &argv, &np);
  compas_group* g = NULL;
  EXPECT_OK(compas_group_split(rt, 0, 0, &g));
  arrays(rt, np);
  types_and_operators(rt, g, np);
  channels(rt, np);
  double sum = 1;
  EXPECT_OK(compas_allreduce(rt, &sum, &sum, 1, COMPAS_DOUBLE, COMPAS_SUM));
  EXPECT_TRUE(sum == np);
  EXPECT_OK(compas_group_allreduce(g, &sum, &sum, 1, COMPAS_DOUBLE, COMPAS_SUM));
  EXPECT_TRUE(sum == (double)np * np);
  EXPECT_OK(compas_group_destroy(&g));
  EXPECT_OK(compas_finalize(&rt));
  return verdict();
}
