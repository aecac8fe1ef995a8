// The membw kernels: the generic ones, the SSE2 streaming ones, and the choice between them and
// the vector kernels of membw_avx2.cpp / membw_avx512.cpp. See compas/probes/membw.hpp.
#include "membw_kernels.hpp"

#include <stdexcept>

#include "compas/probes/membw.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "membw_simd.hpp"
#define COMPAS_MEMBW_X86 1
#else
#define COMPAS_MEMBW_X86 0
#endif

namespace compas::probes {

namespace {

// Generic / sse2: plain loops the compiler vectorizes with the baseline instruction set, eight
// independent partial sums for the reduction.
double load_generic(const double* a, std::size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    s0 += a[i];
    s1 += a[i + 1];
    s2 += a[i + 2];
    s3 += a[i + 3];
    s4 += a[i + 4];
    s5 += a[i + 5];
    s6 += a[i + 6];
    s7 += a[i + 7];
  }
  double s = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
  for (; i < n; ++i) s += a[i];
  return s;
}

void store_generic(double* __restrict a, std::size_t n, double s) {
  for (std::size_t i = 0; i < n; ++i) a[i] = s;
}

void copy_generic(double* __restrict c, const double* __restrict a, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) c[i] = a[i];
}

void triad_generic(double* __restrict a, const double* __restrict b, const double* __restrict c,
                   double s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

#if COMPAS_MEMBW_X86
// SSE2, the x86-64 baseline, for streaming stores and the chunk kernels (the ordinary ones are the
// generic loops above): the store aligned to 16 bytes, four vectors per iteration for store and
// copy, two for triad (no FMA: b + s*c is an add of a multiply) and no vector tail after them.
struct Sse2 {
  using V = __m128d;
  static constexpr std::size_t kWidth = 2;
  static constexpr std::uintptr_t kAlign = 16;
  static constexpr std::size_t kUnroll = 4;
  static constexpr std::size_t kTriadUnroll = 2;
  static constexpr bool kTriadVectorTail = false;
  static V set1(double s) { return _mm_set1_pd(s); }
  static V load(const double* p) { return _mm_load_pd(p); }
  static V loadu(const double* p) { return _mm_loadu_pd(p); }
  static void store(double* p, V x) { _mm_store_pd(p, x); }
  static void stream(double* p, V x) { _mm_stream_pd(p, x); }
  static V add(V x, V y) { return _mm_add_pd(x, y); }
  static V fmadd(V s, V c, V b) { return _mm_add_pd(b, _mm_mul_pd(s, c)); }
  static void fence() { _mm_sfence(); }
};

// The vector kernels of `isa`, null for those without any (generic, sse2).
const membw_kernels::KernelSet* vector_kernels(base::Isa isa) {
  if (isa == base::Isa::avx512) return &membw_kernels::kAvx512;
  if (isa == base::Isa::avx2) return &membw_kernels::kAvx2;
  return nullptr;
}
#endif  // COMPAS_MEMBW_X86

}  // namespace

#if COMPAS_MEMBW_X86
constinit const membw_kernels::ChunkSet membw_kernels::kSse2Chunks = {
    &membw_simd::read_chunk<Sse2>, &membw_simd::copy_chunk<Sse2>, &membw_simd::store_chunk<Sse2>};
#endif

void membw_kernels::require_isa(base::Isa isa) {
  if (!base::cpu_runs(isa))
    throw std::invalid_argument(std::string("isa '") + to_string(isa) +
                                "': not supported by this CPU");
}

namespace membw {

using membw_kernels::require_isa;

double load(base::Isa isa, const double* a, std::size_t n) {
  require_isa(isa);
#if COMPAS_MEMBW_X86
  if (const auto* k = vector_kernels(isa)) return k->load(a, n);
#endif
  return load_generic(a, n);
}

void store(base::Isa isa, double* a, std::size_t n, double s, bool non_temporal) {
  require_isa(isa);
#if COMPAS_MEMBW_X86
  if (const auto* k = vector_kernels(isa)) return k->store(a, n, s, non_temporal);
  if (non_temporal && isa == base::Isa::sse2) return membw_simd::store_body<Sse2, true>(a, n, s);
#endif
  store_generic(a, n, s);
}

void copy(base::Isa isa, double* c, const double* a, std::size_t n, bool non_temporal) {
  require_isa(isa);
#if COMPAS_MEMBW_X86
  if (const auto* k = vector_kernels(isa)) return k->copy(c, a, n, non_temporal);
  if (non_temporal && isa == base::Isa::sse2) return membw_simd::copy_body<Sse2, true>(c, a, n);
#endif
  copy_generic(c, a, n);
}

void triad(base::Isa isa, double* a, const double* b, const double* c, double s, std::size_t n,
           bool non_temporal) {
  require_isa(isa);
#if COMPAS_MEMBW_X86
  if (const auto* k = vector_kernels(isa)) return k->triad(a, b, c, s, n, non_temporal);
  if (non_temporal && isa == base::Isa::sse2)
    return membw_simd::triad_body<Sse2, true>(a, b, c, s, n);
#endif
  triad_generic(a, b, c, s, n);
}

}  // namespace membw

}  // namespace compas::probes
