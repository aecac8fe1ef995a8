// Index ranges of the porting layer: [lo, hi) in global indices, 1-D (Range) and 2-D (Range2),
// and their block split over parts (processes, or the threads of one process).
//
// Every index, size and count of the porting layer is a `compas::index` (signed 64-bit): a loop
// `for (index i = u.lo(); i < u.hi(); ++i) ... u[i - 1] ...` needs no cast, and i - 1 at 0 is -1,
// not a wrap-around. The split is the same block split as Runtime::process_block and
// ThreadCtx::block (the first n % parts parts get one more), so all of them agree.
#pragma once

#include <cstdint>

namespace compas {

using index = std::int64_t;

struct Range {
  index lo = 0, hi = 0;

  constexpr index size() const { return hi > lo ? hi - lo : 0; }
  constexpr bool empty() const { return hi <= lo; }
  constexpr bool contains(index i) const { return lo <= i && i < hi; }
  friend constexpr bool operator==(const Range&, const Range&) = default;
};

struct Range2 {
  Range rows, cols;

  constexpr index size() const { return rows.size() * cols.size(); }
  constexpr bool empty() const { return rows.empty() || cols.empty(); }
  constexpr bool contains(index i, index j) const { return rows.contains(i) && cols.contains(j); }
  friend constexpr bool operator==(const Range2&, const Range2&) = default;
};

// Part `part` of `parts` near-equal contiguous blocks of r (the first r.size() % parts blocks get
// one more element). parts >= 1, 0 <= part < parts.
constexpr Range split(const Range& r, index parts, index part) {
  const index n = r.size(), base = n / parts, extra = n % parts;
  const index lo = r.lo + part * base + (part < extra ? part : extra);
  return {lo, lo + base + (part < extra ? 1 : 0)};
}

}  // namespace compas
