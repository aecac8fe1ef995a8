// Copies into a peer's memory mapped here (a direct put on this host). Large copies use
// non-temporal stores: the peer's lines go to memory without first being read into this core's
// cache (which would take each line from the core that last read it, the receiver of the
// previous chunk in the same slot), and the receiver reads them from memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace compas::comm::detail {

// Copies of this many bytes or more stream (x86-64); smaller ones are a memcpy.
constexpr std::size_t kStreamCopyBytes = 64 * 1024;

inline void copy_to_peer(std::byte* dst, const void* src, std::size_t n) {
#if defined(__x86_64__)
  if (n >= kStreamCopyBytes) {
    const auto* s = static_cast<const std::byte*>(src);
    const std::size_t head = (16 - reinterpret_cast<std::uintptr_t>(dst) % 16) % 16;
    std::memcpy(dst, s, head);
    std::size_t i = head;
    for (; i + 64 <= n; i += 64)
      for (std::size_t k = 0; k < 64; k += 16)
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + k),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + k)));
    std::memcpy(dst + i, s + i, n - i);
    _mm_sfence();  // the streamed stores are visible before the signal that follows
    return;
  }
#endif
  std::memcpy(dst, src, n);
}

}  // namespace compas::comm::detail
