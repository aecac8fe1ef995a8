/* Misuse of the C API under compas-run (any number of processes): every mistake returns its
 * documented code with a message naming the value, on every process alike where the mistake is
 * collective, and the runtime stays usable; the program then finalizes and exits 0. */
#include <stdint.h>

#include "check.h"

static void bad_arguments(compas_runtime* rt) {
  compas_array* a = NULL;
  const int64_t lo = 0, hi = 64;
  EXPECT_CODE(compas_process(rt, NULL), COMPAS_ERR_ARG, "NULL");
  EXPECT_CODE(compas_array_create(rt, COMPAS_DOUBLE, 1, NULL, &hi, NULL, &a), COMPAS_ERR_ARG,
              "lo is NULL");
  EXPECT_CODE(compas_array_create(rt, 99, 1, &lo, &hi, NULL, &a), COMPAS_ERR_ARG, "type 99");
  EXPECT_CODE(compas_array_create(rt, COMPAS_DOUBLE, 4, &lo, &hi, NULL, &a), COMPAS_ERR_ARG,
              "dims 4");
  EXPECT_TRUE(a == NULL);
  double x = 1;
  EXPECT_CODE(compas_allreduce(rt, &x, &x, 1, 77, COMPAS_SUM), COMPAS_ERR_ARG, "type 77");
  EXPECT_CODE(compas_allreduce(rt, &x, &x, 1, COMPAS_DOUBLE, 42), COMPAS_ERR_ARG, "op 42");
  EXPECT_CODE(compas_allreduce(rt, NULL, &x, 1, COMPAS_DOUBLE, COMPAS_SUM), COMPAS_ERR_ARG,
              "in is NULL");
  EXPECT_CODE(compas_allreduce(rt, &x, &x, -1, COMPAS_DOUBLE, COMPAS_SUM), COMPAS_ERR_ARG,
              "count -1");
  EXPECT_CODE(compas_abort(rt, 0, "no"), COMPAS_ERR_ARG, "code 0");
  EXPECT_CODE(compas_init(NULL, NULL, NULL), COMPAS_ERR_ARG, "rt is NULL");
}

static void bad_halos(compas_runtime* rt, int np) {
  compas_array* a = NULL;
  compas_array_options o;
  EXPECT_OK(compas_array_options_init(&o));
  o.halo[0] = -1;
  const int64_t lo = 0, hi = 64, small = 4 * np;
  EXPECT_CODE(compas_array_create(rt, COMPAS_DOUBLE, 1, &lo, &hi, &o, &a), COMPAS_ERR_ARG,
              "halo {-1}");
  o.halo[0] = 1;
  o.halo[1] = 2;
  const int64_t lo2[2] = {0, 0}, hi2[2] = {16, 16};
  EXPECT_CODE(compas_array_create(rt, COMPAS_FLOAT, 2, lo2, hi2, &o, &a), COMPAS_ERR_ARG,
              "halo {1, 2}");
  if (np > 1) { /* a part of 4 cells cannot feed a halo of 5 */
    o.halo[0] = 5;
    EXPECT_CODE(compas_array_create(rt, COMPAS_DOUBLE, 1, &lo, &small, &o, &a),
                COMPAS_ERR_COLLECTIVE, "halo");
  }
  EXPECT_TRUE(a == NULL);
}

static void bad_handles(compas_runtime* rt) {
  compas_array* a = NULL;
  compas_group* g = NULL;
  const int64_t lo = 0, hi = 64;
  int local = 0;
  EXPECT_CODE(compas_array_exchange(NULL), COMPAS_ERR_HANDLE, "NULL");
  EXPECT_CODE(compas_array_exchange((compas_array*)&local), COMPAS_ERR_HANDLE, "not a live");
  EXPECT_OK(compas_group_split(rt, 0, 0, &g));
  EXPECT_CODE(compas_array_exchange((compas_array*)g), COMPAS_ERR_HANDLE,
              "is a compas_group, not a compas_array");
  EXPECT_OK(compas_group_destroy(&g));
  EXPECT_TRUE(g == NULL);
  EXPECT_OK(compas_array_create(rt, COMPAS_INT64, 1, &lo, &hi, NULL, &a));
  compas_array* stale = a;
  EXPECT_OK(compas_array_destroy(&a));
  EXPECT_CODE(compas_array_exchange(stale), COMPAS_ERR_HANDLE, "not a live compas_array");
  EXPECT_CODE(compas_array_destroy(&stale), COMPAS_ERR_HANDLE, "not a live");
  EXPECT_CODE(compas_array_destroy(&a), COMPAS_ERR_HANDLE, "NULL");
}

static void shapes_differ(compas_runtime* rt) {
  compas_array* a = NULL;
  const int64_t lo = 0, hi = 100 + me; /* every process a different length */
  EXPECT_CODE(compas_array_create(rt, COMPAS_DOUBLE, 1, &lo, &hi, NULL, &a), COMPAS_ERR_COLLECTIVE,
              "rank 1 a 1-D [0, 101)");
  EXPECT_TRUE(strstr(compas_last_error(), "rank 0 a 1-D [0, 100)") != NULL);
  EXPECT_TRUE(a == NULL);
  double x = me, y = 0;
  EXPECT_CODE(compas_allreduce(rt, &x, &y, 1 + me, COMPAS_DOUBLE, COMPAS_SUM),
              COMPAS_ERR_COLLECTIVE, "process 1");
}

int main(int argc, char** argv) {
  int np = 0;
  compas_runtime* rt = start(&argc, &argv, &np);
  bad_arguments(rt);
  bad_halos(rt, np);
  bad_handles(rt);
  if (np > 1) shapes_differ(rt);
  double x = 1; /* still usable */
  EXPECT_OK(compas_allreduce(rt, &x, &x, 1, COMPAS_DOUBLE, COMPAS_SUM));
  EXPECT_TRUE(x == np);
  compas_runtime* stale = rt;
  EXPECT_OK(compas_finalize(&rt));
  EXPECT_CODE(compas_barrier(stale), COMPAS_ERR_HANDLE, "not a live compas_runtime");
  return verdict();
}
