// The same-host copy loop (direct_copy_loop.hpp) for AVX2: 32-byte vectors. This file is compiled
// with -mavx2 (comm/CMakeLists.txt); nothing here runs unless the CPU has it (direct_copy.cpp asks
// base::cpu_runs). Empty elsewhere than x86-64.
#if defined(__x86_64__)
#include <immintrin.h>

#include "direct_copy_loop.hpp"

namespace compas::comm::detail {

namespace {

struct Avx2 {
  using V = __m256i;
  static constexpr std::size_t kWidth = 32;
  static V loadu(const std::byte* p) { return _mm256_loadu_si256(reinterpret_cast<const V*>(p)); }
  static void store(std::byte* p, V x) { _mm256_store_si256(reinterpret_cast<V*>(p), x); }
  static void storeu(std::byte* p, V x) { _mm256_storeu_si256(reinterpret_cast<V*>(p), x); }
  static void stream(std::byte* p, V x) { _mm256_stream_si256(reinterpret_cast<V*>(p), x); }
  static void fence() { _mm_sfence(); }
};

}  // namespace

void copy_loop_avx2(std::byte* dst, const std::byte* src, std::size_t n, Stores stores) {
  copy_with<Avx2>(dst, src, n, stores);
  _mm256_zeroupper();  // no AVX-SSE transition penalty in the caller's SSE code
}

}  // namespace compas::comm::detail

#endif  // __x86_64__
