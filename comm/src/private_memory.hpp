// A window's memory when its process is alone on its host (every process at P = 1, one process per
// node on a cluster): nobody reaches it by load/store, so it need not be a shared-memory segment.
// Anonymous private memory instead: no /dev/shm file, and transparent huge pages where it spans
// 2 MiB (random access over a table of several MiB then misses the TLB far less; measured here,
// 2 threads xor-ing an 8 MiB table: 0.26 against 0.23 GUPS with atomics, 0.44-0.48 against
// 0.32-0.40 without). Processes sharing a host keep UCX's shared segment.
#pragma once

#include <cstddef>

namespace compas::comm::detail {

class PrivateMemory {
 public:
  PrivateMemory() = default;
  // Maps `bytes` (> 0) of zeroed private memory; a mapping of 2 MiB or more starts on a 2 MiB
  // boundary and asks for huge pages (madvise; refused quietly where the kernel has none).
  // Throws CommError naming the size and the system's reason when mmap fails.
  explicit PrivateMemory(std::size_t bytes);
  PrivateMemory(PrivateMemory&& other) noexcept;
  PrivateMemory& operator=(PrivateMemory&& other) noexcept;
  PrivateMemory(const PrivateMemory&) = delete;
  PrivateMemory& operator=(const PrivateMemory&) = delete;
  ~PrivateMemory();

  std::byte* data() const { return data_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  void release() noexcept;
  std::byte* mapping_ = nullptr;  // what mmap returned, and its length
  std::size_t length_ = 0;
  std::byte* data_ = nullptr;  // the aligned start inside it
};

}  // namespace compas::comm::detail
