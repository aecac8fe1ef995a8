// The same-host copy loop (direct_copy.hpp): the SSE2 instance (every x86-64 runs it), the choice
// of instance, once, by what the CPU runs, and a memcpy elsewhere than x86-64.
#include "direct_copy.hpp"

#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>

#include "compas/base/isa.hpp"
#include "direct_copy_loop.hpp"
#endif

namespace compas::comm::detail {

#if defined(__x86_64__)

namespace {

struct Sse2 {
  using V = __m128i;
  static constexpr std::size_t kWidth = 16;
  static V loadu(const std::byte* p) { return _mm_loadu_si128(reinterpret_cast<const V*>(p)); }
  static void store(std::byte* p, V x) { _mm_store_si128(reinterpret_cast<V*>(p), x); }
  static void storeu(std::byte* p, V x) { _mm_storeu_si128(reinterpret_cast<V*>(p), x); }
  static void stream(std::byte* p, V x) { _mm_stream_si128(reinterpret_cast<V*>(p), x); }
  static void fence() { _mm_sfence(); }
};

}  // namespace

void copy_loop_sse2(std::byte* dst, const std::byte* src, std::size_t n, Stores stores) {
  copy_with<Sse2>(dst, src, n, stores);
}

void copy_loop(std::byte* dst, const std::byte* src, std::size_t n, Stores stores) {
  static const auto loop = base::cpu_runs(base::Isa::avx512) ? &copy_loop_avx512
                           : base::cpu_runs(base::Isa::avx2) ? &copy_loop_avx2
                                                             : &copy_loop_sse2;
  loop(dst, src, n, stores);
}

#else

void copy_loop(std::byte* dst, const std::byte* src, std::size_t n, Stores) {
  std::memcpy(dst, src, n);
}

#endif

}  // namespace compas::comm::detail
