// The copies of a same-host put, put_signal and get: between this process's memory and a peer's
// window mapped here (Peer::direct).
//
// Copies of up to 16 bytes are inline (copy_small), other small ones a memcpy. From
// kLoopCopyBytes on, the C library's memcpy may take "rep movsb" (glibc 2.36: from 2112 bytes on
// CPUs with fast short rep mov, up to its non-temporal threshold), which some CPUs run many times
// slower for some placements of the two buffers: on one, a copy of 128 KiB took 96.6 us with the
// destination 16 bytes past the source modulo 4096 against 2.76 us elsewhere (compas pingpong's get
// of 96-256 KiB took 158-459 us there); AMD Zen 3 runs it about 20x slower with a misaligned
// destination (glibc bug 30994). A user's buffers land anywhere, so these copies use a loop of
// vector loads and stores instead (direct_copy_loop.hpp) whose speed does not depend on where they
// land: every store but the first and last aligned on the destination, and the copy runs backward
// when the destination leads its source by less than half a page modulo 4096, so that the loads
// stay at least half a page (in the low 12 bits, which 4K aliasing compares) from the stores before
// them. bench/copy_offsets times every pair of offsets.
//
// Stores::streaming (a put_signal of kStreamCopyBytes or more, x86-64): non-temporal stores, so
// the peer's lines go to memory without first being read into this core's cache (which would take
// each line from the core that last read it, the receiver of the previous chunk in the same slot),
// and the receiver reads them from memory; an sfence makes them visible before the signal that
// follows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace compas::comm::detail {

// Copies of fewer bytes are a memcpy (below every glibc's switch to "rep movsb").
constexpr std::size_t kLoopCopyBytes = 2048;
// Copies of this many bytes or more may stream (Stores::streaming).
constexpr std::size_t kStreamCopyBytes = 64 * 1024;

enum class Stores { cached, streaming };

// The loop: n >= 64 bytes, the two ranges apart. Off x86-64, a memcpy.
void copy_loop(std::byte* dst, const std::byte* src, std::size_t n, Stores stores);

#if defined(__x86_64__)
// The instances copy_loop chooses from, once, by base::cpu_runs: AVX-512, else AVX2, else SSE2.
void copy_loop_sse2(std::byte* dst, const std::byte* src, std::size_t n, Stores stores);
void copy_loop_avx2(std::byte* dst, const std::byte* src, std::size_t n, Stores stores);
void copy_loop_avx512(std::byte* dst, const std::byte* src, std::size_t n, Stores stores);
#endif

// Up to 16 bytes (a put of one value, the most frequent and the most latency-bound), inline: at
// most two loads and two stores (overlapping when n is not a power of two), the last byte stored
// last, as glibc's memcpy does it, without the call.
inline void copy_small(std::byte* d, const std::byte* s, std::size_t n) {
  if (n >= 8) {
    std::uint64_t a, b;
    std::memcpy(&a, s, 8);
    std::memcpy(&b, s + n - 8, 8);
    std::memcpy(d, &a, 8);
    std::memcpy(d + n - 8, &b, 8);
  } else if (n >= 4) {
    std::uint32_t a, b;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + n - 4, 4);
    std::memcpy(d, &a, 4);
    std::memcpy(d + n - 4, &b, 4);
  } else if (n > 0) {
    const std::byte first = s[0], middle = s[n / 2], last = s[n - 1];
    d[0] = first;
    d[n / 2] = middle;
    d[n - 1] = last;
  }
}

// A same-host copy: inline up to 16 bytes, memcpy below kLoopCopyBytes, the loop above; `large`
// says how copies of kStreamCopyBytes or more store.
inline void copy_direct(void* dst, const void* src, std::size_t n, Stores large) {
  if (n <= 16) {
    copy_small(static_cast<std::byte*>(dst), static_cast<const std::byte*>(src), n);
    return;
  }
  if (n < kLoopCopyBytes) {
    std::memcpy(dst, src, n);
    return;
  }
  copy_loop(static_cast<std::byte*>(dst), static_cast<const std::byte*>(src), n,
            n >= kStreamCopyBytes ? large : Stores::cached);
}

}  // namespace compas::comm::detail
