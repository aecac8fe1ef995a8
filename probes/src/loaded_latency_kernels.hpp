// The traffic kernels of the loaded-latency probe: one chunk of reading, copying or streaming
// stores per call, on the instruction set asked for. The vector ones are membw's chunk kernels
// (membw_simd.hpp, one table per instruction set in membw_kernels.hpp); without a vector
// instruction set, plain loops. Chunks are whole 64-byte lines, 64-byte aligned; the read sums
// stay in `acc` across chunks; streaming stores are not fenced: the loop fences once, when the
// traffic stops (fence_streams()).
#pragma once

#include <cstddef>

#include "compas/base/isa.hpp"

// Hidden: called directly inside the library, not through the PLT.
#pragma GCC visibility push(hidden)

namespace compas::probes::loaded_latency_kernels {

struct alignas(64) ReadSums {
  double v[32] = {};
};

void read_chunk(base::Isa isa, ReadSums& acc, const double* a, std::size_t n);
void copy_chunk(base::Isa isa, double* b, const double* a, std::size_t n);
void store_chunk(base::Isa isa, double* a, std::size_t n);
// Orders the streaming stores before what follows (an sfence on x86-64).
void fence_streams();

}  // namespace compas::probes::loaded_latency_kernels

#pragma GCC visibility pop
