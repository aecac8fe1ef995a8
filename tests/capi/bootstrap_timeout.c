/* A job that cannot form is COMPAS_ERR_COMM ("communication failed: ... COMPAS_TIMEOUT passed"),
 * not COMPAS_ERR_INTERNAL: under compas-run -n 2 with a short COMPAS_TIMEOUT, process 1 leaves
 * without calling compas_init, and process 0's compas_init, which waits for it, must return
 * COMPAS_ERR_COMM naming it. */
#include <stdlib.h>

#include "check.h"

int main(int argc, char** argv) {
  const char* rank = getenv("COMPAS_RANK");
  if (rank == NULL || atoi(rank) != 0) return 0; /* never joins */
  compas_runtime* rt = NULL;
  EXPECT_CODE(compas_init(&argc, &argv, &rt), COMPAS_ERR_COMM, "rank 1");
  EXPECT_TRUE(rt == NULL);
  return verdict();
}
