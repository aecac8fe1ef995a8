// gemm_local: the AVX2 + FMA micro-kernel, 6 x 8 (6 rows of C, two 4-double vectors per row: 12
// ymm accumulators, two B vectors and a broadcast of A, 15 of the 16 registers). Per step of k:
// 2 vector loads of B, 6 broadcasts of A, 12 FMAs. Edge tiles go through a scratch tile.
#include <cstddef>

#include "gemm_local_kernels.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COMPAS_GEMM_X86 1
#include <immintrin.h>
#else
#define COMPAS_GEMM_X86 0
#endif

namespace compas::kernels::gemm::detail {

#if COMPAS_GEMM_X86
namespace {

#define COMPAS_AVX2 __attribute__((target("avx2,fma")))

constexpr std::size_t kMr = 6, kNr = 8;

COMPAS_AVX2 void kernel_avx2(std::size_t kc, const double* __restrict a, const double* __restrict b,
                             double* __restrict c, std::size_t ldc, bool overwrite) {
  if (!overwrite) {
#pragma GCC unroll 6
    for (std::size_t i = 0; i < kMr; ++i) {
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 7), _MM_HINT_T0);
    }
  }
  __m256d acc[kMr][2];
#pragma GCC unroll 6
  for (std::size_t i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_pd();
#pragma GCC unroll 4
  for (std::size_t p = 0; p < kc; ++p) {
    const __m256d b0 = _mm256_load_pd(b), b1 = _mm256_load_pd(b + 4);
#pragma GCC unroll 6
    for (std::size_t i = 0; i < kMr; ++i) {
      const __m256d ai = _mm256_broadcast_sd(a + i);
      acc[i][0] = _mm256_fmadd_pd(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_pd(ai, b1, acc[i][1]);
    }
    a += kMr;
    b += kNr;
  }
#pragma GCC unroll 6
  for (std::size_t i = 0; i < kMr; ++i) {
    double* ci = c + i * ldc;
    if (overwrite) {
      _mm256_storeu_pd(ci, acc[i][0]);
      _mm256_storeu_pd(ci + 4, acc[i][1]);
    } else {
      _mm256_storeu_pd(ci, _mm256_add_pd(_mm256_loadu_pd(ci), acc[i][0]));
      _mm256_storeu_pd(ci + 4, _mm256_add_pd(_mm256_loadu_pd(ci + 4), acc[i][1]));
    }
  }
}

}  // namespace

bool have_avx2_kernels() {
  return true;
}

const KernelSet& avx2_kernels() {
  static const KernelSet set{kMr,          kNr,
                             &kernel_avx2, &edge_via_scratch<kMr, kNr, &kernel_avx2>,
                             &pack_a<kMr>, &pack_b<kNr>};
  return set;
}

#else

bool have_avx2_kernels() {
  return false;
}
const KernelSet& avx2_kernels() {
  return generic_kernels();
}

#endif

}  // namespace compas::kernels::gemm::detail
