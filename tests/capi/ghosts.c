/* Ghosted vectors from C (compas_ghosts_*), under compas-run (any number of processes): process
 * r owns 4 + 2 r entries; its ghosts are every other process's first and last entry and its own
 * first (int64 list), then a CSR-like column list (int32: each owned row's neighbours i - 1, i,
 * i + 1) renumbered in place. After compas_ghosts_update every ghost holds its owner's entry
 * (entry i = 3 i + 1); after compas_ghosts_accumulate every owner's entry is its value plus each
 * process's ghosts of it. Errors, the same code on every process: an index outside the vector,
 * a vector of another length, an index type that is none. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

static int64_t count_of(int r) {
  return 4 + 2 * r;
}
static int64_t first_of(int r) {
  int64_t f = 0;
  for (int k = 0; k < r; ++k) f += count_of(k);
  return f;
}

static void ghost_list(compas_runtime* rt, int np) {
  int64_t ghosts[64];
  int64_t n = 0;
  for (int r = 0; r < np; ++r) {
    if (r == me) continue;
    ghosts[n++] = first_of(r);
    ghosts[n++] = first_of(r) + count_of(r) - 1;
  }
  ghosts[n++] = first_of(me); /* an own index */
  compas_ghosts* plan = NULL;
  EXPECT_OK(compas_ghosts_create(rt, count_of(me), ghosts, n, COMPAS_INT64, &plan));
  int64_t first = -1, owned = -1, ng = -1;
  EXPECT_OK(compas_ghosts_sizes(plan, &first, &owned, &ng));
  EXPECT_TRUE(first == first_of(me) && owned == count_of(me) && ng == n);
  double v[128];
  for (int64_t k = 0; k < owned; ++k) v[k] = 3.0 * (double)(first + k) + 1.0;
  for (int64_t k = 0; k < ng; ++k) v[owned + k] = -1.0;
  EXPECT_OK(compas_ghosts_update(plan, v, owned + ng, COMPAS_DOUBLE));
  for (int64_t k = 0; k < ng; ++k) EXPECT_TRUE(v[owned + k] == 3.0 * (double)ghosts[k] + 1.0);
  /* The reverse, in int64: each process adds 1 per ghost into the owners. */
  int64_t w[128];
  for (int64_t k = 0; k < owned + ng; ++k) w[k] = k < owned ? 0 : 1;
  EXPECT_OK(compas_ghosts_accumulate(plan, w, owned + ng, COMPAS_INT64));
  for (int64_t k = 0; k < owned; ++k) {
    /* Every other process has this process's first and last entry; this one its first. */
    const int64_t want = (k == 0 || k == owned - 1 ? np - 1 : 0) + (k == 0 ? 1 : 0);
    EXPECT_TRUE(w[k] == want);
  }
  EXPECT_CODE(compas_ghosts_update(plan, v, owned + ng + (me == np - 1), COMPAS_DOUBLE),
              COMPAS_ERR_COLLECTIVE, "elements");
  EXPECT_OK(compas_ghosts_destroy(&plan));
  EXPECT_TRUE(plan == NULL);
}

static void columns(compas_runtime* rt) {
  const int64_t first = first_of(me), owned = count_of(me);
  int64_t total = 0;
  int np = 0;
  compas_processes(rt, &np);
  total = first_of(np);
  int32_t cols[64], global[64];
  int64_t n = 0;
  for (int64_t i = first; i < first + owned; ++i)
    for (int64_t j = i - 1; j <= i + 1; ++j)
      if (j >= 0 && j < total) global[n] = cols[n] = (int32_t)j, ++n;
  compas_ghosts* plan = NULL;
  EXPECT_OK(compas_ghosts_create_columns(rt, owned, cols, n, COMPAS_INT32, &plan));
  int64_t ng = -1;
  EXPECT_OK(compas_ghosts_sizes(plan, NULL, NULL, &ng));
  EXPECT_TRUE(ng == (me > 0) + (me < np - 1));
  double v[64];
  for (int64_t k = 0; k < owned; ++k) v[k] = 3.0 * (double)(first + k) + 1.0;
  EXPECT_OK(compas_ghosts_update(plan, v, owned + ng, COMPAS_DOUBLE));
  for (int64_t e = 0; e < n; ++e) EXPECT_TRUE(v[cols[e]] == 3.0 * global[e] + 1.0);
  EXPECT_OK(compas_ghosts_destroy(&plan));
}

static void errors(compas_runtime* rt, int np) {
  compas_ghosts* plan = NULL;
  int64_t bad[1] = {me == np - 1 ? first_of(np) + 5 : 0};
  EXPECT_CODE(compas_ghosts_create(rt, count_of(me), bad, 1, COMPAS_INT64, &plan), COMPAS_ERR_ARG,
              "is outside the partition's domain");
  EXPECT_TRUE(plan == NULL);
  EXPECT_CODE(
      compas_ghosts_create(rt, count_of(me), bad, 0, me == 0 ? COMPAS_DOUBLE : COMPAS_INT64, &plan),
      COMPAS_ERR_COLLECTIVE, "index_type 1 is not allowed");
  EXPECT_CODE(compas_ghosts_create(rt, me == np - 1 ? 0 : 3, bad, 0, COMPAS_INT64, &plan),
              COMPAS_ERR_COLLECTIVE, "holds 0 indices");
}

int main(int argc, char** argv) {
  int np = 0;
  compas_runtime* rt = start(&argc, &argv, &np);
  ghost_list(rt, np);
  columns(rt);
  errors(rt, np);
  EXPECT_OK(compas_finalize(&rt));
  return verdict();
}
