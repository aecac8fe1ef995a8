// Memory granules and the buffers that use them, written once for every layer: the cache line,
// the transparent huge page, rounding up to either, anonymous huge-page-aligned mappings (the
// probes' buffers, which must not mix page sizes inside what they time) and huge-page-aligned
// heap buffers (the kernels' packing and key buffers, small ones page-aligned).
#pragma once

#include <cstddef>
#include <memory>

namespace compas::base {

inline constexpr std::size_t kLine = 64;                        // a cache line, bytes
inline constexpr std::size_t kHugePage = std::size_t{2} << 20;  // a transparent huge page (2 MiB)
inline constexpr std::size_t kPage = 4096;                      // a base page

// n rounded up to a multiple of `to` (> 0). Throws std::length_error "<what>: N bytes do not fit
// in memory" when the result does not fit in a size_t.
std::size_t round_up(std::size_t n, std::size_t to, const char* what = "size");

// Anonymous private memory of at least `bytes` (rounded up to kHugePage), its start kHugePage-
// aligned, with transparent huge pages asked for (madvise MADV_HUGEPAGE) when `huge`; untouched
// until first use, unmapped at the end. Throws std::runtime_error naming `what` and the size when
// it cannot be mapped.
class HugePageMapping {
 public:
  HugePageMapping(std::size_t bytes, bool huge, const char* what);
  ~HugePageMapping();
  HugePageMapping(HugePageMapping&& o) noexcept;
  HugePageMapping& operator=(HugePageMapping&& o) noexcept;
  HugePageMapping(const HugePageMapping&) = delete;
  HugePageMapping& operator=(const HugePageMapping&) = delete;

  char* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  bool advised() const { return advised_; }  // the kernel took the huge-page hint

 private:
  void* raw_ = nullptr;
  std::size_t raw_bytes_ = 0, bytes_ = 0;
  char* data_ = nullptr;
  bool advised_ = false;
};

struct FreeDeleter {
  void operator()(void* p) const noexcept;
};
using AlignedBytes = std::unique_ptr<void, FreeDeleter>;

// Heap memory for at least `bytes` (> 0): from kHugePage on, kHugePage-aligned and rounded to
// it with the huge-page hint; below, kPage-aligned and rounded to it. `*size` receives the size
// allocated. Throws std::bad_alloc.
AlignedBytes huge_aligned_alloc(std::size_t bytes, std::size_t* size);

}  // namespace compas::base
