// gemm_local: the portable micro-kernel (4 x 8 in plain C++; the compiler vectorises the
// columns with whatever the baseline ISA offers).
#include <cstddef>

#include "gemm_local_kernels.hpp"

namespace compas::kernels::gemm::detail {
namespace {

constexpr std::size_t kMr = 4, kNr = 8;

void kernel_generic(std::size_t kc, const double* __restrict a, const double* __restrict b,
                    double* __restrict c, std::size_t ldc, bool overwrite) {
  double acc[kMr][kNr] = {};
  for (std::size_t p = 0; p < kc; ++p, a += kMr, b += kNr) {
#pragma GCC unroll 4
    for (std::size_t i = 0; i < kMr; ++i) {
      const double ai = a[i];
#pragma GCC unroll 8
      for (std::size_t j = 0; j < kNr; ++j) acc[i][j] += ai * b[j];
    }
  }
  for (std::size_t i = 0; i < kMr; ++i, c += ldc) {
    if (overwrite)
      for (std::size_t j = 0; j < kNr; ++j) c[j] = acc[i][j];
    else
      for (std::size_t j = 0; j < kNr; ++j) c[j] += acc[i][j];
  }
}

}  // namespace

const KernelSet& generic_kernels() {
  static const KernelSet set{
      kMr,          kNr,         &kernel_generic, &edge_via_scratch<kMr, kNr, &kernel_generic>,
      &pack_a<kMr>, &pack_b<kNr>};
  return set;
}

}  // namespace compas::kernels::gemm::detail
