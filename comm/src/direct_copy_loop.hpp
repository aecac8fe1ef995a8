// The same-host copy loop (direct_copy.hpp), written once over a traits type per instruction set.
// Included only by the files that instantiate it, each compiled for its own instruction set
// (comm/CMakeLists.txt), so everything here has internal linkage: no inline function compiled for
// one instruction set can be picked by the linker for a caller built for another.
//
// A traits type T has V, a vector of kWidth bytes; loadu (unaligned load), store (aligned),
// storeu (unaligned) and stream (aligned, non-temporal); and fence (the sfence after streaming).
//
// The first and the last vector are loaded first and stored last, unaligned; between them every
// store is aligned on the destination, four vectors per iteration, the loads of an iteration
// before its stores. Forward, a load of source byte i + d aliases (low 12 bits) a store of
// destination byte i in flight when the destination leads the source by d modulo 4096; backward,
// when it trails by d. Taking the direction in which the destination is at least half a page
// away keeps every load at least 2048 bytes (in the low 12 bits) from the stores before it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "direct_copy.hpp"

namespace compas::comm::detail {
namespace {

constexpr std::uintptr_t kPageBytes = 4096;

// Whether to copy from the end: the destination leads the source by less than half a page.
inline bool goes_backward(const std::byte* dst, const std::byte* src) {
  const std::uintptr_t lead =
      (reinterpret_cast<std::uintptr_t>(dst) - reinterpret_cast<std::uintptr_t>(src)) % kPageBytes;
  return lead != 0 && lead < kPageBytes / 2;
}

// Stores one vector, after every store before it in program order: the compiler may otherwise
// reorder the stores of an iteration (GCC -O3 -fPIC stored a backward iteration's four vectors in
// the order 1, 2, 4, 3), and then copies whose destination sat 16 or 48 bytes into a cache line
// ran 1.3-1.65x slower than at other offsets (Intel, family 6 model 0xa7, 128 KiB); in address
// order, no offset was more than 1.1x slower than the best. Emits no instruction.
template <class T, bool NT>
inline void put_vector(std::byte* p, typename T::V x) {
  asm volatile("" ::: "memory");
  if constexpr (NT)
    T::stream(p, x);
  else
    T::store(p, x);
}

template <class T, bool NT>
void copy_forward(std::byte* d, const std::byte* s, std::size_t n) {
  constexpr std::size_t W = T::kWidth;
  const typename T::V first = T::loadu(s), last = T::loadu(s + n - W);
  std::size_t i = W - reinterpret_cast<std::uintptr_t>(d) % W;  // d + i aligned, 1..W
  for (; i + 4 * W <= n; i += 4 * W) {
    const typename T::V a = T::loadu(s + i), b = T::loadu(s + i + W), c = T::loadu(s + i + 2 * W),
                        e = T::loadu(s + i + 3 * W);
    put_vector<T, NT>(d + i, a);
    put_vector<T, NT>(d + i + W, b);
    put_vector<T, NT>(d + i + 2 * W, c);
    put_vector<T, NT>(d + i + 3 * W, e);
  }
  for (; i + W <= n; i += W) put_vector<T, NT>(d + i, T::loadu(s + i));
  T::storeu(d, first);
  T::storeu(d + n - W, last);
}

template <class T, bool NT>
void copy_backward(std::byte* d, const std::byte* s, std::size_t n) {
  constexpr std::size_t W = T::kWidth;
  const typename T::V first = T::loadu(s), last = T::loadu(s + n - W);
  std::size_t i = n - reinterpret_cast<std::uintptr_t>(d + n) % W;  // d + i aligned
  for (; i >= 4 * W; i -= 4 * W) {
    const typename T::V a = T::loadu(s + i - W), b = T::loadu(s + i - 2 * W),
                        c = T::loadu(s + i - 3 * W), e = T::loadu(s + i - 4 * W);
    put_vector<T, NT>(d + i - W, a);
    put_vector<T, NT>(d + i - 2 * W, b);
    put_vector<T, NT>(d + i - 3 * W, c);
    put_vector<T, NT>(d + i - 4 * W, e);
  }
  for (; i >= W; i -= W) put_vector<T, NT>(d + i - W, T::loadu(s + i - W));
  T::storeu(d + n - W, last);
  T::storeu(d, first);
}

template <class T>
void copy_with(std::byte* d, const std::byte* s, std::size_t n, Stores stores) {
  const bool back = goes_backward(d, s);
  if (stores == Stores::streaming) {
    if (back)
      copy_backward<T, true>(d, s, n);
    else
      copy_forward<T, true>(d, s, n);
    T::fence();  // the streamed stores are visible before the signal that follows
  } else if (back) {
    copy_backward<T, false>(d, s, n);
  } else {
    copy_forward<T, false>(d, s, n);
  }
}

}  // namespace
}  // namespace compas::comm::detail
