/* compas.h alone in a C11 translation unit (-std=c11 -pedantic -Werror), and twice. */
#include "compas/compas.h"

int compas_header_c11_probe(void);
int compas_header_c11_probe(void) {
  compas_array_options o;
  compas_runtime* rt = 0;
  (void)rt;
  return compas_array_options_init(&o) == COMPAS_OK ? (int)COMPAS_DOUBLE : (int)COMPAS_ERR_INTERNAL;
}
