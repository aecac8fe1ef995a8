/* The C API's calls against what they must give, under compas-run (any number of processes):
 * arrays of every type in 1, 2 and 3 dimensions hold their global index after a halo exchange
 * (blocking and begin/wait), swap trades contents, the collectives and a group give the known
 * sums, scans and broadcasts, a channel passes a ring of messages. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

static int np = 1;

/* The value of global cell (i, j, k) of an array spanning [0, n) per dimension. */
static int64_t cell(int64_t i, int64_t j, int64_t k) {
  return (i * 1000 + j) * 1000 + k + 1;
}

/* An int64 or double array of `dims` dimensions, n per side, periodic: fills its owned cells with
 * cell(), exchanges, and checks every halo cell against the periodic image of its index. */
static void array_round_trip(compas_runtime* rt, int type, int dims, int begin) {
  const int64_t n = 6, lo[3] = {0, 0, 0}, hi[3] = {n, n, n};
  compas_array_options o;
  compas_array* a = NULL;
  EXPECT_OK(compas_array_options_init(&o));
  o.periodic[0] = o.periodic[1] = o.periodic[2] = 1;
  if (dims == 2) o.decomposition = COMPAS_DECOMP_GRID;
  EXPECT_OK(compas_array_create(rt, type, dims, lo, hi, &o, &a));
  int64_t olo[3] = {0, 0, 0}, ohi[3] = {1, 1, 1}, hlo[3] = {0, 0, 0}, hhi[3] = {1, 1, 1};
  int64_t st[3] = {0, 0, 0};
  void* data = NULL;
  int t = 0, d = 0;
  EXPECT_OK(compas_array_type(a, &t, &d));
  EXPECT_TRUE(t == type && d == dims);
  EXPECT_OK(compas_array_bounds(a, olo, ohi));
  EXPECT_OK(compas_array_halo_bounds(a, hlo, hhi));
  EXPECT_OK(compas_array_data(a, &data, st));
  EXPECT_TRUE(st[dims - 1] == 1 && hlo[0] == olo[0] - 1 && hhi[0] == ohi[0] + 1);
  for (int e = dims; e < 3; ++e) st[e] = 0;
  for (int64_t i = olo[0]; i < ohi[0]; ++i)
    for (int64_t j = olo[1]; j < ohi[1]; ++j)
      for (int64_t k = olo[2]; k < ohi[2]; ++k) {
        const int64_t at = (i - hlo[0]) * st[0] + (j - hlo[1]) * st[1] + (k - hlo[2]) * st[2];
        if (type == COMPAS_INT64)
          ((int64_t*)data)[at] = cell(i, j, k);
        else
          ((double*)data)[at] = (double)cell(i, j, k);
      }
  if (begin) {
    compas_exchange* x = NULL;
    EXPECT_OK(compas_array_begin_exchange(a, &x));
    EXPECT_CODE(compas_array_exchange(a), COMPAS_ERR_STATE, "pending");
    EXPECT_OK(compas_exchange_wait(&x));
    EXPECT_TRUE(x == NULL);
  } else {
    EXPECT_OK(compas_array_exchange(a));
  }
  int64_t wrong = 0;
  for (int64_t i = hlo[0]; i < hhi[0]; ++i)
    for (int64_t j = hlo[1]; j < hhi[1]; ++j)
      for (int64_t k = hlo[2]; k < hhi[2]; ++k) {
        const int64_t at = (i - hlo[0]) * st[0] + (j - hlo[1]) * st[1] + (k - hlo[2]) * st[2];
        const int64_t want = cell(dims > 0 ? (i + n) % n : 0, dims > 1 ? (j + n) % n : 0,
                                  dims > 2 ? (k + n) % n : 0);
        const int64_t got =
            type == COMPAS_INT64 ? ((int64_t*)data)[at] : (int64_t)((double*)data)[at];
        wrong += got != want;
      }
  if (wrong)
    printf("[%d] FAIL: %d-D type %d: %lld halo cells wrong\n", me, dims, type, (long long)wrong);
  failures += wrong != 0;
  EXPECT_OK(compas_array_destroy(&a));
}

static void swap_trades_contents(compas_runtime* rt) {
  const int64_t lo = 0, hi = 10;
  compas_array *a = NULL, *b = NULL, *c = NULL;
  int32_t *pa = NULL, *pb = NULL, *qa = NULL;
  EXPECT_OK(compas_array_create(rt, COMPAS_INT32, 1, &lo, &hi, NULL, &a));
  EXPECT_OK(compas_array_create(rt, COMPAS_INT32, 1, &lo, &hi, NULL, &b));
  EXPECT_OK(compas_array_create(rt, COMPAS_FLOAT, 1, &lo, &hi, NULL, &c));
  EXPECT_OK(compas_array_data(a, &pa, NULL));
  EXPECT_OK(compas_array_data(b, &pb, NULL));
  pa[1] = 7;
  pb[1] = 9;
  EXPECT_OK(compas_array_swap(a, b));
  EXPECT_OK(compas_array_data(a, &qa, NULL));
  EXPECT_TRUE(qa == pb && qa[1] == 9);
  EXPECT_CODE(compas_array_swap(a, c), COMPAS_ERR_ARG, "the same are needed");
  /* c and b are left for compas_finalize */
  EXPECT_OK(compas_array_destroy(&a));
}

static void collectives(compas_runtime* rt) {
  int64_t v[2] = {me, 1}, sum[2] = {0, 0}, scan[2] = {-1, -1};
  EXPECT_OK(compas_allreduce(rt, v, sum, 2, COMPAS_INT64, COMPAS_SUM));
  EXPECT_TRUE(sum[0] == (int64_t)np * (np - 1) / 2 && sum[1] == np);
  EXPECT_OK(compas_exscan(rt, v, scan, 2, COMPAS_INT64, COMPAS_SUM));
  EXPECT_TRUE(scan[0] == (int64_t)me * (me - 1) / 2 && scan[1] == me);
  float f = (float)me + 1.5f, fmin = 0, fmax = 0;
  EXPECT_OK(compas_allreduce(rt, &f, &fmin, 1, COMPAS_FLOAT, COMPAS_MIN));
  EXPECT_OK(compas_allreduce(rt, &f, &fmax, 1, COMPAS_FLOAT, COMPAS_MAX));
  EXPECT_TRUE(fmin == 1.5f && fmax == (float)np + 0.5f);
  int32_t p = 2, prod = 0, b[3] = {me, me, me};
  EXPECT_OK(compas_allreduce(rt, &p, &prod, 1, COMPAS_INT32, COMPAS_PROD));
  EXPECT_TRUE(prod == (1 << np));
  EXPECT_OK(compas_broadcast(rt, b, 3, COMPAS_INT32, np - 1));
  EXPECT_TRUE(b[0] == np - 1 && b[2] == np - 1);
  double m = 0;
  EXPECT_OK(compas_exscan(rt, &f, &m, 0, COMPAS_FLOAT, COMPAS_MAX)); /* count 0: nothing */
  EXPECT_CODE(compas_broadcast(rt, b, 3, COMPAS_INT32, np), COMPAS_ERR_COLLECTIVE, "root");
  EXPECT_OK(compas_barrier(rt));
}

static void groups(compas_runtime* rt) {
  compas_group *g = NULL, *none = NULL;
  int gr = -2, gs = -2, x = me, s = 0, before = -1;
  EXPECT_OK(compas_group_split(rt, me % 2, -me, &g)); /* reversed by key */
  EXPECT_OK(compas_group_rank(g, &gr));
  EXPECT_OK(compas_group_size(g, &gs));
  EXPECT_TRUE(gs == (np + 1 - me % 2) / 2);
  EXPECT_TRUE(gr == gs - 1 - me / 2);
  EXPECT_OK(compas_group_allreduce(g, &x, &s, 1, COMPAS_INT32, COMPAS_SUM));
  int want = 0;
  for (int r = me % 2; r < np; r += 2) want += r;
  EXPECT_TRUE(s == want);
  EXPECT_OK(compas_group_exscan(g, &x, &before, 1, COMPAS_INT32, COMPAS_MAX));
  EXPECT_TRUE(gr == 0 ? before == INT32_MIN : before > me);
  int root_value = me;
  EXPECT_OK(compas_group_broadcast(g, &root_value, 1, COMPAS_INT32, 0));
  EXPECT_TRUE(root_value % 2 == me % 2 && root_value >= me);
  EXPECT_OK(compas_group_barrier(g));
  EXPECT_OK(compas_group_split(rt, me == 0 ? -1 : 0, 0, &none));
  if (me == 0) {
    EXPECT_OK(compas_group_size(none, &gs));
    EXPECT_TRUE(gs == 0);
    EXPECT_CODE(compas_group_barrier(none), COMPAS_ERR_STATE, "");
  }
  EXPECT_OK(compas_group_destroy(&none));
  /* g is left for compas_finalize */
}

static void channel_ring(compas_runtime* rt) {
  compas_channel* ch = NULL;
  double out[3] = {me, me + 0.5, me + 0.25}, in[3] = {0, 0, 0};
  int64_t got = -1;
  EXPECT_OK(compas_channel_create(rt, COMPAS_DOUBLE, 4, 3, &ch));
  EXPECT_CODE(compas_channel_send(ch, 0, out, 4), COMPAS_ERR_ARG, "4");
  EXPECT_OK(compas_channel_send(ch, (me + 1) % np, out, 3));
  EXPECT_OK(compas_channel_recv(ch, (me + np - 1) % np, in, 3, &got));
  EXPECT_TRUE(got == 3 && in[0] == (me + np - 1) % np && in[2] == in[0] + 0.25);
  EXPECT_OK(compas_channel_destroy(&ch));
}

int main(int argc, char** argv) {
  compas_runtime* rt = start(&argc, &argv, &np);
  int threads = 0;
  /* compas's flags (the test passes --threads=1 --bind compact) are gone; the program's stay */
  EXPECT_TRUE(argc == 2 && strcmp(argv[1], "--mine") == 0);
  EXPECT_OK(compas_threads(rt, &threads));
  EXPECT_TRUE(threads >= 1 && np >= 1 && me < np);
  for (int dims = 1; dims <= 3; ++dims) {
    array_round_trip(rt, COMPAS_INT64, dims, 0);
    array_round_trip(rt, COMPAS_DOUBLE, dims, 1);
  }
  swap_trades_contents(rt);
  collectives(rt);
  groups(rt);
  channel_ring(rt);
  EXPECT_OK(compas_finalize(&rt)); /* destroys what is left, newest first */
  EXPECT_TRUE(rt == NULL);
  return verdict();
}
