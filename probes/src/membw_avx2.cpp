// The membw kernels for AVX2 (with FMA): four 32-byte vectors (two cache lines) per iteration,
// eight accumulators for load. This file is compiled with -mavx2 -mfma (perf/CMakeLists.txt);
// nothing here runs unless the CPU has both (base::cpu_runs).
#include "membw_kernels.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "membw_simd.hpp"

namespace compas::probes::membw_kernels {

namespace {

struct Avx2 {
  using V = __m256d;
  static constexpr std::size_t kWidth = 4;
  static constexpr std::uintptr_t kAlign = 64;
  static constexpr std::size_t kUnroll = 4;
  static constexpr std::size_t kTriadUnroll = 4;
  static constexpr bool kTriadVectorTail = true;
  static V zero() { return _mm256_setzero_pd(); }
  static V set1(double s) { return _mm256_set1_pd(s); }
  static V load(const double* p) { return _mm256_load_pd(p); }
  static V loadu(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, V x) { _mm256_store_pd(p, x); }
  static void stream(double* p, V x) { _mm256_stream_pd(p, x); }
  static V add(V x, V y) { return _mm256_add_pd(x, y); }
  static V fmadd(V s, V c, V b) { return _mm256_fmadd_pd(s, c, b); }
  static void fence() { _mm_sfence(); }
};

}  // namespace

constinit const KernelSet kAvx2 = {&membw_simd::load<Avx2>, &membw_simd::store<Avx2>,
                                   &membw_simd::copy<Avx2>, &membw_simd::triad<Avx2>};

constinit const ChunkSet kAvx2Chunks = {
    &membw_simd::read_chunk<Avx2>, &membw_simd::copy_chunk<Avx2>, &membw_simd::store_chunk<Avx2>};

}  // namespace compas::probes::membw_kernels

#endif  // __x86_64__
