// gemm_local: the AVX-512 micro-kernel, 8 x 24 (8 rows of C, three 8-double vectors per row: 24
// zmm accumulators, three B vectors and a broadcast of A, 28 of the 32 registers). Per step of
// k: 3 vector loads of B (from L2), 8 broadcasts of A (from L1), 24 FMAs. Edge tiles compute one,
// two or three vectors per row as their width needs, mask the last, and store only the rows that
// exist.
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

#define COMPAS_AVX512 __attribute__((target("avx512f")))
#define COMPAS_INLINE __attribute__((always_inline)) inline

constexpr std::size_t kMr = 8, kNr = 24;

// The first NV vectors (8 * NV columns) of an 8 x 24 tile: acc[i][v] += a[p][i] * b[p][8v..8v+7].
template <int NV>
struct Tile {
  __m512d v[kMr][NV];
};

template <int NV>
COMPAS_AVX512 COMPAS_INLINE void rank_kc(std::size_t kc, const double* __restrict a,
                                         const double* __restrict b, Tile<NV>& t) {
#pragma GCC unroll 8
  for (std::size_t i = 0; i < kMr; ++i)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) t.v[i][v] = _mm512_setzero_pd();
#pragma GCC unroll 4
  for (std::size_t p = 0; p < kc; ++p) {
    __m512d bv[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_pd(b + 8 * v);
#pragma GCC unroll 8
    for (std::size_t i = 0; i < kMr; ++i) {
      const __m512d ai = _mm512_set1_pd(a[i]);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) t.v[i][v] = _mm512_fmadd_pd(ai, bv[v], t.v[i][v]);
    }
    a += kMr;
    b += kNr;
  }
}

COMPAS_AVX512 void kernel_avx512(std::size_t kc, const double* __restrict a,
                                 const double* __restrict b, double* __restrict c, std::size_t ldc,
                                 bool overwrite) {
  if (!overwrite) {
    // The tile's rows are read at the end; start bringing them in now.
#pragma GCC unroll 8
    for (std::size_t i = 0; i < kMr; ++i) {
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 8), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 23), _MM_HINT_T0);
    }
  }
  Tile<3> t;
  rank_kc(kc, a, b, t);
#pragma GCC unroll 8
  for (std::size_t i = 0; i < kMr; ++i) {
    double* ci = c + i * ldc;
    if (overwrite) {
      _mm512_storeu_pd(ci, t.v[i][0]);
      _mm512_storeu_pd(ci + 8, t.v[i][1]);
      _mm512_storeu_pd(ci + 16, t.v[i][2]);
    } else {
      _mm512_storeu_pd(ci, _mm512_add_pd(_mm512_loadu_pd(ci), t.v[i][0]));
      _mm512_storeu_pd(ci + 8, _mm512_add_pd(_mm512_loadu_pd(ci + 8), t.v[i][1]));
      _mm512_storeu_pd(ci + 16, _mm512_add_pd(_mm512_loadu_pd(ci + 16), t.v[i][2]));
    }
  }
}

// A partial tile computes only the vectors it needs (its cost grows with its width), masks the
// last one, and stores only the rows that exist.
template <int NV>
COMPAS_AVX512 void edge_nv(std::size_t rows, std::size_t cols, std::size_t kc,
                           const double* __restrict a, const double* __restrict b,
                           double* __restrict c, std::size_t ldc, bool overwrite) {
  Tile<NV> t;
  rank_kc(kc, a, b, t);
  const std::size_t tail = cols - 8 * (NV - 1);  // 1..8 columns in the last vector
  const __mmask8 last = static_cast<__mmask8>((1u << tail) - 1u);
  for (std::size_t i = 0; i < rows; ++i) {
    double* ci = c + i * ldc;
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      const __mmask8 mask = v == NV - 1 ? last : static_cast<__mmask8>(0xff);
      __m512d x = t.v[i][v];
      if (!overwrite) x = _mm512_add_pd(_mm512_maskz_loadu_pd(mask, ci + 8 * v), x);
      _mm512_mask_storeu_pd(ci + 8 * v, mask, x);
    }
  }
}

COMPAS_AVX512 void edge_avx512(std::size_t rows, std::size_t cols, std::size_t kc,
                               const double* __restrict a, const double* __restrict b,
                               double* __restrict c, std::size_t ldc, bool overwrite) {
  if (cols <= 8)
    edge_nv<1>(rows, cols, kc, a, b, c, ldc, overwrite);
  else if (cols <= 16)
    edge_nv<2>(rows, cols, kc, a, b, c, ldc, overwrite);
  else
    edge_nv<3>(rows, cols, kc, a, b, c, ldc, overwrite);
}

}  // namespace

bool have_avx512_kernels() {
  return true;
}

const KernelSet& avx512_kernels() {
  static const KernelSet set{kMr, kNr, &kernel_avx512, &edge_avx512, &pack_a<kMr>, &pack_b<kNr>};
  return set;
}

#else

bool have_avx512_kernels() {
  return false;
}
const KernelSet& avx512_kernels() {
  return generic_kernels();
}

#endif

}  // namespace compas::kernels::gemm::detail
