/* The short form of the C API under compas-run (any number of processes): compas_start,
 * compas_rank / compas_size, arrays known by their data's address (compas_alloc, compas_bounds,
 * compas_exchange_halos after the program swapped its pointers, compas_array_of after
 * compas_array_swap, compas_free), and the error modes: with COMPAS_ERRORS_RETURN (set after
 * compas_start) a mistake returns its code and message; the job then ends normally. fatal.sh
 * tests compas_start's own mode. */
#include <stdint.h>

#include "check.h"

/* u[i] = sign * global index over its owned part; after an exchange, each halo point whose
 * neighbour exists must hold sign * its global index. Returns the wrong halo points. */
static int halo_errors(double* u, double sign, int64_t n) {
  int64_t lo, hi;
  EXPECT_OK(compas_bounds(u, &lo, &hi));
  for (int64_t i = lo; i < hi; ++i) u[1 + i - lo] = sign * (double)i;
  EXPECT_OK(compas_exchange_halos(u));
  int wrong = 0;
  if (lo > 0) wrong += u[0] != sign * (double)(lo - 1);
  if (hi < n) wrong += u[1 + hi - lo] != sign * (double)hi;
  return wrong;
}

static void arrays_by_address(compas_runtime* rt) {
  const int64_t n = 1000;
  double* u = compas_alloc(rt, COMPAS_DOUBLE, 1, &(int64_t){0}, &(int64_t){n}, NULL);
  double* v = compas_alloc(rt, COMPAS_DOUBLE, 1, &(int64_t){0}, &(int64_t){n}, NULL);
  EXPECT_TRUE(u != NULL && v != NULL && u != v);
  EXPECT_TRUE(halo_errors(u, 1.0, n) == 0);
  double* t = u; /* the program's own swap: the calls follow the pointers */
  u = v;
  v = t;
  EXPECT_TRUE(halo_errors(u, -1.0, n) == 0);
  int64_t lo, hi;
  EXPECT_OK(compas_bounds(v, &lo, &hi));
  EXPECT_TRUE(v[1] == (double)lo); /* the first array kept its values: +i */
  compas_array* a = compas_array_of(u);
  compas_array* b = compas_array_of(v);
  EXPECT_TRUE(a != NULL && b != NULL && a != b);
  EXPECT_OK(compas_array_swap(a, b)); /* the addresses trade: u's block is now b's */
  EXPECT_TRUE(compas_array_of(u) == b && compas_array_of(v) == a);
  EXPECT_OK(compas_free(u));
  EXPECT_CODE(compas_bounds(u, &(int64_t){0}, &(int64_t){0}), COMPAS_ERR_HANDLE,
              "compas_bounds: data is not the local block of a live array");
  EXPECT_OK(compas_free(v));
}

static void grid_by_address(compas_runtime* rt) {
  const int64_t lo[2] = {0, 0}, hi[2] = {40, 30};
  compas_array_options o;
  EXPECT_OK(compas_array_options_init(&o));
  o.decomposition = COMPAS_DECOMP_GRID;
  int32_t* w = compas_alloc(rt, COMPAS_INT32, 2, lo, hi, &o);
  int64_t own_lo[2], own_hi[2], hlo[2], hhi[2], strides[2];
  EXPECT_OK(compas_bounds(w, own_lo, own_hi));
  EXPECT_OK(compas_array_halo_bounds(compas_array_of(w), hlo, hhi));
  int32_t* data = NULL;
  EXPECT_OK(compas_array_data(compas_array_of(w), &data, strides));
  EXPECT_TRUE(data == w);
  for (int64_t i = own_lo[0]; i < own_hi[0]; ++i)
    for (int64_t j = own_lo[1]; j < own_hi[1]; ++j)
      w[(i - hlo[0]) * strides[0] + (j - hlo[1])] = (int32_t)(1000 * i + j);
  EXPECT_OK(compas_exchange_halos(w));
  int wrong = 0;
  for (int64_t i = hlo[0]; i < hhi[0]; ++i)
    for (int64_t j = hlo[1]; j < hhi[1]; ++j)
      if (i >= 0 && i < hi[0] && j >= 0 && j < hi[1])
        wrong += w[(i - hlo[0]) * strides[0] + (j - hlo[1])] != (int32_t)(1000 * i + j);
  EXPECT_TRUE(wrong == 0);
  EXPECT_CODE(compas_exchange_halos(w + 1), COMPAS_ERR_HANDLE, "not an element inside it");
  EXPECT_OK(compas_free(w));
}

static void mistakes_return(compas_runtime* rt) {
  int local = 0;
  EXPECT_CODE(compas_set_errors(rt, 5), COMPAS_ERR_ARG, "mode 5");
  EXPECT_TRUE(compas_rank(NULL) == -1);
  EXPECT_CODE(compas_set_errors(rt, COMPAS_ERRORS_FATAL), COMPAS_OK, NULL);
  EXPECT_OK(compas_set_errors(rt, COMPAS_ERRORS_RETURN));
  EXPECT_TRUE(compas_size(NULL) == -1);
  EXPECT_TRUE(compas_array_of(&local) == NULL);
  EXPECT_CODE(compas_exchange_halos(NULL), COMPAS_ERR_HANDLE,
              "compas_exchange_halos: data is NULL");
  EXPECT_CODE(compas_free(&local), COMPAS_ERR_HANDLE, "compas_free");
  compas_array_options o;
  EXPECT_OK(compas_array_options_init(&o));
  o.halo[0] = -1;
  EXPECT_TRUE(compas_alloc(rt, COMPAS_DOUBLE, 1, &(int64_t){0}, &(int64_t){8}, &o) == NULL);
  EXPECT_TRUE(strstr(compas_last_error(), "compas_alloc: ") && strstr(compas_last_error(), "-1"));
  EXPECT_TRUE(compas_array_of(NULL) == NULL);
  EXPECT_TRUE(strstr(compas_last_error(), "compas_array_of: data is NULL") != NULL);
}

int main(int argc, char** argv) {
  compas_runtime* rt = compas_start(&argc, &argv);
  EXPECT_OK(compas_set_errors(rt, COMPAS_ERRORS_RETURN)); /* the mistakes below return */
  me = compas_rank(rt);
  EXPECT_TRUE(me >= 0 && compas_size(rt) >= 1 && me < compas_size(rt));
  arrays_by_address(rt);
  grid_by_address(rt);
  mistakes_return(rt);
  EXPECT_OK(compas_finalize(&rt));
  return verdict();
}
