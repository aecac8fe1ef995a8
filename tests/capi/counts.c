/* Counts that no buffer can hold, under compas-run (any number of processes): every call of the C
 * API that takes a count of elements (the job's and a group's allreduce, broadcast and exscan, a
 * channel's send and receive) returns COMPAS_ERR_ARG with a message naming the count, before
 * anything moves: the buffers keep their values, and the job goes on with a collective that gives
 * the right sum. The counts: INT64_MAX and 2^61 (count * element size overflows 64 bits), 2^60
 * (2^63 bytes of doubles), 2^61 int32 values (2^63 bytes without an overflow) and 2^50 (8 PiB of
 * doubles: more than a host's memory). */
#include <stdint.h>

#include "check.h"

#define N 4

static const int64_t huge[] = {INT64_MAX, INT64_C(1) << 61, INT64_C(1) << 60, INT64_C(1) << 50};
static const int nhuge = (int)(sizeof huge / sizeof huge[0]);

/* Every element of buf still holds its start value. */
static int intact(const double* buf) {
  for (int i = 0; i < N; ++i)
    if (buf[i] != 10.0 + i) return 0;
  return 1;
}

static void reset(double* buf) {
  for (int i = 0; i < N; ++i) buf[i] = 10.0 + i;
}

/* The count's decimal text, as the message must hold it. */
static const char* text_of(int64_t count) {
  static char text[32];
  snprintf(text, sizeof text, "count %lld", (long long)count);
  return text;
}

static void job_collectives(compas_runtime* rt) {
  double buf[N], out[N];
  for (int h = 0; h < nhuge; ++h) {
    const int64_t n = huge[h];
    reset(buf);
    reset(out);
    EXPECT_CODE(compas_allreduce(rt, buf, buf, n, COMPAS_DOUBLE, COMPAS_SUM), COMPAS_ERR_ARG,
                text_of(n));
    EXPECT_CODE(compas_allreduce(rt, buf, out, n, COMPAS_DOUBLE, COMPAS_SUM), COMPAS_ERR_ARG,
                text_of(n));
    EXPECT_CODE(compas_broadcast(rt, buf, n, COMPAS_DOUBLE, 0), COMPAS_ERR_ARG, text_of(n));
    EXPECT_CODE(compas_exscan(rt, buf, buf, n, COMPAS_DOUBLE, COMPAS_SUM), COMPAS_ERR_ARG,
                text_of(n));
    EXPECT_CODE(compas_exscan(rt, buf, out, n, COMPAS_DOUBLE, COMPAS_MAX), COMPAS_ERR_ARG,
                text_of(n));
    EXPECT_TRUE(intact(buf) && intact(out));
  }
  /* 2^61 four-byte values: 2^63 bytes, no overflow, still more than any buffer. */
  int32_t small[N] = {1, 2, 3, 4};
  const int64_t n = INT64_C(1) << 61;
  EXPECT_CODE(compas_allreduce(rt, small, small, n, COMPAS_INT32, COMPAS_SUM), COMPAS_ERR_ARG,
              text_of(n));
  EXPECT_CODE(compas_broadcast(rt, small, n, COMPAS_FLOAT, 0), COMPAS_ERR_ARG, text_of(n));
  EXPECT_TRUE(small[0] == 1 && small[3] == 4);
}

static void group_collectives(compas_runtime* rt) {
  compas_group* g = NULL;
  EXPECT_OK(compas_group_split(rt, 0, 0, &g));
  double buf[N];
  for (int h = 0; h < nhuge; ++h) {
    const int64_t n = huge[h];
    reset(buf);
    EXPECT_CODE(compas_group_allreduce(g, buf, buf, n, COMPAS_DOUBLE, COMPAS_SUM), COMPAS_ERR_ARG,
                text_of(n));
    EXPECT_CODE(compas_group_broadcast(g, buf, n, COMPAS_DOUBLE, 0), COMPAS_ERR_ARG, text_of(n));
    EXPECT_CODE(compas_group_exscan(g, buf, buf, n, COMPAS_DOUBLE, COMPAS_PROD), COMPAS_ERR_ARG,
                text_of(n));
    EXPECT_TRUE(intact(buf));
  }
  EXPECT_OK(compas_group_destroy(&g));
}

static void channel(compas_runtime* rt, int np) {
  compas_channel* ch = NULL;
  EXPECT_OK(compas_channel_create(rt, COMPAS_DOUBLE, 2, N, &ch));
  double buf[N];
  int64_t got = -7;
  for (int h = 0; h < nhuge; ++h) {
    const int64_t n = huge[h];
    reset(buf);
    EXPECT_CODE(compas_channel_send(ch, (me + 1) % np, buf, n), COMPAS_ERR_ARG, text_of(n));
    EXPECT_CODE(compas_channel_recv(ch, (me + np - 1) % np, buf, n, &got), COMPAS_ERR_ARG,
                text_of(n));
    EXPECT_TRUE(intact(buf) && got == -7);
  }
  /* The channel still carries a message. */
  EXPECT_OK(compas_channel_send(ch, (me + 1) % np, buf, N));
  EXPECT_OK(compas_channel_recv(ch, (me + np - 1) % np, buf, N, &got));
  EXPECT_TRUE(got == N && intact(buf));
  EXPECT_OK(compas_channel_destroy(&ch));
}

int main(int argc, char** argv) {
  int np = 0;
  compas_runtime* rt = start(&argc, &argv, &np);
  job_collectives(rt);
  group_collectives(rt);
  channel(rt, np);
  double x = 1 + me; /* still usable: 1 + 2 + ... + np */
  EXPECT_OK(compas_allreduce(rt, &x, &x, 1, COMPAS_DOUBLE, COMPAS_SUM));
  EXPECT_TRUE(x == np * (np + 1) / 2.0);
  EXPECT_OK(compas_finalize(&rt));
  return verdict();
}
