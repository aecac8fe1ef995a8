// Serial references for the grouping of the process collectives that take a caller's operator
// (ProcessCollectives::allreduce / exclusive_scan with a function, and so the Runtime's hybrid
// reductions): what they must compute, bit for bit, from every process's value. Written from the
// documented scheme, not from the implementation: the processes beyond the largest power of two
// p2 <= P fold into their neighbours (2v with 2v + 1 for v < P - p2), the p2 partials then
// combine pairwise, level by level; a scan's rank r puts the partials of the aligned blocks
// below it in front, nearest last. Header-only.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace compas::test {

// f over x[b .. b + m) (m a power of two) as recursive doubling groups it: halves, then f.
template <class T, class F>
T doubling_block(const std::vector<T>& x, std::size_t b, std::size_t m, F f) {
  if (m == 1) return x[b];
  return f(doubling_block(x, b, m / 2, f), doubling_block(x, b + m / 2, m / 2, f));
}

// The allreduce of x (one value per rank, x.size() >= 1).
template <class T, class F>
T doubling_allreduce(const std::vector<T>& x, F f) {
  std::size_t p2 = 1;
  while (p2 * 2 <= x.size()) p2 *= 2;
  const std::size_t rem = x.size() - p2;
  std::vector<T> v;
  for (std::size_t i = 0; i < p2; ++i)
    v.push_back(i < rem ? f(x[2 * i], x[2 * i + 1]) : x[i + rem]);
  return doubling_block(v, 0, p2, f);
}

// The exclusive scan at rank r (nothing at rank 0): for every bit m of r from the lowest, the
// block of m ranks just below r's block of 2m goes in front of what was gathered so far.
template <class T, class F>
std::optional<T> doubling_exclusive_scan(const std::vector<T>& x, std::size_t r, F f) {
  std::optional<T> before;
  for (std::size_t m = 1; m <= r; m <<= 1) {
    if (!(r & m)) continue;
    const T block = doubling_block(x, r & ~(2 * m - 1), m, f);
    before = before ? f(block, *before) : block;
  }
  return before;
}

}  // namespace compas::test
