/* Errors that end the job (compas_start's mode): fatal.c MISTAKE makes one mistake and must not
 * return from it; fatal.sh checks the job's status and message.
 *   halo    every process: compas_alloc with halo -1 (bad input: status 2)
 *   handle  the last process: compas_exchange_halos of an address inside an array while the
 *           others wait in compas_barrier (a program error: status 1, no process left waiting) */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "compas/compas.h"

int main(int argc, char** argv) {
  compas_runtime* rt = compas_start(&argc, &argv);
  const char* mistake = argc > 1 ? argv[1] : "";
  compas_array_options o;
  compas_array_options_init(&o);
  if (strcmp(mistake, "halo") == 0) {
    o.halo[0] = -1;
    compas_alloc(rt, COMPAS_DOUBLE, 1, &(int64_t){0}, &(int64_t){64}, &o);
  } else if (strcmp(mistake, "handle") == 0) {
    double* u = compas_alloc(rt, COMPAS_DOUBLE, 1, &(int64_t){0}, &(int64_t){64}, NULL);
    if (compas_rank(rt) == compas_size(rt) - 1) compas_exchange_halos(u + 1);
    compas_barrier(rt);
  }
  printf("process %d still running after '%s'\n", compas_rank(rt), mistake);
  compas_finalize(&rt);
  return 0;
}
