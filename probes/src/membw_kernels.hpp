// The membw probe's kernels inside the perf layer: the vector variants of each instruction set
// (membw_avx2.cpp, membw_avx512.cpp, compiled for that instruction set; the SSE2 streaming ones
// in membw_kernels.cpp) behind one table each, and the check every entry point makes.
#pragma once

#include <cstddef>

// Only what the files compiled for one instruction set need: they include nothing whose inline
// functions the rest of the library could end up calling (isa.hpp declares, defines nothing).
#include "compas/base/isa.hpp"

#pragma GCC visibility push(hidden)  // internal to the library

namespace compas::probes::membw_kernels {

// One instruction set's load, store, copy and triad (the signatures of compas::probes::membw's,
// without the instruction set). `nt`: non-temporal stores, then an sfence.
struct KernelSet {
  double (*load)(const double* a, std::size_t n);
  void (*store)(double* a, std::size_t n, double s, bool nt);
  void (*copy)(double* c, const double* a, std::size_t n, bool nt);
  void (*triad)(double* a, const double* b, const double* c, double s, std::size_t n, bool nt);
};

// One instruction set's chunk kernels, the loaded-latency probe's traffic (membw_simd.hpp): acc
// holds 32 doubles, 64-byte aligned; arrays are whole cache lines; streaming stores unfenced.
struct ChunkSet {
  void (*read)(double* acc, const double* a, std::size_t n);
  void (*copy)(double* b, const double* a, std::size_t n);
  void (*store)(double* a, std::size_t n);
};

#if defined(__x86_64__)
extern const KernelSet kAvx2;         // membw_avx2.cpp, run only where AVX2 and FMA are supported
extern const KernelSet kAvx512;       // membw_avx512.cpp, run only where AVX-512F is supported
extern const ChunkSet kSse2Chunks;    // membw_kernels.cpp
extern const ChunkSet kAvx2Chunks;    // membw_avx2.cpp
extern const ChunkSet kAvx512Chunks;  // membw_avx512.cpp
#endif

// Throws std::invalid_argument when this CPU cannot run `isa`'s kernels.
void require_isa(base::Isa isa);

}  // namespace compas::probes::membw_kernels

#pragma GCC visibility pop
