// Counts of elements given to the C API (collectives, channels): every call that takes one turns
// it into a size through count_of(), which refuses, before anything moves, a count that no buffer
// can hold: negative, or more bytes than the host has (count * element size overflowing 64 bits
// included).
#pragma once

#include <cstddef>
#include <cstdint>

namespace compas::capi {

// The most bytes one buffer can hold: this host's memory and swap as installed, at most
// PTRDIFF_MAX (the largest object C allows); PTRDIFF_MAX when the host does not tell.
std::uint64_t largest_buffer_bytes() noexcept;

// `count` elements of `elem` bytes at `data` (`what` names it), as a size_t. Throws
// Error(COMPAS_ERR_ARG) naming the count when it is negative or more than largest_buffer_bytes()
// holds, and naming `what` when data is NULL for a count above 0.
std::size_t count_of(std::int64_t count, std::size_t elem, const void* data, const char* what);

}  // namespace compas::capi
