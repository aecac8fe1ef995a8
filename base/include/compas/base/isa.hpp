// The x86-64 instruction sets compas's kernels are compiled for, and whether this CPU runs them:
// the one place that asks the CPU (the kernels' dispatch and the probes' --isa read it here).
#pragma once

namespace compas::base {

enum class Isa { generic, sse2, avx2, avx512 };

// "generic", "sse2", "avx2", "avx512".
const char* to_string(Isa isa);

// Whether this CPU (and its OS) runs code compiled for `isa`: generic always; sse2 on every
// x86-64; avx2 with FMA (the kernels compiled for AVX2 use both); avx512 with AVX-512F. Asked
// once, then cached. Off x86-64 only generic.
bool cpu_runs(Isa isa);

}  // namespace compas::base
