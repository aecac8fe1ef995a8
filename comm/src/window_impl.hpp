// WindowImpl and what the window sources share: where a window lies in its registered
// memory (Layout), what is known of each peer's window (Peer), and the range and signal checks.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "compas/base/memory.hpp"
#include "compas/base/pages.hpp"
#include "compas/comm/ucx.hpp"
#include "compas/comm/window.hpp"
#include "internals.hpp"
#include "private_memory.hpp"

namespace compas::comm {

namespace detail {

using base::kLine;
using base::round_up;

// Where one process's window lies in its registered memory: data, then (a line further at most)
// the signal words, then the sleeper count and the freed word on lines of their own. Each
// process has its own, since sizes may differ between processes.
struct Layout {
  std::size_t bytes = 0, signals = 0;
  std::size_t data_bytes = 0;    // bytes rounded up to a line
  std::size_t signal_bytes = 0;  // signals * 8 rounded up to a line
  std::size_t total = 0;

  static Layout of(std::size_t bytes, std::size_t signals) {
    Layout l;
    l.bytes = bytes;
    l.signals = signals;
    l.data_bytes = round_up(bytes, kLine, "window data");
    l.signal_bytes =
        round_up(detail::checked_bytes(signals, 8, "window signals"), kLine, "window signals");
    if (l.signal_bytes > SIZE_MAX - 2 * kLine - l.data_bytes)
      throw std::length_error("window of " + std::to_string(bytes) + " bytes and " +
                              std::to_string(signals) + " signals does not fit in memory");
    l.total = l.data_bytes + l.signal_bytes + 2 * kLine;
    return l;
  }
  std::uint64_t* signal(std::byte* base, std::size_t i) const {
    return reinterpret_cast<std::uint64_t*>(base + data_bytes) + i;
  }
  // How many threads sleep on a signal of this window (futex): of the owning process, and of
  // same-host processes waiting on it by load/store (direct_wait_until).
  std::uint32_t* waiters(std::byte* base) const {
    return reinterpret_cast<std::uint32_t*>(base + data_bytes + signal_bytes);
  }
  // Non-zero once the owner let the window go without meeting everyone: load/store peers read
  // it (a line of its own, written once) before each operation; others learn by message.
  std::atomic<std::uint32_t>* freed_word(std::byte* base) const {
    return reinterpret_cast<std::atomic<std::uint32_t>*>(base + data_bytes + signal_bytes + kLine);
  }
};

struct Peer {
  std::atomic<bool> ready{false};
  Layout layout;            // its sizes (from the key exchange)
  std::uint64_t raddr = 0;  // remote base address
  std::string packed;       // its packed rkey
  ucp_rkey_h rkey = nullptr;
  std::byte* direct = nullptr;  // mapped base, when load/store reaches it
  // The owner let this window go without meeting this process (kWindowFreedAm): operations on
  // it fail here, at the initiator.
  std::atomic<bool> freed{false};
};

inline std::uint32_t* low_half(std::uint64_t* word) {
  return reinterpret_cast<std::uint32_t*>(word);  // little-endian: the low half comes first
}

[[noreturn]] inline void out_of_window(const char* op, int rank, std::size_t offset, std::size_t n,
                                       std::size_t bytes) {
  throw std::out_of_range(std::string(op) + " to rank " + std::to_string(rank) +
                          " at byte offset " + std::to_string(offset) + " of " + std::to_string(n) +
                          " bytes is outside its window (" + std::to_string(bytes) + " bytes)");
}

inline void check_range(const char* op, int rank, std::size_t offset, std::size_t n,
                        std::size_t bytes) {
  if (offset > bytes || n > bytes - offset) out_of_window(op, rank, offset, n, bytes);
}

inline void check_signal(const char* op, std::size_t index, std::size_t signals) {
  if (index >= signals)
    throw std::out_of_range(std::string(op) + ": signal " + std::to_string(index) +
                            " does not exist (the window has " + std::to_string(signals) +
                            " signals)");
}

inline void check_signal(const char* op, int rank, std::size_t index, std::size_t signals) {
  if (index >= signals)
    throw std::out_of_range(std::string(op) + " to rank " + std::to_string(rank) + ": signal " +
                            std::to_string(index) + " does not exist (its window has " +
                            std::to_string(signals) + " signals)");
}

// Collective (the bootstrap's allgather), before anything is mapped: throws the same CommError on
// every process when the processes of some host ask more together (`total`: this process's
// registered bytes) than the smallest of what their host can give them (base::memory_limit for
// a shared mapping: the memory available, the memory cgroup's limit less what is in use there,
// /dev/shm's free space).
// `mapping`: what this process maps (private when it is alone on its host, shared otherwise).
void agree_window_memory(Comm& comm, std::size_t total, base::Mapping mapping);

}  // namespace detail

struct WindowBytes::Impl {
  CommImpl* comm = nullptr;
  ucp_mem_h memh = nullptr;
  detail::PrivateMemory memory;  // the registered memory when this process is alone on its host
  detail::Layout own;            // this process's sizes
  std::unique_ptr<detail::Peer[]> peers;
  int size = 0;  // processes in the job: peers[0 .. size - 1]
  std::mutex mu;
  std::uint32_t id = 0;  // index in the Comm's window table
  std::byte* base = nullptr;

  // The fast path of an operation on bytes [offset, offset + n) of `rank`'s window (put, get,
  // the atomics): every check that peer() and layout() make, inline, for a peer reached by
  // load/store. It returns the peer when the rank is in the job, the peer resolved (same-host
  // peers are, from creation on) and mapped here, neither freed flag raised and the range inside
  // the peer's window; otherwise nullptr, and the caller takes the full path, which makes the
  // checks again and throws the error that names what failed. No call, no string: a cold branch.
  detail::Peer* direct_peer(int rank, std::size_t offset, std::size_t n) noexcept {
    if (static_cast<unsigned>(rank) >= static_cast<unsigned>(size)) [[unlikely]]
      return nullptr;
    detail::Peer& p = peers[rank];
    if (!p.ready.load(std::memory_order_acquire) || p.direct == nullptr) [[unlikely]]
      return nullptr;
    const std::size_t bytes = p.layout.bytes;
    if (offset > bytes || n > bytes - offset) [[unlikely]]
      return nullptr;
    if (p.freed.load(std::memory_order_relaxed) ||
        p.layout.freed_word(p.direct)->load(std::memory_order_acquire) != 0) [[unlikely]]
      return nullptr;
    return &p;
  }
  detail::Peer& peer(int rank, WindowBytes& w);
  // Unpacks every same-host peer's key (at creation: see window.cpp).
  void resolve_same_host_peers(WindowBytes& w);
  // `rank`'s sizes, known from creation on; std::out_of_range for a rank outside the job.
  const detail::Layout& layout(int rank) const;
  [[noreturn]] void throw_freed(int rank) const;
};

}  // namespace compas::comm
