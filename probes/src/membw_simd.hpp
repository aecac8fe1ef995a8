// The membw vector kernels, written once over a traits type per instruction set. Included only by
// the files that instantiate them, each compiled for its own instruction set (see
// perf/CMakeLists.txt), so everything here has internal linkage: no inline function compiled for
// one instruction set can be picked by the linker for a caller built for another.
//
// A traits type T has
//   V                  the vector of doubles, kWidth of them
//   kAlign             bytes the written array (the read one, for load) is aligned to by a scalar
//                      head before the vector loop
//   kUnroll            vectors per iteration of store and copy (kUnroll * kWidth doubles)
//   kTriadUnroll       vectors per iteration of triad
//   kTriadVectorTail   whether triad finishes whole vectors after the unrolled loop (else the
//                      scalar tail does)
//   zero, set1, load (aligned), loadu, store (aligned), stream (non-temporal), add, fmadd(s, c, b)
//   = b + s*c, and fence (the sfence after streaming stores)
// The vector bodies work on whole cache lines from the aligned position; a scalar tail finishes.
// Non-temporal variants end with the fence, so that the streamed lines are globally visible before
// the caller's next barrier.
//
// The chunk kernels (read_chunk, copy_chunk, store_chunk) are the loaded-latency probe's traffic:
// one chunk per call of a loop that runs until told to stop, on whole aligned cache lines, four
// vectors per iteration. The read sums stay in the caller's accumulator across chunks and the
// streaming stores are not fenced per chunk (the loop fences once when it stops): called per 4 KiB,
// membw's final reduction and closing sfence cut the bandwidth to about 55% (AMD EPYC guest, 28 ->
// 15 GB/s). They are noipa (noinline for clang): with the chunk length propagated into it, GCC
// unrolled the read loop completely and regrouped the loads by accumulator, out of address order,
// which halved the bandwidth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace compas::probes::membw_simd {
namespace {

inline bool misaligned(const void* p, std::uintptr_t bytes) {
  return (reinterpret_cast<std::uintptr_t>(p) & (bytes - 1)) != 0;
}

// ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7)) for N = 8.
template <std::size_t N>
inline double pairwise_sum(const double* x) {
  if constexpr (N == 1)
    return x[0];
  else
    return pairwise_sum<N / 2>(x) + pairwise_sum<N / 2>(x + N / 2);
}

template <class T, bool NT>
inline void put(double* p, typename T::V x) {
  if constexpr (NT)
    T::stream(p, x);
  else
    T::store(p, x);
}

// ---- load: eight accumulators, aligned loads ------------------------------------------------

template <class T, std::size_t... K>
inline void add_lines(typename T::V* s, const double* a, std::index_sequence<K...>) {
  ((s[K] = T::add(s[K], T::load(a + K * T::kWidth))), ...);
}

template <class T>
double load(const double* a, std::size_t n) {
  using V = typename T::V;
  constexpr std::size_t kAccumulators = 8, kStep = kAccumulators * T::kWidth;
  std::size_t i = 0;
  double head = 0;
  for (; i < n && misaligned(a + i, T::kAlign); ++i) head += a[i];
  V s[kAccumulators];
  for (auto& x : s) x = T::zero();
  for (; i + kStep <= n; i += kStep)
    add_lines<T>(s, a + i, std::make_index_sequence<kAccumulators>{});
  for (; i + T::kWidth <= n; i += T::kWidth) s[0] = T::add(s[0], T::load(a + i));
  s[0] = T::add(T::add(T::add(s[0], s[1]), T::add(s[2], s[3])),
                T::add(T::add(s[4], s[5]), T::add(s[6], s[7])));
  // Lanes summed by hand: GCC 12's _mm512_reduce_add_pd warns (-Wuninitialized) in its header.
  alignas(sizeof(V)) double lanes[T::kWidth];
  T::store(lanes, s[0]);
  double sum = head + pairwise_sum<T::kWidth>(lanes);
  for (; i < n; ++i) sum += a[i];
  return sum;
}

// ---- store: a[i] = s ------------------------------------------------------------------------

template <class T, bool NT, std::size_t... K>
inline void store_lines(double* a, typename T::V v, std::index_sequence<K...>) {
  (put<T, NT>(a + K * T::kWidth, v), ...);
}

template <class T, bool NT>
void store_body(double* a, std::size_t n, double s) {
  constexpr std::size_t kStep = T::kUnroll * T::kWidth;
  std::size_t i = 0;
  for (; i < n && misaligned(a + i, T::kAlign); ++i) a[i] = s;
  const typename T::V v = T::set1(s);
  for (; i + kStep <= n; i += kStep)
    store_lines<T, NT>(a + i, v, std::make_index_sequence<T::kUnroll>{});
  for (; i + T::kWidth <= n; i += T::kWidth) put<T, NT>(a + i, v);
  if constexpr (NT) T::fence();
  for (; i < n; ++i) a[i] = s;
}

template <class T>
void store(double* a, std::size_t n, double s, bool nt) {
  if (nt)
    store_body<T, true>(a, n, s);
  else
    store_body<T, false>(a, n, s);
}

// ---- copy: c[i] = a[i], unaligned loads -----------------------------------------------------

template <class T, bool NT, std::size_t... K>
inline void copy_lines(double* c, const double* a, std::index_sequence<K...>) {
  const typename T::V x[] = {T::loadu(a + K * T::kWidth)...};
  (put<T, NT>(c + K * T::kWidth, x[K]), ...);
}

template <class T, bool NT>
void copy_body(double* c, const double* a, std::size_t n) {
  constexpr std::size_t kStep = T::kUnroll * T::kWidth;
  std::size_t i = 0;
  for (; i < n && misaligned(c + i, T::kAlign); ++i) c[i] = a[i];
  for (; i + kStep <= n; i += kStep)
    copy_lines<T, NT>(c + i, a + i, std::make_index_sequence<T::kUnroll>{});
  for (; i + T::kWidth <= n; i += T::kWidth) put<T, NT>(c + i, T::loadu(a + i));
  if constexpr (NT) T::fence();
  for (; i < n; ++i) c[i] = a[i];
}

template <class T>
void copy(double* c, const double* a, std::size_t n, bool nt) {
  if (nt)
    copy_body<T, true>(c, a, n);
  else
    copy_body<T, false>(c, a, n);
}

// ---- triad: a[i] = b[i] + s*c[i], unaligned loads -------------------------------------------

template <class T>
inline typename T::V triad_at(const double* b, const double* c, typename T::V vs, std::size_t k) {
  return T::fmadd(vs, T::loadu(c + k), T::loadu(b + k));
}

template <class T, bool NT, std::size_t... K>
inline void triad_lines(double* a, const double* b, const double* c, typename T::V vs,
                        std::index_sequence<K...>) {
  const typename T::V x[] = {triad_at<T>(b, c, vs, K * T::kWidth)...};
  (put<T, NT>(a + K * T::kWidth, x[K]), ...);
}

template <class T, bool NT>
void triad_body(double* a, const double* b, const double* c, double s, std::size_t n) {
  constexpr std::size_t kStep = T::kTriadUnroll * T::kWidth;
  std::size_t i = 0;
  for (; i < n && misaligned(a + i, T::kAlign); ++i) a[i] = b[i] + s * c[i];
  const typename T::V vs = T::set1(s);
  for (; i + kStep <= n; i += kStep)
    triad_lines<T, NT>(a + i, b + i, c + i, vs, std::make_index_sequence<T::kTriadUnroll>{});
  if constexpr (T::kTriadVectorTail)
    for (; i + T::kWidth <= n; i += T::kWidth) put<T, NT>(a + i, triad_at<T>(b, c, vs, i));
  if constexpr (NT) T::fence();
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
}

template <class T>
void triad(double* a, const double* b, const double* c, double s, std::size_t n, bool nt) {
  if (nt)
    triad_body<T, true>(a, b, c, s, n);
  else
    triad_body<T, false>(a, b, c, s, n);
}

// ---- chunks of traffic: a = whole lines, n a multiple of 4 * kWidth --------------------------

#if defined(__clang__)
#define COMPAS_CHUNK_KERNEL __attribute__((noinline))
#else
#define COMPAS_CHUNK_KERNEL __attribute__((noipa))
#endif

// acc += the lines of a, four vectors of sums kept in acc (4 * kWidth doubles, aligned).
template <class T>
COMPAS_CHUNK_KERNEL void read_chunk(double* acc, const double* a, std::size_t n) {
  typename T::V s[4];
  for (std::size_t k = 0; k < 4; ++k) s[k] = T::load(acc + k * T::kWidth);
  for (std::size_t i = 0; i < n; i += 4 * T::kWidth)
    add_lines<T>(s, a + i, std::make_index_sequence<4>{});
  for (std::size_t k = 0; k < 4; ++k) T::store(acc + k * T::kWidth, s[k]);
}

// b = a by streaming stores, not fenced.
template <class T>
COMPAS_CHUNK_KERNEL void copy_chunk(double* b, const double* a, std::size_t n) {
  for (std::size_t i = 0; i < n; i += T::kWidth) T::stream(b + i, T::load(a + i));
}

// a = 1 by streaming stores, not fenced.
template <class T>
COMPAS_CHUNK_KERNEL void store_chunk(double* a, std::size_t n) {
  const typename T::V v = T::set1(1.0);
  for (std::size_t i = 0; i < n; i += T::kWidth) T::stream(a + i, v);
}

}  // namespace
}  // namespace compas::probes::membw_simd
