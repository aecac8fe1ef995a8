/* The collectives of the C API agree before data moves, under compas-run (2 or more processes;
 * with one there is nothing to disagree on and the program checks the calls alone): when the
 * processes pass different counts (0 on one of them included), or make different calls, every
 * process gets COMPAS_ERR_COLLECTIVE at once (not a process returning while the others wait
 * for COMPAS_TIMEOUT), and every caller's buffer, in place or not, keeps its values. The job's and
 * a group's allreduce, broadcast and exscan; then an exscan of 0 elements everywhere succeeds and
 * the job's collectives still give the right values. */
#include <stdint.h>

#include "check.h"

#define N 3

static double in[N], out[N];

static void reset(void) {
  for (int i = 0; i < N; ++i) {
    in[i] = 10.0 * me + i + 1; /* nothing an operator's identity could give */
    out[i] = -100.0 - i;
  }
}

static int intact(void) {
  for (int i = 0; i < N; ++i)
    if (in[i] != 10.0 * me + i + 1 || out[i] != -100.0 - i) return 0;
  return 1;
}

/* Each call with this process's count n, in place and into out; the counts differ. */
static void counts_differ(compas_runtime* rt, compas_group* g, int64_t n) {
  const int want = COMPAS_ERR_COLLECTIVE;
  reset();
  EXPECT_CODE(compas_exscan(rt, in, in, n, COMPAS_DOUBLE, COMPAS_SUM), want, "elements");
  EXPECT_TRUE(intact());
  EXPECT_CODE(compas_exscan(rt, in, out, n, COMPAS_DOUBLE, COMPAS_MIN), want, "elements");
  EXPECT_TRUE(intact());
  EXPECT_CODE(compas_allreduce(rt, in, in, n, COMPAS_DOUBLE, COMPAS_SUM), want, "elements");
  EXPECT_CODE(compas_allreduce(rt, in, out, n, COMPAS_DOUBLE, COMPAS_MAX), want, "elements");
  EXPECT_TRUE(intact());
  EXPECT_CODE(compas_broadcast(rt, in, n, COMPAS_DOUBLE, 0), want, "elements");
  EXPECT_TRUE(intact());
  EXPECT_CODE(compas_group_exscan(g, in, in, n, COMPAS_DOUBLE, COMPAS_PROD), want, "elements");
  EXPECT_CODE(compas_group_allreduce(g, in, in, n, COMPAS_DOUBLE, COMPAS_SUM), want, "elements");
  EXPECT_CODE(compas_group_broadcast(g, in, n, COMPAS_DOUBLE, 0), want, "elements");
  EXPECT_TRUE(intact());
}

/* Process 0 calls one collective, the others another: every process is told. */
static void calls_differ(compas_runtime* rt) {
  reset();
  if (me == 0)
    EXPECT_CODE(compas_exscan(rt, in, in, N, COMPAS_DOUBLE, COMPAS_SUM), COMPAS_ERR_COLLECTIVE,
                "calls");
  else
    EXPECT_CODE(compas_allreduce(rt, in, out, N, COMPAS_DOUBLE, COMPAS_SUM), COMPAS_ERR_COLLECTIVE,
                "calls");
  EXPECT_TRUE(intact());
  reset();
  if (me == 0)
    EXPECT_CODE(compas_broadcast(rt, in, N, COMPAS_DOUBLE, 0), COMPAS_ERR_COLLECTIVE, "calls");
  else
    EXPECT_CODE(compas_exscan(rt, in, out, N, COMPAS_DOUBLE, COMPAS_MAX), COMPAS_ERR_COLLECTIVE,
                "calls");
  EXPECT_TRUE(intact());
}

/* After the failures: the calls give their values. */
static void still_right(compas_runtime* rt, int np) {
  reset();
  EXPECT_OK(compas_exscan(rt, in, out, 0, COMPAS_DOUBLE, COMPAS_SUM)); /* 0 everywhere */
  EXPECT_TRUE(intact());
  EXPECT_OK(compas_exscan(rt, in, in, N, COMPAS_DOUBLE, COMPAS_SUM));
  for (int i = 0; i < N; ++i) /* sum over r < me of 10 r + i + 1 */
    EXPECT_TRUE(in[i] == 5.0 * me * (me - 1) + (double)me * (i + 1));
  double x = me + 1;
  EXPECT_OK(compas_allreduce(rt, &x, &x, 1, COMPAS_DOUBLE, COMPAS_SUM));
  EXPECT_TRUE(x == np * (np + 1) / 2.0);
}

int main(int argc, char** argv) {
  int np = 0;
  compas_runtime* rt = start(&argc, &argv, &np);
  compas_group* g = NULL;
  EXPECT_OK(compas_group_split(rt, 0, 0, &g));
  if (np > 1) {
    counts_differ(rt, g, 1 + me);
    counts_differ(rt, g, me == 0 ? 0 : 1); /* a count of 0 still takes part */
    counts_differ(rt, g, me == np - 1 ? 0 : N);
    calls_differ(rt);
  }
  EXPECT_OK(compas_group_destroy(&g));
  still_right(rt, np);
  EXPECT_OK(compas_finalize(&rt));
  return verdict();
}
