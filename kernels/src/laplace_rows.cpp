// The rows of one Laplace sweep (laplace_rows.hpp): the generic row, and with AVX2 one row or
// kRows rows at once, with cached or streaming stores.
#include "laplace_rows.hpp"
#include "compas/base/isa.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace compas::kernels::laplace {

void row_generic(const double* above, const double* mid, const double* below, double* out,
                 std::size_t n, double* change) {
  double c = 0;
  for (std::size_t j = 1; j <= n; ++j) {
    const double v = 0.25 * (above[j] + below[j] + mid[j - 1] + mid[j + 1]);
    if (change) c = std::max(c, std::fabs(v - mid[j]));
    out[j] = v;
  }
  if (change) *change = std::max(*change, c);
}

#if defined(__x86_64__)
namespace {

__attribute__((target("avx2"))) void row_avx2(const double* above, const double* mid,
                                              const double* below, double* out, std::size_t n,
                                              double* change, bool stream) {
  std::size_t j = 1;
  double c = 0;
  auto scalar = [&](std::size_t jj) {
    const double v = 0.25 * (above[jj] + below[jj] + mid[jj - 1] + mid[jj + 1]);
    if (change) c = std::max(c, std::fabs(v - mid[jj]));
    out[jj] = v;
  };
  // Peel to a 32-byte aligned destination (streaming stores need it).
  while (j <= n && (reinterpret_cast<std::uintptr_t>(out + j) & 31) != 0) scalar(j++);
  const __m256d quarter = _mm256_set1_pd(0.25);
  const __m256d sign = _mm256_set1_pd(-0.0);
  __m256d vc = _mm256_setzero_pd();
  for (; j + 4 <= n + 1; j += 4) {
    __m256d v = _mm256_add_pd(_mm256_loadu_pd(above + j), _mm256_loadu_pd(below + j));
    v = _mm256_add_pd(v, _mm256_loadu_pd(mid + j - 1));
    v = _mm256_add_pd(v, _mm256_loadu_pd(mid + j + 1));
    v = _mm256_mul_pd(quarter, v);
    if (change)
      vc = _mm256_max_pd(vc, _mm256_andnot_pd(sign, _mm256_sub_pd(v, _mm256_loadu_pd(mid + j))));
    if (stream)
      _mm256_stream_pd(out + j, v);
    else
      _mm256_store_pd(out + j, v);
  }
  for (; j <= n; ++j) scalar(j);
  if (change) {
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, vc);
    for (double l : lanes) c = std::max(c, l);
    *change = std::max(*change, c);
  }
}
template <bool kChange, bool kStream>
__attribute__((target("avx2"))) void rows_avx2_t(const double* src, double* dst, std::size_t pitch,
                                                 std::size_t n, double* change) {
  const double* in[kRows + 2];
  double* out[kRows];
  for (int i = 0; i < kRows + 2; ++i) in[i] = src + static_cast<std::size_t>(i) * pitch;
  for (int i = 0; i < kRows; ++i) out[i] = dst + static_cast<std::size_t>(i) * pitch;
  const __m256d quarter = _mm256_set1_pd(0.25);
  const __m256d sign = _mm256_set1_pd(-0.0);
  __m256d vc = _mm256_setzero_pd();
  std::size_t j = 1;
  for (; j + 4 <= n + 1; j += 4) {
    __m256d c[kRows + 2];
    for (int i = 0; i < kRows + 2; ++i) c[i] = _mm256_loadu_pd(in[i] + j);
    for (int i = 0; i < kRows; ++i) {
      __m256d v = _mm256_add_pd(c[i], c[i + 2]);
      v = _mm256_add_pd(v, _mm256_loadu_pd(in[i + 1] + j - 1));
      v = _mm256_add_pd(v, _mm256_loadu_pd(in[i + 1] + j + 1));
      v = _mm256_mul_pd(quarter, v);
      if constexpr (kChange)
        vc = _mm256_max_pd(vc, _mm256_andnot_pd(sign, _mm256_sub_pd(v, c[i + 1])));
      if constexpr (kStream)
        _mm256_stream_pd(out[i] + j, v);
      else
        _mm256_store_pd(out[i] + j, v);
    }
  }
  double cmax = 0;
  for (; j <= n; ++j)
    for (int i = 0; i < kRows; ++i) {
      const double* a = in[i];
      const double* m = in[i + 1];
      const double* b = in[i + 2];
      const double v = 0.25 * (a[j] + b[j] + m[j - 1] + m[j + 1]);
      if constexpr (kChange) cmax = std::max(cmax, std::fabs(v - m[j]));
      out[i][j] = v;
    }
  if constexpr (kChange) {
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, vc);
    for (double l : lanes) cmax = std::max(cmax, l);
    *change = std::max(*change, cmax);
  }
}
// The loops compiled once per case: the tests of `change` and `stream` out of the inner loop.
}  // namespace

void rows_avx2(const double* src, double* dst, std::size_t pitch, std::size_t n, double* change,
               bool stream) {
  if (change)
    stream ? rows_avx2_t<true, true>(src, dst, pitch, n, change)
           : rows_avx2_t<true, false>(src, dst, pitch, n, change);
  else
    stream ? rows_avx2_t<false, true>(src, dst, pitch, n, change)
           : rows_avx2_t<false, false>(src, dst, pitch, n, change);
}
namespace {

void row_avx2_cached(const double* a, const double* m, const double* b, double* o, std::size_t n,
                     double* c) {
  row_avx2(a, m, b, o, n, c, false);
}
void row_avx2_stream(const double* a, const double* m, const double* b, double* o, std::size_t n,
                     double* c) {
  row_avx2(a, m, b, o, n, c, true);
}

}  // namespace
#endif

RowFn choose_row(bool stream) {
#if defined(__x86_64__)
  if (base::cpu_runs(base::Isa::avx2)) return stream ? row_avx2_stream : row_avx2_cached;
#endif
  (void)stream;
  return row_generic;
}

}  // namespace compas::kernels::laplace
