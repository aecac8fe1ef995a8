// Window<T>: a symmetric allocation. Every process of the job allocates `count` elements of T
// collectively (registered with UCX, ucp_mem_map); remote keys are exchanged at creation, so any
// process can then read and write any other's elements by (rank, element offset) without the
// target taking part: put, get, atomics, and put_signal, which delivers data and then bumps one
// of the target's 64-bit signal words, in that order, so the target's wait_until(signal >= v)
// sees the data (the halo-exchange building block).
//
// Every remote access is bounds-checked at the initiator: an access outside the target's window
// throws std::out_of_range and touches nothing. Processes may create a window with different sizes
// and signal counts (as MPI_Win_create allows): the sizes are exchanged at creation and each
// access is checked against its target's own, never the caller's (bytes(rank), signals(rank)).
// Sizes whose byte count does not fit a size_t throw std::length_error. Memory: a process that
// shares its host with others of the job maps its window as a shared-memory segment UCX allocates;
// a process alone on its host (every process at P = 1) maps private memory instead (no /dev/shm
// file), with COMPAS_HUGE_PAGES=1 on transparent huge pages where it spans 2 MiB (madvise;
// streaming and random access gain, some stencil codes lose: measure). Before anything is mapped,
// the processes check together that each host can give what its processes ask (the sum of their
// windows against base::memory_limit for the mapping each makes: the memory available, the memory
// cgroup's limit less what is in use there, and for a shared one /dev/shm's free space): otherwise
// every process throws the same CommError naming the sizes and the limit, and none has allocated
// anything. Peers on the same host whose memory UCX can map are accessed by direct load/store
// (memcpy, CPU atomics); others by UCX RMA.
//
// Completion: a blocking put returns when the source may be reused; the data is guaranteed to be
// in the target's memory after flush(rank) / flush_all(), or when the target sees a later
// put_signal's signal. A blocking get returns with the data. The *_nb forms return a Request.
//
// Creation and destruction are collective (same order on every process). Destruction completes
// this process's outstanding operations on the window (their Requests then finish normally), and
// waits until every process has finished with it. If some process does not come within
// COMPAS_TIMEOUT (or the job is already failing), the window is "freed while in use": its memory
// stays registered until the Comm ends, so late operations never write freed memory, and every
// peer's next operation on it throws CommError at the initiator, naming the owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "compas/comm/ucx.hpp"

namespace compas::comm {

// What a new window's data holds. `zero`: all zero. `none`: unspecified, and no page of it is
// touched by the constructor, so the threads that first write it place it (first touch: on a
// multi-socket node each thread's rows land on its own socket). A caller choosing `none`
// writes every element before anyone reads it.
enum class Fill { zero, none };

// The untyped window; Window<T> is a typed view of it.
// The operations of WindowBytes::atomic_update: x op= value.
enum class AtomicOp { add, bit_and, bit_or, bit_xor };

class WindowBytes {
 public:
  // Collective. `signals` 64-bit signal words live beside the data (all zero at creation, whatever
  // `fill` says).
  WindowBytes(Comm& comm, std::size_t bytes, std::size_t signals = 64, Fill fill = Fill::zero);
  ~WindowBytes();
  WindowBytes(const WindowBytes&) = delete;
  WindowBytes& operator=(const WindowBytes&) = delete;

  Comm& comm() { return *comm_; }
  std::size_t bytes() const { return bytes_; }
  std::size_t signals() const { return signals_; }
  // `rank`'s data bytes and signal count (std::out_of_range for a rank outside the job).
  std::size_t bytes(int rank) const;
  std::size_t signals(int rank) const;
  std::byte* local() { return base_; }
  const std::byte* local() const { return base_; }
  // True when `rank`'s window is reached by load/store (same host and mappable, or self).
  bool direct(int rank);
  // `rank`'s window data mapped here, for loads and stores (nullptr unless direct(rank)). Reading
  // it races with the owner's writes unless the two are ordered, by a barrier or a signal.
  std::byte* peer_data(int rank);

  void put(int rank, std::size_t offset, const void* src, std::size_t n);
  Request put_nb(int rank, std::size_t offset, const void* src, std::size_t n);
  void get(int rank, std::size_t offset, void* dst, std::size_t n);
  Request get_nb(int rank, std::size_t offset, void* dst, std::size_t n);
  // put, then (ordered after it) signal[signal] += add at the target.
  void put_signal(int rank, std::size_t offset, const void* src, std::size_t n, std::size_t signal,
                  std::uint64_t add = 1);
  // Non-blocking: returns once the signal is ordered after the data; the Request completes when
  // `src` may be reused.
  Request put_signal_nb(int rank, std::size_t offset, const void* src, std::size_t n,
                        std::size_t signal, std::uint64_t add = 1);
  void signal_add(int rank, std::size_t signal, std::uint64_t add = 1);

  // 4- or 8-byte atomics on the window's data at a byte offset aligned to the width.
  std::uint64_t fetch_add(int rank, std::size_t offset, std::uint64_t value, std::size_t width);
  // Writes `desired` if the current value equals `expected`; returns the value found.
  std::uint64_t compare_swap(int rank, std::size_t offset, std::uint64_t expected,
                             std::uint64_t desired, std::size_t width);
  // Non-blocking forms: the value found is written to `result` (width bytes) when the Request
  // completes; `result` must stay valid until then.
  Request fetch_add_nb(int rank, std::size_t offset, std::uint64_t value, std::size_t width,
                       void* result);
  Request compare_swap_nb(int rank, std::size_t offset, std::uint64_t expected,
                          std::uint64_t desired, std::size_t width, void* result);
  // A 4- or 8-byte atomic update that returns nothing (an atomic post, as shmem_atomic_xor):
  // done at once where load/store reaches the peer, else posted over UCX. Complete at the peer
  // after flush(rank), flush_all() or a barrier. Safe from several threads at once.
  void atomic_update(int rank, std::size_t offset, AtomicOp op, std::uint64_t value,
                     std::size_t width);

  // This process's signal word (acquire load), and the wait for it. `from_rank` (or -1) names the
  // process expected to raise it, for the timeout message and to stop early if it is dead.
  std::uint64_t signal(std::size_t index) const;
  void wait_until(std::size_t index, std::uint64_t at_least, int from_rank = -1);
  // Sets this process's signal word (only safe when no peer is signalling it).
  void reset_signal(std::size_t index, std::uint64_t value = 0);

 private:
  struct Impl;  // defined in comm/src (window_impl.hpp): nothing of it is visible here
  friend struct detail::Internals;
  // A load/store peer's signal word (direct(rank) must hold; self included): adds and (unless
  // `wake` is false: nobody ever sleeps on that word) wakes its sleepers, returning the value
  // before the add; and waits until it is at least `at_least`, sleeping on it when the wait
  // policy backs off. For shared-memory protocols among the processes of a host (the Comm's
  // process barrier). `what` names the wait in a timeout message; `from_rank` the process expected
  // to raise the word, or -1 for any (then every peer is watched for death).
  std::uint64_t direct_fetch_add_signal(int rank, std::size_t index, std::uint64_t add,
                                        bool wake = true);
  void direct_wait_until(int rank, std::size_t index, std::uint64_t at_least, const char* what,
                         int from_rank = -1);

  Impl* impl() { return impl_; }
  Request send_put_signal_am(int rank, std::size_t offset, const void* src, std::size_t n,
                             std::size_t signal, std::uint64_t add);
  Comm* comm_;
  std::size_t bytes_, signals_;
  std::byte* base_ = nullptr;
  Impl* impl_ = nullptr;
};

namespace detail {
[[noreturn]] void throw_bytes_overflow(std::size_t count, std::size_t size, const char* what);
[[noreturn]] void throw_offset_overflow(std::size_t offset);
// count * size, or std::length_error naming `what` when it does not fit a size_t.
inline std::size_t checked_bytes(std::size_t count, std::size_t size, const char* what) {
  if (size != 0 && count > SIZE_MAX / size) [[unlikely]]
    throw_bytes_overflow(count, size, what);
  return count * size;
}
// offset * size for an element offset; one that does not fit can only lie outside every window,
// so it throws std::out_of_range.
inline std::size_t element_offset_bytes(std::size_t offset, std::size_t size) {
  if (size != 0 && offset > SIZE_MAX / size) [[unlikely]]
    throw_offset_overflow(offset);
  return offset * size;
}
}  // namespace detail

template <class T>
class Window {
  static_assert(std::is_trivially_copyable_v<T>, "Window<T> needs a trivially copyable T");

 public:
  Window(Comm& comm, std::size_t count, std::size_t signals = 64, Fill fill = Fill::zero)
      : w_(comm, detail::checked_bytes(count, sizeof(T), "window elements"), signals, fill),
        count_(count) {}

  std::size_t size() const { return count_; }
  std::size_t size(int rank) const { return w_.bytes(rank) / sizeof(T); }
  std::span<T> local() { return {reinterpret_cast<T*>(w_.local()), count_}; }
  WindowBytes& bytes() { return w_; }
  bool direct(int rank) { return w_.direct(rank); }

  void put(int rank, std::size_t offset, std::span<const T> src) {
    w_.put(rank, at(offset), src.data(), src.size_bytes());
  }
  Request put_nb(int rank, std::size_t offset, std::span<const T> src) {
    return w_.put_nb(rank, at(offset), src.data(), src.size_bytes());
  }
  void get(int rank, std::size_t offset, std::span<T> dst) {
    w_.get(rank, at(offset), dst.data(), dst.size_bytes());
  }
  Request get_nb(int rank, std::size_t offset, std::span<T> dst) {
    return w_.get_nb(rank, at(offset), dst.data(), dst.size_bytes());
  }
  void put_signal(int rank, std::size_t offset, std::span<const T> src, std::size_t signal,
                  std::uint64_t add = 1) {
    w_.put_signal(rank, at(offset), src.data(), src.size_bytes(), signal, add);
  }
  Request put_signal_nb(int rank, std::size_t offset, std::span<const T> src, std::size_t signal,
                        std::uint64_t add = 1) {
    return w_.put_signal_nb(rank, at(offset), src.data(), src.size_bytes(), signal, add);
  }
  void signal_add(int rank, std::size_t signal, std::uint64_t add = 1) {
    w_.signal_add(rank, signal, add);
  }
  Request fetch_add_nb(int rank, std::size_t offset, T value,
                       T* result) requires(std::is_integral_v<T> &&
                                           (sizeof(T) == 4 || sizeof(T) == 8)) {
    return w_.fetch_add_nb(rank, at(offset), static_cast<std::uint64_t>(value), sizeof(T), result);
  }
  Request compare_swap_nb(int rank, std::size_t offset, T expected, T desired,
                          T* result) requires(std::is_integral_v<T> &&
                                              (sizeof(T) == 4 || sizeof(T) == 8)) {
    return w_.compare_swap_nb(rank, at(offset), static_cast<std::uint64_t>(expected),
                              static_cast<std::uint64_t>(desired), sizeof(T), result);
  }
  T fetch_add(int rank, std::size_t offset,
              T value) requires(std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8)) {
    return static_cast<T>(
        w_.fetch_add(rank, at(offset), static_cast<std::uint64_t>(value), sizeof(T)));
  }
  T compare_swap(int rank, std::size_t offset, T expected,
                 T desired) requires(std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8)) {
    return static_cast<T>(w_.compare_swap(rank, at(offset), static_cast<std::uint64_t>(expected),
                                          static_cast<std::uint64_t>(desired), sizeof(T)));
  }
  std::uint64_t signal(std::size_t index) const { return w_.signal(index); }
  void wait_until(std::size_t index, std::uint64_t at_least, int from_rank = -1) {
    w_.wait_until(index, at_least, from_rank);
  }
  void reset_signal(std::size_t index, std::uint64_t value = 0) { w_.reset_signal(index, value); }

 private:
  static std::size_t at(std::size_t offset) {
    return detail::element_offset_bytes(offset, sizeof(T));
  }
  WindowBytes w_;
  std::size_t count_;
};

}  // namespace compas::comm
