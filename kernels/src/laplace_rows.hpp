// The rows of one Laplace sweep, for laplace.cpp.
#pragma once

#include <cstddef>

namespace compas::kernels::laplace {

// One row of a sweep: out[j] = 0.25 * (above[j] + below[j] + mid[j-1] + mid[j+1]), j = 1..n,
// evaluated in exactly this order in every variant (vector lanes too), so the bits never depend
// on which variant ran. `change` (when not null) gets max |out[j] - mid[j]|. The streaming
// variant writes with non-temporal stores (no read of the destination line: 16 instead of 24
// bytes of memory traffic per point) and must be followed by an sfence before others read.
using RowFn = void (*)(const double*, const double*, const double*, double*, std::size_t, double*);

void row_generic(const double* above, const double* mid, const double* below, double* out,
                 std::size_t n, double* change);

// The row function for this CPU: AVX2 (cached or streaming stores) where it has it, else generic.
RowFn choose_row(bool stream);

#if defined(__x86_64__)
// kRows consecutive rows at once: src points at the row above the first (src + pitch at the
// first row), dst at the first row written. Each of the kRows + 2 source rows is loaded once per
// column block and serves up to three output rows, so only one row in kRows + 2 is re-read from
// the L2 instead of two in three (rows of 8192 doubles do not fit the L1): at n = 8192 on one
// thread 4 rows ran 1.4x faster than 1 with streaming stores. Same expression per point as
// row_avx2, so the same bits. Needs out + 1 32-byte aligned in every row (the padded layout).
inline constexpr int kRows = 4;
void rows_avx2(const double* src, double* dst, std::size_t pitch, std::size_t n, double* change,
               bool stream);
#endif

}  // namespace compas::kernels::laplace
