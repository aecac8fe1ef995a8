// Internal to gemm_local: the per-ISA micro-kernels and packing routines behind one table. Each
// ISA lives in its own source file whose functions carry the ISA as a target attribute and have
// internal linkage, so no ISA-specific code can be merged into a generic caller.
#pragma once

#include <cstddef>
#include <cstring>

namespace compas::kernels::gemm::detail {

// Full mr x nr tile: c[i * ldc + j] = (overwrite ? 0 : c[i * ldc + j]) + sum over p < kc of
// a[p * mr + i] * b[p * nr + j]. a is one packed A micro-panel, b one packed B micro-panel.
using MicroKernel = void (*)(std::size_t kc, const double* a, const double* b, double* c,
                             std::size_t ldc, bool overwrite);
// The same for a partial tile (rows <= mr, cols <= nr): only that corner of c is read or written.
using EdgeKernel = void (*)(std::size_t rows, std::size_t cols, std::size_t kc, const double* a,
                            const double* b, double* c, std::size_t ldc, bool overwrite);
// One A micro-panel from rows x kc of A (rows <= mr; missing rows packed as zeros):
// out[p * mr + i] = a[i * lda + p].
using PackA = void (*)(std::size_t rows, std::size_t kc, const double* a, std::size_t lda,
                       double* out);
// A B block of kc x cols (any cols) as ceil(cols / nr) micro-panels of kc x nr each (missing
// columns packed as zeros): panel q holds out[q * kc * nr + p * nr + j] = b[p * ldb + q * nr + j].
using PackB = void (*)(std::size_t kc, std::size_t cols, const double* b, std::size_t ldb,
                       double* out);

struct KernelSet {
  std::size_t mr, nr;
  MicroKernel full;
  EdgeKernel edge;
  PackA pack_a;
  PackB pack_b;
};

// Portable packing, used by every ISA (the copies vectorise well enough, and packing is O(mk + kn)
// against the O(mnk) of the micro-kernel).
template <std::size_t MR>
void pack_a(std::size_t rows, std::size_t kc, const double* a, std::size_t lda, double* out) {
  if (rows == MR) {
    const double* r[MR];
    for (std::size_t i = 0; i < MR; ++i) r[i] = a + i * lda;
    for (std::size_t p = 0; p < kc; ++p, out += MR)
      for (std::size_t i = 0; i < MR; ++i) out[i] = r[i][p];
    return;
  }
  for (std::size_t p = 0; p < kc; ++p, out += MR) {
    for (std::size_t i = 0; i < rows; ++i) out[i] = a[i * lda + p];
    for (std::size_t i = rows; i < MR; ++i) out[i] = 0.0;
  }
}

template <std::size_t NR>
void pack_b(std::size_t kc, std::size_t cols, const double* b, std::size_t ldb, double* out) {
  for (std::size_t q = 0; q < cols; q += NR) {
    const std::size_t w = cols - q < NR ? cols - q : NR;
    const double* src = b + q;
    if (w == NR) {
      for (std::size_t p = 0; p < kc; ++p, out += NR, src += ldb)
        std::memcpy(out, src, sizeof(double) * NR);
    } else {
      for (std::size_t p = 0; p < kc; ++p, out += NR, src += ldb) {
        std::memcpy(out, src, sizeof(double) * w);
        for (std::size_t j = w; j < NR; ++j) out[j] = 0.0;
      }
    }
  }
}

// Edge tile through a scratch tile: the full kernel on zero-padded panels, then the corner.
template <std::size_t MR, std::size_t NR, MicroKernel Full>
void edge_via_scratch(std::size_t rows, std::size_t cols, std::size_t kc, const double* a,
                      const double* b, double* c, std::size_t ldc, bool overwrite) {
  alignas(64) double t[MR * NR];
  Full(kc, a, b, t, NR, true);
  for (std::size_t i = 0; i < rows; ++i) {
    double* ci = c + i * ldc;
    const double* ti = t + i * NR;
    if (overwrite)
      for (std::size_t j = 0; j < cols; ++j) ci[j] = ti[j];
    else
      for (std::size_t j = 0; j < cols; ++j) ci[j] += ti[j];
  }
}

const KernelSet& generic_kernels();
// Only to be called when the CPU supports the ISA.
const KernelSet& avx2_kernels();
const KernelSet& avx512_kernels();
// Whether the ISA's file was compiled with its kernels (x86-64 with GCC or Clang).
bool have_avx2_kernels();
bool have_avx512_kernels();

}  // namespace compas::kernels::gemm::detail
