/* compas_abort from the last process while the others wait in a barrier: the job ends on every
 * process with the given status and one line naming the process and the message (abort.sh). The
 * others' barrier never completes: they end, or it returns COMPAS_ERR_COMM (their peer died). */
#include "check.h"

int main(int argc, char** argv) {
  int np = 0;
  compas_runtime* rt = start(&argc, &argv, &np);
  if (me == np - 1) compas_abort(rt, 3, "the C API ends the job here");
  const int rc = compas_barrier(rt);
  if (rc == COMPAS_OK)
    printf("[%d] FAIL: still running after compas_abort\n", me);
  else
    printf("[%d] the barrier: %s (%s)\n", me, compas_error_name(rc), compas_last_error());
  return 1;
}
