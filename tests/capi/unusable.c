/* After a collective failed on a process (here: the last process leaves the job, and the others'
 * allreduce returns COMPAS_ERR_COMM naming it), every later collective of the job on that process
 * returns COMPAS_ERR_STATE, the code compas.h gives a job whose collectives are unusable, with a
 * message saying so and naming the first failure. Under compas-run at 2 or more processes. */
#include "check.h"

int main(int argc, char** argv) {
  int np = 0;
  compas_runtime* rt = start(&argc, &argv, &np);
  EXPECT_OK(compas_barrier(rt));
  if (me == np - 1) return 0; /* leaves without compas_finalize: its peers see it gone */
  double x = 1;
  EXPECT_CODE(compas_allreduce(rt, &x, &x, 1, COMPAS_DOUBLE, COMPAS_SUM), COMPAS_ERR_COMM, NULL);
  for (int i = 0; i < 2; ++i) {
    EXPECT_CODE(compas_allreduce(rt, &x, &x, 1, COMPAS_DOUBLE, COMPAS_SUM), COMPAS_ERR_STATE,
                "unusable");
    EXPECT_CODE(compas_exscan(rt, &x, &x, 1, COMPAS_DOUBLE, COMPAS_SUM), COMPAS_ERR_STATE,
                "unusable");
    EXPECT_CODE(compas_broadcast(rt, &x, 1, COMPAS_DOUBLE, 0), COMPAS_ERR_STATE, "unusable");
  }
  return verdict();
}
