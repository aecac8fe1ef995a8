/* compas_abort from the last process while the others are in a collective: the job ends on every
 * process with the given status and one line naming the process and the message, and compas-run
 * names the aborting process (abort.sh). The others' allreduce never completes: they end, or it
 * returns COMPAS_ERR_COMM (their peer died) and they exit with status 1 at once, which must not
 * make compas-run name them. */
#include "check.h"

int main(int argc, char** argv) {
  int np = 0;
  compas_runtime* rt = start(&argc, &argv, &np);
  if (compas_barrier(rt) != COMPAS_OK) return 1; /* every process is in the job */
  if (me == np - 1) compas_abort(rt, 3, "the C API ends the job here");
  double x = me;
  const int rc = compas_allreduce(rt, &x, &x, 1, COMPAS_DOUBLE, COMPAS_SUM);
  if (rc == COMPAS_OK)
    printf("[%d] FAIL: still running after compas_abort\n", me);
  else
    printf("[%d] the allreduce: %s (%s)\n", me, compas_error_name(rc), compas_last_error());
  return 1;
}
