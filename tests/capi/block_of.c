/* compas_block_of, the block split of a range, under compas-run (any number of processes): before
 * compas_init (no runtime needed), every block of [lo, lo + n) in `parts` for n up to 40 and parts
 * up to 7 follows the definition (contiguous from lo to hi in part order, n / parts indices each,
 * one more for the first n % parts); this process's block of a range is the part a 1-D array over
 * it gives this process (compas_array_bounds); bad values are COMPAS_ERR_ARG naming the value. */
#include <stdint.h>

#include "check.h"

static void definition(void) {
  const int64_t los[3] = {0, 7, -5};
  int bad = 0;
  for (int l = 0; l < 3; ++l)
    for (int64_t n = 0; n <= 40; ++n)
      for (int64_t parts = 1; parts <= 7; ++parts) {
        int64_t next = los[l];
        for (int64_t part = 0; part < parts; ++part) {
          int64_t lo = -99, hi = -99;
          const int code = compas_block_of(los[l], los[l] + n, parts, part, &lo, &hi);
          const int64_t want = n / parts + (part < n % parts);
          if (code != COMPAS_OK || lo != next || hi - lo != want) {
            printf(
                "[%d] FAIL: compas_block_of(%lld, %lld, %lld, %lld) gave %s [%lld, %lld), "
                "expected [%lld, %lld)\n",
                me, (long long)los[l], (long long)(los[l] + n), (long long)parts, (long long)part,
                compas_error_name(code), (long long)lo, (long long)hi, (long long)next,
                (long long)(next + want));
            ++bad;
          }
          next += want;
        }
      }
  EXPECT_TRUE(bad == 0);
}

static void like_an_array(compas_runtime* rt, int np) {
  const int64_t lo[1] = {3}, hi[1] = {3 + 7 * np + np - 1}; /* uneven: np - 1 parts one longer */
  compas_array* u = NULL;
  EXPECT_OK(compas_array_create(rt, COMPAS_DOUBLE, 1, lo, hi, NULL, &u));
  int64_t own_lo = -1, own_hi = -1, block_lo = -2, block_hi = -2;
  EXPECT_OK(compas_array_bounds(u, &own_lo, &own_hi));
  EXPECT_OK(compas_block_of(lo[0], hi[0], np, me, &block_lo, &block_hi));
  EXPECT_TRUE(block_lo == own_lo && block_hi == own_hi);
  EXPECT_OK(compas_array_destroy(&u));
}

static void errors(void) {
  int64_t lo = 0, hi = 0;
  EXPECT_CODE(compas_block_of(0, 10, 0, 0, &lo, &hi), COMPAS_ERR_ARG, "parts 0: 1 or more");
  EXPECT_CODE(compas_block_of(0, 10, 3, 3, &lo, &hi), COMPAS_ERR_ARG, "part 3 of 3: 0 to 2");
  EXPECT_CODE(compas_block_of(0, 10, 3, -1, &lo, &hi), COMPAS_ERR_ARG, "part -1 of 3");
  EXPECT_CODE(compas_block_of(5, 3, 2, 0, &lo, &hi), COMPAS_ERR_ARG, "range [5, 3): hi >= lo");
  EXPECT_CODE(compas_block_of(-INT64_MAX, INT64_MAX, 2, 0, &lo, &hi), COMPAS_ERR_ARG,
              "more than an index");
  EXPECT_CODE(compas_block_of(0, 10, 2, 0, NULL, &hi), COMPAS_ERR_ARG, "block_lo is NULL");
  EXPECT_CODE(compas_block_of(0, 10, 2, 0, &lo, NULL), COMPAS_ERR_ARG, "block_hi is NULL");
  EXPECT_OK(compas_block_of(4, 4, 3, 2, &lo, &hi)); /* an empty range: empty blocks */
  EXPECT_TRUE(lo == 4 && hi == 4);
}

int main(int argc, char** argv) {
  definition(); /* before compas_init */
  int np = 0;
  compas_runtime* rt = start(&argc, &argv, &np);
  like_an_array(rt, np);
  errors();
  EXPECT_OK(compas_finalize(&rt));
  return verdict();
}
