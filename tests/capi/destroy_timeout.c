/* A collective destroy that cannot meet the other processes returns the failure: under compas-run
 * -n 2 with a short COMPAS_TIMEOUT, process 0 destroys an array that process 1 does not destroy
 * (with DESTROY_TIMEOUT_CALL=finalize it calls compas_finalize, which destroys it); process 0's
 * call must return COMPAS_ERR_COMM naming the failure (the handle gone all the same), not
 * COMPAS_OK. Process 1 waits, making no call, until process 0 says it is done (a file named after
 * the job's token), then both leave. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static void done_file(char* path, size_t size) {
  const char* dir = getenv("TMPDIR");
  const char* token = getenv("COMPAS_JOB_TOKEN");
  snprintf(path, size, "%s/compas-destroy-timeout-%s", dir && *dir ? dir : "/tmp",
           token ? token : "none");
}

int main(int argc, char** argv) {
  int np = 0;
  compas_runtime* rt = start(&argc, &argv, &np);
  const int64_t lo = 0, hi = 64;
  compas_array* a = NULL;
  EXPECT_OK(compas_array_create(rt, COMPAS_DOUBLE, 1, &lo, &hi, NULL, &a));
  char path[4096];
  done_file(path, sizeof path);
  const char* call = getenv("DESTROY_TIMEOUT_CALL");
  if (me == 0 && call && strcmp(call, "finalize") == 0) {
    EXPECT_CODE(compas_finalize(&rt), COMPAS_ERR_COMM, "could not meet every process");
    EXPECT_TRUE(rt == NULL);
  } else if (me == 0) {
    EXPECT_CODE(compas_array_destroy(&a), COMPAS_ERR_COMM, "destroyed without every process");
    EXPECT_TRUE(a == NULL);
  }
  if (me == 0) {
    FILE* f = fopen(path, "w");
    if (f) fclose(f);
  } else {
    for (int i = 0; i < 60000 && access(path, F_OK) != 0; ++i) usleep(10000); /* 10 min at most */
    remove(path);
  }
  return verdict(); /* no (further) compas_finalize: the job failed on process 0 */
}
