/* compas_init a second time, under compas-run (any number of processes): while the runtime is
 * alive it is COMPAS_ERR_STATE on every process at once and leaves the handle as it was (the
 * runtime still works); after compas_finalize, in a job of several processes, it is
 * COMPAS_ERR_STATE on every process at once too (no process waits for a rendezvous that never
 * comes), and alone it joins again. */
#include "check.h"

int main(int argc, char** argv) {
  int np = 0;
  compas_runtime* rt = start(&argc, &argv, &np);
  compas_runtime* kept = rt;
  EXPECT_CODE(compas_init(&argc, &argv, &rt), COMPAS_ERR_STATE, "runtime is alive");
  EXPECT_TRUE(rt == kept);
  EXPECT_CODE(compas_init(NULL, NULL, &rt), COMPAS_ERR_STATE, "runtime is alive");
  EXPECT_TRUE(rt == kept);
  EXPECT_OK(compas_barrier(rt));
  EXPECT_OK(compas_finalize(&rt));

  const int again = compas_init(&argc, &argv, &rt);
  if (np > 1) {
    EXPECT_CODE(again, COMPAS_ERR_STATE, "a second Runtime in this process");
    EXPECT_TRUE(rt == NULL);
  } else {
    EXPECT_OK(again);
    EXPECT_OK(compas_barrier(rt));
    EXPECT_OK(compas_finalize(&rt));
  }
  return verdict();
}
