// PrivateMemory: an anonymous mapping; on request and when large, on a 2 MiB boundary and huge
// pages (madvise(MADV_HUGEPAGE)).
#include "private_memory.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "compas/base/size.hpp"
#include "compas/comm/ucx.hpp"

namespace compas::comm::detail {

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

}  // namespace

PrivateMemory::PrivateMemory(std::size_t bytes, bool huge_pages) {
  const bool huge = huge_pages && bytes >= kHugePage;
  const std::size_t length = huge ? bytes + kHugePage : bytes;
  void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw CommError("mapping " + base::format_size(bytes) +
                    " of private memory for a window: " + std::strerror(errno));
  mapping_ = static_cast<std::byte*>(p);
  length_ = length;
  data_ = mapping_;
  if (huge) {
    const auto at = reinterpret_cast<std::uintptr_t>(mapping_);
    data_ = mapping_ + ((kHugePage - at % kHugePage) % kHugePage);
    (void)::madvise(data_, bytes, MADV_HUGEPAGE);  // a hint: 4 KiB pages where refused
  }
}

PrivateMemory::PrivateMemory(PrivateMemory&& other) noexcept
    : mapping_(std::exchange(other.mapping_, nullptr)),
      length_(std::exchange(other.length_, 0)),
      data_(std::exchange(other.data_, nullptr)) {}

PrivateMemory& PrivateMemory::operator=(PrivateMemory&& other) noexcept {
  if (this != &other) {
    release();
    mapping_ = std::exchange(other.mapping_, nullptr);
    length_ = std::exchange(other.length_, 0);
    data_ = std::exchange(other.data_, nullptr);
  }
  return *this;
}

PrivateMemory::~PrivateMemory() {
  release();
}

void PrivateMemory::release() noexcept {
  if (mapping_) ::munmap(mapping_, length_);
  mapping_ = data_ = nullptr;
  length_ = 0;
}

}  // namespace compas::comm::detail
