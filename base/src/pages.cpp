#include "compas/base/pages.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "compas/base/size.hpp"

namespace compas::base {

std::size_t round_up(std::size_t n, std::size_t to, const char* what) {
  const std::size_t rest = n % to;
  if (rest == 0) return n;
  if (n > SIZE_MAX - (to - rest))
    throw std::length_error(std::string(what) + ": " + std::to_string(n) +
                            " bytes do not fit in memory");
  return n + (to - rest);
}

HugePageMapping::HugePageMapping(std::size_t bytes, bool huge, const char* what)
    : bytes_(round_up(bytes, kHugePage, what)) {
  if (bytes_ > SIZE_MAX - kHugePage)
    throw std::length_error(std::string(what) + ": " + std::to_string(bytes) +
                            " bytes do not fit in memory");
  raw_bytes_ = bytes_ + kHugePage;  // room to align the start
  raw_ = ::mmap(nullptr, raw_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw_ == MAP_FAILED) {
    raw_ = nullptr;
    throw std::runtime_error(std::string(what) + ": cannot map " + format_size(raw_bytes_) + ": " +
                             std::strerror(errno));
  }
  data_ =
      reinterpret_cast<char*>(round_up(reinterpret_cast<std::uintptr_t>(raw_), kHugePage, what));
#ifdef MADV_HUGEPAGE
  if (huge) advised_ = ::madvise(data_, bytes_, MADV_HUGEPAGE) == 0;
#else
  (void)huge;
#endif
}

HugePageMapping::~HugePageMapping() {
  if (raw_) ::munmap(raw_, raw_bytes_);
}

HugePageMapping::HugePageMapping(HugePageMapping&& o) noexcept
    : raw_(std::exchange(o.raw_, nullptr)),
      raw_bytes_(std::exchange(o.raw_bytes_, 0)),
      bytes_(std::exchange(o.bytes_, 0)),
      data_(std::exchange(o.data_, nullptr)),
      advised_(std::exchange(o.advised_, false)) {}

HugePageMapping& HugePageMapping::operator=(HugePageMapping&& o) noexcept {
  if (this != &o) {
    if (raw_) ::munmap(raw_, raw_bytes_);
    raw_ = std::exchange(o.raw_, nullptr);
    raw_bytes_ = std::exchange(o.raw_bytes_, 0);
    bytes_ = std::exchange(o.bytes_, 0);
    data_ = std::exchange(o.data_, nullptr);
    advised_ = std::exchange(o.advised_, false);
  }
  return *this;
}

void FreeDeleter::operator()(void* p) const noexcept {
  std::free(p);
}

AlignedBytes huge_aligned_alloc(std::size_t bytes, std::size_t* size) {
  const std::size_t align = bytes >= kHugePage ? kHugePage : kPage;
  std::size_t n = 0;
  try {
    n = round_up(bytes == 0 ? 1 : bytes, align, "huge_aligned_alloc");
  } catch (const std::length_error&) {
    throw std::bad_alloc();
  }
  void* p = std::aligned_alloc(align, n);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (align == kHugePage) ::madvise(p, n, MADV_HUGEPAGE);
#endif
  if (size) *size = n;
  return AlignedBytes(p);
}

}  // namespace compas::base
