// The same-host copy loop (direct_copy_loop.hpp) for AVX-512: 64-byte vectors, one store per
// cache line (copies of 8 and 16 KiB, in L1, took 1.3x the C library's time with 32-byte stores
// and the same with these). This file is compiled with -mavx512f (comm/CMakeLists.txt); nothing
// here runs unless the CPU has it (direct_copy.cpp asks base::cpu_runs). Empty elsewhere than
// x86-64.
#if defined(__x86_64__)
#include <immintrin.h>

#include "direct_copy_loop.hpp"

namespace compas::comm::detail {

namespace {

struct Avx512 {
  using V = __m512i;
  static constexpr std::size_t kWidth = 64;
  static V loadu(const std::byte* p) { return _mm512_loadu_si512(p); }
  static void store(std::byte* p, V x) { _mm512_store_si512(p, x); }
  static void storeu(std::byte* p, V x) { _mm512_storeu_si512(p, x); }
  static void stream(std::byte* p, V x) { _mm512_stream_si512(reinterpret_cast<V*>(p), x); }
  static void fence() { _mm_sfence(); }
};

}  // namespace

void copy_loop_avx512(std::byte* dst, const std::byte* src, std::size_t n, Stores stores) {
  copy_with<Avx512>(dst, src, n, stores);
  _mm256_zeroupper();  // no AVX-SSE transition penalty in the caller's SSE code
}

}  // namespace compas::comm::detail

#endif  // __x86_64__
