// A window's memory when its process is alone on its host (every process at P = 1, one process per
// node on a cluster): nobody reaches it by load/store, so it need not be a shared-memory segment.
// Anonymous private memory instead: no /dev/shm file (nor its size limit). On request
// (COMPAS_HUGE_PAGES=1), transparent huge pages where it spans 2 MiB: measured at 1 x 2, PRK's
// nstream and stencil ran 35% and 65% faster and random 5-10%, but NAS MG's V-cycle 45-70%
// slower (0.72 s -> 1.07-1.19 s), so they are not the default. Processes sharing a host keep UCX's
// shared segment.
#pragma once

#include <cstddef>

namespace compas::comm::detail {

class PrivateMemory {
 public:
  PrivateMemory() = default;
  // Maps `bytes` (> 0) of zeroed private memory, page-aligned. With `huge`, a mapping of 2 MiB or
  // more starts on a 2 MiB boundary and asks for huge pages (madvise; refused quietly where the
  // kernel has none).
  // Throws CommError naming the size and the system's reason when mmap fails.
  PrivateMemory(std::size_t bytes, bool huge);
  PrivateMemory(PrivateMemory&& other) noexcept;
  PrivateMemory& operator=(PrivateMemory&& other) noexcept;
  PrivateMemory(const PrivateMemory&) = delete;
  PrivateMemory& operator=(const PrivateMemory&) = delete;
  ~PrivateMemory();

  std::byte* data() const { return data_; }  // nullptr when default-made

 private:
  void release() noexcept;
  std::byte* mapping_ = nullptr;  // what mmap returned, and its length
  std::size_t length_ = 0;
  std::byte* data_ = nullptr;  // the aligned start inside it
};

}  // namespace compas::comm::detail
