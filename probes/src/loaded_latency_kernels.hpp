// The traffic kernels of the loaded-latency probe: one chunk of reading, copying or streaming
// stores per call, per instruction set (loaded_latency_kernels.cpp), and the choice between them.
#pragma once

#include <cstddef>

#include "compas/probes/membw.hpp"

// Hidden: called directly inside the library, not through the PLT.
#pragma GCC visibility push(hidden)

namespace compas::probes::loaded_latency_kernels {

// Kernels for one chunk, per instruction set. membw's kernels do not suit a chunk loop: called per
// 4 KiB, the load's final reduction and the streaming stores' closing sfence cut the bandwidth to
// about 55% (AMD EPYC guest, 28 -> 15 GB/s) and made the smallest delays indistinguishable. These
// keep the read sums in `acc` across chunks and fence once, when the traffic stops. Chunks are
// whole 64-byte lines, 64-byte aligned. Stores are streaming (non-temporal) except in the generic
// kernels, as in membw. noipa (GCC; noinline for clang): with the chunk length propagated into it,
// GCC unrolled the read loop completely and regrouped the loads by accumulator, out of address
// order, which halved the bandwidth.
struct alignas(64) ReadSums {
  double v[32] = {};
};

#if defined(__clang__)
#define COMPAS_LL_NOIPA noinline  // clang has no noipa, nor specialises a non-static function
#else
#define COMPAS_LL_NOIPA noipa
#endif
#define COMPAS_LL_KERNEL __attribute__((COMPAS_LL_NOIPA))
COMPAS_LL_KERNEL void read_generic(ReadSums& acc, const double* a, std::size_t n);
COMPAS_LL_KERNEL void copy_generic(double* b, const double* a, std::size_t n);
COMPAS_LL_KERNEL void store_generic(double* a, std::size_t n);
#if defined(__x86_64__)
#define COMPAS_LL_AVX2 __attribute__((target("avx2"), COMPAS_LL_NOIPA))
#define COMPAS_LL_AVX512 __attribute__((target("avx512f"), COMPAS_LL_NOIPA))
COMPAS_LL_KERNEL void read_sse2(ReadSums& acc, const double* a, std::size_t n);
COMPAS_LL_KERNEL void copy_sse2(double* b, const double* a, std::size_t n);
COMPAS_LL_KERNEL void store_sse2(double* a, std::size_t n);
COMPAS_LL_AVX2 void read_avx2(ReadSums& acc, const double* a, std::size_t n);
COMPAS_LL_AVX2 void copy_avx2(double* b, const double* a, std::size_t n);
COMPAS_LL_AVX2 void store_avx2(double* a, std::size_t n);
COMPAS_LL_AVX512 void read_avx512(ReadSums& acc, const double* a, std::size_t n);
COMPAS_LL_AVX512 void copy_avx512(double* b, const double* a, std::size_t n);
COMPAS_LL_AVX512 void store_avx512(double* a, std::size_t n);
#define COMPAS_LL_X86 1
#else
#define COMPAS_LL_X86 0
#endif

inline void read_chunk(base::Isa isa, ReadSums& acc, const double* a, std::size_t n) {
#if COMPAS_LL_X86
  if (isa == base::Isa::avx512) return read_avx512(acc, a, n);
  if (isa == base::Isa::avx2) return read_avx2(acc, a, n);
  if (isa == base::Isa::sse2) return read_sse2(acc, a, n);
#endif
  (void)isa;
  read_generic(acc, a, n);
}

inline void copy_chunk(base::Isa isa, double* b, const double* a, std::size_t n) {
#if COMPAS_LL_X86
  if (isa == base::Isa::avx512) return copy_avx512(b, a, n);
  if (isa == base::Isa::avx2) return copy_avx2(b, a, n);
  if (isa == base::Isa::sse2) return copy_sse2(b, a, n);
#endif
  (void)isa;
  copy_generic(b, a, n);
}

inline void store_chunk(base::Isa isa, double* a, std::size_t n) {
#if COMPAS_LL_X86
  if (isa == base::Isa::avx512) return store_avx512(a, n);
  if (isa == base::Isa::avx2) return store_avx2(a, n);
  if (isa == base::Isa::sse2) return store_sse2(a, n);
#endif
  (void)isa;
  store_generic(a, n);
}

}  // namespace compas::probes::loaded_latency_kernels

#pragma GCC visibility pop
