/* Collective calls from a thread other than the one that called compas_init, under compas-run
 * (any number of processes): each is refused with COMPAS_ERR_STATE before it does anything (the
 * destroys and compas_finalize too, which must not skip their collective part), the handles stay
 * alive, and the thread that called compas_init then makes the same calls with success. */
#include <pthread.h>
#include <stdint.h>

#include "check.h"

static compas_runtime* rt;
static compas_array *a, *b;
static compas_group* g;
static compas_channel* ch;
static void* mem;

static void* elsewhere(void* unused) {
  (void)unused;
  const int64_t lo = 0, hi = 64;
  compas_array* made = NULL;
  double x = 1;
  EXPECT_CODE(compas_barrier(rt), COMPAS_ERR_STATE, "thread");
  EXPECT_CODE(compas_allreduce(rt, &x, &x, 1, COMPAS_DOUBLE, COMPAS_SUM), COMPAS_ERR_STATE,
              "thread");
  EXPECT_CODE(compas_array_create(rt, COMPAS_DOUBLE, 1, &lo, &hi, NULL, &made), COMPAS_ERR_STATE,
              "thread");
  EXPECT_CODE(compas_array_exchange(a), COMPAS_ERR_STATE, "thread");
  EXPECT_CODE(compas_array_swap(a, b), COMPAS_ERR_STATE, "thread");
  EXPECT_CODE(compas_array_destroy(&a), COMPAS_ERR_STATE, "thread");
  EXPECT_CODE(compas_free(mem), COMPAS_ERR_STATE, "thread");
  EXPECT_CODE(compas_group_destroy(&g), COMPAS_ERR_STATE, "thread");
  EXPECT_CODE(compas_channel_destroy(&ch), COMPAS_ERR_STATE, "thread");
  EXPECT_CODE(compas_finalize(&rt), COMPAS_ERR_STATE, "thread");
  EXPECT_TRUE(made == NULL && a != NULL && g != NULL && ch != NULL && rt != NULL);
  return NULL;
}

int main(int argc, char** argv) {
  int np = 0;
  rt = start(&argc, &argv, &np);
  const int64_t lo = 0, hi = 64;
  EXPECT_OK(compas_array_create(rt, COMPAS_DOUBLE, 1, &lo, &hi, NULL, &a));
  EXPECT_OK(compas_array_create(rt, COMPAS_DOUBLE, 1, &lo, &hi, NULL, &b));
  EXPECT_OK(compas_group_split(rt, 0, 0, &g));
  EXPECT_OK(compas_channel_create(rt, COMPAS_INT32, 2, 2, &ch));
  mem = compas_alloc(rt, COMPAS_INT64, 1, &lo, &hi, NULL);
  EXPECT_TRUE(mem != NULL);
  pthread_t t;
  EXPECT_TRUE(pthread_create(&t, NULL, elsewhere, NULL) == 0);
  EXPECT_TRUE(pthread_join(t, NULL) == 0);
  /* Everything is still alive, and collective from here. */
  EXPECT_OK(compas_array_exchange(a));
  EXPECT_OK(compas_array_swap(a, b));
  EXPECT_OK(compas_array_destroy(&a));
  EXPECT_OK(compas_free(mem));
  EXPECT_OK(compas_group_destroy(&g));
  EXPECT_OK(compas_channel_destroy(&ch));
  double x = 1;
  EXPECT_OK(compas_allreduce(rt, &x, &x, 1, COMPAS_DOUBLE, COMPAS_SUM));
  EXPECT_TRUE(x == np);
  EXPECT_OK(compas_finalize(&rt)); /* destroys b */
  EXPECT_TRUE(rt == NULL);
  return verdict();
}
