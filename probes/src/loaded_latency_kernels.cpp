// The traffic kernels of the loaded-latency probe. See loaded_latency_kernels.hpp.
#include "loaded_latency_kernels.hpp"

#include <algorithm>
#include <cstring>

#if COMPAS_LL_X86
#include <immintrin.h>
#endif

namespace compas::probes::loaded_latency_kernels {

COMPAS_LL_KERNEL void read_generic(ReadSums& acc, const double* a, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 8)
    for (int k = 0; k < 8; ++k) acc.v[k] += a[i + static_cast<std::size_t>(k)];
}
COMPAS_LL_KERNEL void copy_generic(double* b, const double* a, std::size_t n) {
  std::memcpy(b, a, n * 8);
}
COMPAS_LL_KERNEL void store_generic(double* a, std::size_t n) {
  std::fill(a, a + n, 1.0);
}

#if COMPAS_LL_X86

COMPAS_LL_KERNEL void read_sse2(ReadSums& acc, const double* a, std::size_t n) {
  __m128d s0 = _mm_load_pd(acc.v), s1 = _mm_load_pd(acc.v + 2);
  __m128d s2 = _mm_load_pd(acc.v + 4), s3 = _mm_load_pd(acc.v + 6);
  for (std::size_t i = 0; i < n; i += 8) {
    s0 = _mm_add_pd(s0, _mm_load_pd(a + i));
    s1 = _mm_add_pd(s1, _mm_load_pd(a + i + 2));
    s2 = _mm_add_pd(s2, _mm_load_pd(a + i + 4));
    s3 = _mm_add_pd(s3, _mm_load_pd(a + i + 6));
  }
  _mm_store_pd(acc.v, s0);
  _mm_store_pd(acc.v + 2, s1);
  _mm_store_pd(acc.v + 4, s2);
  _mm_store_pd(acc.v + 6, s3);
}
COMPAS_LL_KERNEL void copy_sse2(double* b, const double* a, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 2) _mm_stream_pd(b + i, _mm_load_pd(a + i));
}
COMPAS_LL_KERNEL void store_sse2(double* a, std::size_t n) {
  const __m128d v = _mm_set1_pd(1.0);
  for (std::size_t i = 0; i < n; i += 2) _mm_stream_pd(a + i, v);
}

COMPAS_LL_AVX2 void read_avx2(ReadSums& acc, const double* a, std::size_t n) {
  __m256d s0 = _mm256_load_pd(acc.v), s1 = _mm256_load_pd(acc.v + 4);
  __m256d s2 = _mm256_load_pd(acc.v + 8), s3 = _mm256_load_pd(acc.v + 12);
  for (std::size_t i = 0; i < n; i += 16) {
    s0 = _mm256_add_pd(s0, _mm256_load_pd(a + i));
    s1 = _mm256_add_pd(s1, _mm256_load_pd(a + i + 4));
    s2 = _mm256_add_pd(s2, _mm256_load_pd(a + i + 8));
    s3 = _mm256_add_pd(s3, _mm256_load_pd(a + i + 12));
  }
  _mm256_store_pd(acc.v, s0);
  _mm256_store_pd(acc.v + 4, s1);
  _mm256_store_pd(acc.v + 8, s2);
  _mm256_store_pd(acc.v + 12, s3);
}
COMPAS_LL_AVX2 void copy_avx2(double* b, const double* a, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 4) _mm256_stream_pd(b + i, _mm256_load_pd(a + i));
}
COMPAS_LL_AVX2 void store_avx2(double* a, std::size_t n) {
  const __m256d v = _mm256_set1_pd(1.0);
  for (std::size_t i = 0; i < n; i += 4) _mm256_stream_pd(a + i, v);
}

COMPAS_LL_AVX512 void read_avx512(ReadSums& acc, const double* a, std::size_t n) {
  __m512d s0 = _mm512_load_pd(acc.v), s1 = _mm512_load_pd(acc.v + 8);
  __m512d s2 = _mm512_load_pd(acc.v + 16), s3 = _mm512_load_pd(acc.v + 24);
  for (std::size_t i = 0; i < n; i += 32) {
    s0 = _mm512_add_pd(s0, _mm512_load_pd(a + i));
    s1 = _mm512_add_pd(s1, _mm512_load_pd(a + i + 8));
    s2 = _mm512_add_pd(s2, _mm512_load_pd(a + i + 16));
    s3 = _mm512_add_pd(s3, _mm512_load_pd(a + i + 24));
  }
  _mm512_store_pd(acc.v, s0);
  _mm512_store_pd(acc.v + 8, s1);
  _mm512_store_pd(acc.v + 16, s2);
  _mm512_store_pd(acc.v + 24, s3);
}
COMPAS_LL_AVX512 void copy_avx512(double* b, const double* a, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 8) _mm512_stream_pd(b + i, _mm512_load_pd(a + i));
}
COMPAS_LL_AVX512 void store_avx512(double* a, std::size_t n) {
  const __m512d v = _mm512_set1_pd(1.0);
  for (std::size_t i = 0; i < n; i += 8) _mm512_stream_pd(a + i, v);
}

#endif  // COMPAS_LL_X86

}  // namespace compas::probes::loaded_latency_kernels
