// count_of: the one check of the element counts the C API takes.
#include "counts.hpp"

#include <sys/sysinfo.h>

#include <string>

#include "compas/base/memory.hpp"
#include "errors.hpp"

namespace compas::capi {
namespace {

constexpr std::uint64_t kLargestObject = PTRDIFF_MAX;

// Installed memory and swap in bytes, 0 when sysinfo does not tell.
std::uint64_t memory_and_swap() noexcept {
  struct sysinfo s {};
  if (sysinfo(&s) != 0) return 0;
  const std::uint64_t units = static_cast<std::uint64_t>(s.totalram) + s.totalswap;
  const std::uint64_t unit = s.mem_unit != 0 ? s.mem_unit : 1;
  return units > kLargestObject / unit ? kLargestObject : units * unit;
}

// What bounds a buffer of `bytes`, for the message.
std::string bound_text(std::uint64_t bytes) {
  if (bytes == kLargestObject) return "no object is larger than PTRDIFF_MAX bytes";
  return "this host's memory and swap are " + base::bytes_text(bytes);
}

}  // namespace

std::uint64_t largest_buffer_bytes() noexcept {
  static const std::uint64_t bytes = [] {
    const std::uint64_t host = memory_and_swap();
    return host != 0 && host < kLargestObject ? host : kLargestObject;
  }();
  return bytes;
}

std::size_t count_of(std::int64_t count, std::size_t elem, const void* data, const char* what) {
  if (count < 0)
    throw Error(COMPAS_ERR_ARG, "count " + std::to_string(count) + " is negative: 0 or more");
  const std::uint64_t most = largest_buffer_bytes() / elem;
  if (static_cast<std::uint64_t>(count) > most)
    throw Error(COMPAS_ERR_ARG, "count " + std::to_string(count) + " of " + std::to_string(elem) +
                                    "-byte elements is more than a buffer can hold: at most " +
                                    std::to_string(most) + " of them (" +
                                    bound_text(largest_buffer_bytes()) + ")");
  if (count > 0) need(data, what);
  return static_cast<std::size_t>(count);
}

}  // namespace compas::capi
