// The errors of Range::size() and Range2::size() (a size that an index cannot hold), and of an
// index outside an array's domain.
#include "compas/runtime/range.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace compas::detail {

namespace {

std::string text(const Range& r) {
  return "[" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + ")";
}

// hi - lo without overflow (hi > lo): the count as an unsigned number.
std::uint64_t count(const Range& r) {
  return static_cast<std::uint64_t>(r.hi) - static_cast<std::uint64_t>(r.lo);
}

}  // namespace

void range_too_large(const Range& r) {
  throw std::length_error("Range " + text(r) + " holds " + std::to_string(count(r)) +
                          " indices, more than an index (int64) counts: at most " +
                          std::to_string(INT64_MAX));
}

void index_outside(const char* call, index i, const Range& domain) {
  throw std::out_of_range(std::string(call) + ": index " + std::to_string(i) +
                          " is outside the array's domain " + text(domain));
}

void range2_too_large(const Range& rows, const Range& cols) {
  throw std::length_error("Range2 " + text(rows) + " x " + text(cols) + " holds " +
                          std::to_string(count(rows)) + " x " + std::to_string(count(cols)) +
                          " indices, more than an index (int64) counts: at most " +
                          std::to_string(INT64_MAX));
}

}  // namespace compas::detail
