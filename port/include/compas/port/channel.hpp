// Channel<T>: ordered point-to-point messages between processes, for pipelines and wavefronts
// ("row block k is ready", with the boundary values that make it so) where a halo exchange,
// which every process does at once, does not fit. It replaces MPI_Send / MPI_Recv between
// neighbours:
//
//   compas::Channel<double> ch(rt);                        // collective, like a DistArray
//   for (long i = 1; i < m; ++i) {
//     if (me > 0) a(i, lo - 1) = ch.recv(me - 1);          // the left neighbour's row i is done
//     for (long j = lo; j < hi; ++j) a(i, j) = a(i - 1, j) + a(i, j - 1) - a(i - 1, j - 1);
//     if (me + 1 < p) ch.send(me + 1, a(i, hi - 1));       // ours is: pass its last value on
//   }
//
// Messages from one process to another arrive in the order they were sent; each is a value or a
// span of up to `max_count` values. A sender runs up to `capacity` messages ahead of its
// receiver, then send() waits for the receiver to take one (flow control, never an overwrite).
// Underneath: one window per channel holding, for every sender, `capacity` slots; send() is one
// put_signal into the receiver's next slot (on one host a memcpy), recv() waits for that slot's
// signal, copies, and returns a credit to the sender (one signal add).
//
// Threads: a Channel's sends are made by one thread at a time, and its receives by one thread at
// a time (the thread that made the Runtime, or one thread of the team inside run(), e.g. under
// `#pragma omp master`); one thread may send while another receives, as the two ends of a
// pipeline stage do (their state is separate: see prk_p2p_compas.cpp). A send or recv waits with
// the Runtime's wait policy and ends with a CommError naming the peer when that process has died
// or COMPAS_TIMEOUT passes.
//
// On the job only: a Channel takes Processes like every call over processes, but its window is
// made collectively over the whole job, so on a Group its constructor throws std::logic_error
// naming the group and why, before anything collective (ranks are job ranks; a group's members
// talk over a channel of the job with g.job_rank(i)).
//
// Errors: construction is collective and funneled; capacity, max_count or the element type (its
// size, or the type itself: double and int64_t) that differ between processes throw CollectiveError
// (a std::invalid_argument) on every process naming both processes and values. A rank outside
// 0..P-1, more than max_count values, or a receive span smaller than the message throw
// std::invalid_argument naming the value and what is allowed (a message too long for the span stays
// to be received).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>
#include <typeinfo>

#include "compas/runtime/collectives.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas {

namespace detail {

// The untyped channel: messages of up to `max_bytes` bytes.
class ChannelBytes {
 public:
  // elem_type: compared between processes (base::type_id), named when they differ.
  ChannelBytes(Runtime& rt, std::size_t capacity, std::size_t max_count, std::size_t elem_bytes,
               const std::type_info& elem_type);
  ~ChannelBytes();
  ChannelBytes(ChannelBytes&&) noexcept;
  ChannelBytes& operator=(ChannelBytes&&) noexcept;

  void send(int to, const void* data, std::size_t count);
  // Returns the number of elements received (at most `room`).
  std::size_t recv(int from, void* data, std::size_t room);
  std::size_t capacity() const;
  std::size_t max_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace detail

template <class T>
class Channel {
  static_assert(std::is_trivially_copyable_v<T>, "Channel<T> needs a trivially copyable T");

 public:
  // Collective: every process makes it, in the same order as its other collective objects.
  explicit Channel(Processes ps, std::size_t capacity = 16, std::size_t max_count = 1)
      : c_(job_of(ps), capacity, max_count, sizeof(T), typeid(T)) {}

  void send(int to, const T& value) { c_.send(to, &value, 1); }
  void send(int to, std::span<const T> values) { c_.send(to, values.data(), values.size()); }
  // The next message from `from`, of one value.
  T recv(int from) {
    T v{};
    c_.recv(from, &v, 1);
    return v;
  }
  // The next message from `from` into `out`; returns how many values it held.
  std::size_t recv(int from, std::span<T> out) { return c_.recv(from, out.data(), out.size()); }

  std::size_t capacity() const { return c_.capacity(); }
  std::size_t max_count() const { return c_.max_count(); }

 private:
  static Runtime& job_of(const Processes& ps) {
    detail::require_whole_job(ps, "compas::Channel",
                              "its window is made collectively over the whole job");
    return ps.runtime();
  }
  detail::ChannelBytes c_;
};

}  // namespace compas
