/* What the C API test programs share: EXPECT_CODE(call, code, text) runs a call, checks its code
 * and that compas_last_error() holds `text`, and counts failures; every process prints its own
 * lines, prefixed by its rank. */
#ifndef COMPAS_TESTS_CAPI_CHECK_H
#define COMPAS_TESTS_CAPI_CHECK_H

#include <stdio.h>
#include <string.h>

#include "compas/compas.h"

static int failures = 0;
static int me = 0;

static inline void expect_code(const char* what, int got, int want, const char* text) {
  const char* msg = compas_last_error();
  if (got != want) {
    printf("[%d] FAIL: %s returned %s, expected %s (%s)\n", me, what, compas_error_name(got),
           compas_error_name(want), msg);
    ++failures;
  } else if (want != COMPAS_OK && (msg[0] == '\0' || (text && !strstr(msg, text)))) {
    printf("[%d] FAIL: %s: message '%s' does not hold '%s'\n", me, what, msg, text ? text : "");
    ++failures;
  } else {
    printf("[%d] ok: %s -> %s%s%s\n", me, what, compas_error_name(got), want ? ": " : "",
           want ? msg : "");
  }
}

#define EXPECT_CODE(call, want, text) expect_code(#call, (call), (want), (text))
#define EXPECT_OK(call) expect_code(#call, (call), COMPAS_OK, NULL)
#define EXPECT_TRUE(cond)                            \
  do {                                               \
    if (!(cond)) {                                   \
      printf("[%d] FAIL: %s is false\n", me, #cond); \
      ++failures;                                    \
    }                                                \
  } while (0)

/* compas_init, this process's rank in `me` and the job's size in *np. */
static inline compas_runtime* start(int* argc, char*** argv, int* np) {
  compas_runtime* rt = NULL;
  EXPECT_OK(compas_init(argc, argv, &rt));
  EXPECT_OK(compas_process(rt, &me));
  EXPECT_OK(compas_processes(rt, np));
  return rt;
}

/* The verdict line the tests look for, and the exit status. */
static inline int verdict(void) {
  printf("[%d] %s: %d failure(s)\n", me, failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}

#endif
