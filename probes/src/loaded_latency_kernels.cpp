// The traffic kernels of the loaded-latency probe. See loaded_latency_kernels.hpp.
#include "loaded_latency_kernels.hpp"

#include <algorithm>
#include <cstring>

#include "membw_kernels.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace compas::probes::loaded_latency_kernels {

namespace {

// The vector chunk kernels of `isa`, null for the generic instruction set.
const membw_kernels::ChunkSet* chunks(base::Isa isa) {
#if defined(__x86_64__)
  if (isa == base::Isa::avx512) return &membw_kernels::kAvx512Chunks;
  if (isa == base::Isa::avx2) return &membw_kernels::kAvx2Chunks;
  if (isa == base::Isa::sse2) return &membw_kernels::kSse2Chunks;
#endif
  (void)isa;
  return nullptr;
}

}  // namespace

void read_chunk(base::Isa isa, ReadSums& acc, const double* a, std::size_t n) {
  if (const auto* k = chunks(isa)) return k->read(acc.v, a, n);
  for (std::size_t i = 0; i < n; i += 8)
    for (int k = 0; k < 8; ++k) acc.v[k] += a[i + static_cast<std::size_t>(k)];
}

void copy_chunk(base::Isa isa, double* b, const double* a, std::size_t n) {
  if (const auto* k = chunks(isa)) return k->copy(b, a, n);
  std::memcpy(b, a, n * 8);
}

void store_chunk(base::Isa isa, double* a, std::size_t n) {
  if (const auto* k = chunks(isa)) return k->store(a, n);
  std::fill(a, a + n, 1.0);
}

void fence_streams() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

}  // namespace compas::probes::loaded_latency_kernels
