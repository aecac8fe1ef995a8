// The membw kernels for AVX-512F: four 64-byte vectors (four cache lines) per iteration,
// eight accumulators for load. This file is compiled with -mavx512f (perf/CMakeLists.txt);
// nothing here runs unless the CPU has it (base::cpu_runs).
#include "membw_kernels.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "membw_simd.hpp"

namespace compas::probes::membw_kernels {

namespace {

struct Avx512 {
  using V = __m512d;
  static constexpr std::size_t kWidth = 8;
  static constexpr std::uintptr_t kAlign = 64;
  static constexpr std::size_t kUnroll = 4;
  static constexpr std::size_t kTriadUnroll = 4;
  static constexpr bool kTriadVectorTail = true;
  static V zero() { return _mm512_setzero_pd(); }
  static V set1(double s) { return _mm512_set1_pd(s); }
  static V load(const double* p) { return _mm512_load_pd(p); }
  static V loadu(const double* p) { return _mm512_loadu_pd(p); }
  static void store(double* p, V x) { _mm512_store_pd(p, x); }
  static void stream(double* p, V x) { _mm512_stream_pd(p, x); }
  static V add(V x, V y) { return _mm512_add_pd(x, y); }
  static V fmadd(V s, V c, V b) { return _mm512_fmadd_pd(s, c, b); }
  static void fence() { _mm_sfence(); }
};

}  // namespace

constinit const KernelSet kAvx512 = {&membw_simd::load<Avx512>, &membw_simd::store<Avx512>,
                                     &membw_simd::copy<Avx512>, &membw_simd::triad<Avx512>};

constinit const ChunkSet kAvx512Chunks = {&membw_simd::read_chunk<Avx512>,
                                          &membw_simd::copy_chunk<Avx512>,
                                          &membw_simd::store_chunk<Avx512>};

}  // namespace compas::probes::membw_kernels

#endif  // __x86_64__
