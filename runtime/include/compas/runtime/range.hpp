// Index ranges of the porting layer: [lo, hi) in global indices, 1-D (Range), 2-D (Range2) and
// 3-D (Range3),
// and their block split over parts (block_of: processes, or the threads of one process).
//
// Every index, size and count of the porting layer is a `compas::index` (signed 64-bit): a loop
// `for (index i = u.lo(); i < u.hi(); ++i) ... u[i - 1] ...` needs no cast, and i - 1 at 0 is -1,
// not a wrap-around. The split is the same block split as Runtime::process_block and
// ThreadCtx::block (the first n % parts parts get one more), so all of them agree.
//
// A size that does not fit an index (Range{INT64_MIN, INT64_MAX}, or a Range2 whose rows times
// columns overflow) throws std::length_error naming the range instead of wrapping.
#pragma once

#include <array>
#include <cstdint>

namespace compas {

using index = std::int64_t;

struct Range;
namespace detail {
// The errors of Range::size() and Range2::size() (runtime/src/range.cpp).
[[noreturn]] void range_too_large(const Range& r);
[[noreturn]] void range2_too_large(const Range& rows, const Range& cols);
// std::out_of_range "<call>: index i is outside the array's domain [lo, hi)".
[[noreturn]] void index_outside(const char* call, index i, const Range& domain);
}  // namespace detail

struct Range {
  index lo = 0, hi = 0;

  constexpr index size() const {
    if (hi <= lo) return 0;
    index n = 0;
    if (__builtin_sub_overflow(hi, lo, &n)) detail::range_too_large(*this);
    return n;
  }
  constexpr bool empty() const { return hi <= lo; }
  constexpr bool contains(index i) const { return lo <= i && i < hi; }
  friend constexpr bool operator==(const Range&, const Range&) = default;
};

struct Range2 {
  Range rows, cols;

  constexpr index size() const {
    index n = 0;
    if (__builtin_mul_overflow(rows.size(), cols.size(), &n)) detail::range2_too_large(rows, cols);
    return n;
  }
  constexpr bool empty() const { return rows.empty() || cols.empty(); }
  constexpr bool contains(index i, index j) const { return rows.contains(i) && cols.contains(j); }
  friend constexpr bool operator==(const Range2&, const Range2&) = default;
};

// A 3-D box: planes (the slowest index) x rows x cols (the fastest, contiguous in memory).
struct Range3 {
  Range planes, rows, cols;

  constexpr const Range& dim(int d) const { return d == 0 ? planes : d == 1 ? rows : cols; }
  constexpr Range& dim(int d) { return d == 0 ? planes : d == 1 ? rows : cols; }
  constexpr index size() const {
    index n = 0;
    if (__builtin_mul_overflow(Range2{rows, cols}.size(), planes.size(), &n))
      detail::range2_too_large(rows, cols);
    return n;
  }
  constexpr bool empty() const { return planes.empty() || rows.empty() || cols.empty(); }
  constexpr bool contains(index i, index j, index k) const {
    return planes.contains(i) && rows.contains(j) && cols.contains(k);
  }
  friend constexpr bool operator==(const Range3&, const Range3&) = default;
};

// The indices both ranges hold: [max of the lo's, min of the hi's), empty (hi == lo) when they do
// not meet. A process's part of an inner region: intersect(u.owned(), {{r, n - r}, {r, n - r}}).
constexpr Range intersect(const Range& a, const Range& b) {
  const index lo = a.lo > b.lo ? a.lo : b.lo, hi = a.hi < b.hi ? a.hi : b.hi;
  return {lo, hi > lo ? hi : lo};
}
constexpr Range2 intersect(const Range2& a, const Range2& b) {
  return {intersect(a.rows, b.rows), intersect(a.cols, b.cols)};
}
constexpr Range3 intersect(const Range3& a, const Range3& b) {
  return {intersect(a.planes, b.planes), intersect(a.rows, b.rows), intersect(a.cols, b.cols)};
}

// Overlapping a halo exchange with computation (begin_exchange(), compute, wait(), compute):
// inner(r, w) is the part of r at least w cells from its sides in every dimension (it needs no
// halo of width w), and rim(r, w) the rest of r as disjoint slabs, some possibly empty (3-D: the
// planes below and above the inner part, then the rows, then the columns of what remains; 2-D:
// rows, then columns). A dimension thinner than 2 w has an empty inner part, and the rim is all of
// r. For w >= 0.
//
//   auto x = u.begin_exchange();
//   sweep(compas::inner(u.owned(), 1));
//   x.wait();
//   for (const compas::Range3& b : compas::rim(u.owned(), 1)) sweep(b);
constexpr Range inner(const Range& r, index w) {
  const index lo = r.hi - r.lo > w ? r.lo + w : r.hi;
  return {lo, r.hi - lo > w ? r.hi - w : lo};
}
constexpr Range2 inner(const Range2& r, index w) {
  return {inner(r.rows, w), inner(r.cols, w)};
}
constexpr Range3 inner(const Range3& r, index w) {
  return {inner(r.planes, w), inner(r.rows, w), inner(r.cols, w)};
}
constexpr std::array<Range2, 4> rim(const Range2& r, index w) {
  const Range2 in = inner(r, w);
  return {{{{r.rows.lo, in.rows.lo}, r.cols},
           {{in.rows.hi, r.rows.hi}, r.cols},
           {in.rows, {r.cols.lo, in.cols.lo}},
           {in.rows, {in.cols.hi, r.cols.hi}}}};
}
constexpr std::array<Range3, 6> rim(const Range3& r, index w) {
  const Range3 in = inner(r, w);
  return {{{{r.planes.lo, in.planes.lo}, r.rows, r.cols},
           {{in.planes.hi, r.planes.hi}, r.rows, r.cols},
           {in.planes, {r.rows.lo, in.rows.lo}, r.cols},
           {in.planes, {in.rows.hi, r.rows.hi}, r.cols},
           {in.planes, in.rows, {r.cols.lo, in.cols.lo}},
           {in.planes, in.rows, {in.cols.hi, r.cols.hi}}}};
}

// Block `part` of `parts` near-equal contiguous blocks of r (the first r.size() % parts blocks get
// one more element): the block split every range of the job uses. parts >= 1, 0 <= part < parts.
// O(1), no communication. (`split` is the group call of group.hpp, MPI_Comm_split.)
constexpr Range block_of(const Range& r, index parts, index part) {
  const index n = r.size(), base = n / parts, extra = n % parts;
  const index lo = r.lo + part * base + (part < extra ? part : extra);
  return {lo, lo + base + (part < extra ? 1 : 0)};
}
// Deprecated (one release): the block of a range is block_of; split is the group call.
[[deprecated("use compas::block_of(range, parts, part)")]] constexpr Range split(const Range& r,
                                                                                 index parts,
                                                                                 index part) {
  return block_of(r, parts, part);
}

// The block of block_of(r, parts, .) that holds i (inside r), with the block sizes worked out
// once: each lookup is one division, none when parts is 1 (for a loop over many indices, such as
// a particle code's destinations). part_holding below is the one-lookup form.
class PartHolding {
 public:
  constexpr PartHolding() = default;
  constexpr PartHolding(const Range& r, index parts)
      : lo_(r.lo),
        base_(r.size() / parts),
        extra_(r.size() % parts),
        wide_(extra_ * (base_ + 1)),
        parts_(parts) {}
  constexpr index operator()(index i) const {  // i inside r
    if (parts_ == 1) return 0;
    const index off = i - lo_;
    return off < wide_ ? off / (base_ + 1) : extra_ + (off - wide_) / base_;
  }

 private:
  index lo_ = 0, base_ = 1, extra_ = 0, wide_ = 0, parts_ = 1;  // the first `extra_` parts have
                                                                // base_ + 1 indices, wide_ in all
};

// The block of block_of(r, parts, .) that holds index i: its inverse, in O(1). i inside r.
constexpr index part_holding(const Range& r, index parts, index i) {
  return PartHolding(r, parts)(i);
}

}  // namespace compas
