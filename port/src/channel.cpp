// Channel<T>'s untyped core (channel.hpp): slots in one window, a put_signal per message, a
// signal add per credit.
//
// Layout of every process's window: for each sender s (0..P-1) `capacity` slots of
// `slot_bytes` (an 8-byte element count, then the elements). Signal words: [s * capacity + k]
// counts the messages s has put into slot k here (message n of s goes to slot n % capacity, as
// the (n / capacity + 1)-th); [P * capacity + r] counts the messages of this process that
// receiver r has taken (its credits). A slot is rewritten only after its last message was
// taken, so each slot's count rises by one per message whatever order the transport delivers
// different slots in.
#include "compas/port/channel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/base/type_name.hpp"
#include "compas/comm/window.hpp"

namespace compas::detail {

namespace {

constexpr std::size_t kHeader = sizeof(std::uint64_t);

std::size_t round_up8(std::size_t n) {
  return (n + 7) / 8 * 8;
}

// What every process must agree on.
struct ChannelShape {
  std::uint64_t capacity, max_count, elem_bytes, elem_type;  // elem_type: base::type_id
  char type_name[32];                                        // for the message (cut)
};

ChannelShape shape_of(std::size_t capacity, std::size_t max_count, std::size_t elem_bytes,
                      const std::type_info& type) {
  ChannelShape s{capacity, max_count, elem_bytes, base::type_id(type), {}};
  const std::string name = base::type_name(type);
  std::memcpy(s.type_name, name.data(), std::min(name.size(), sizeof s.type_name - 1));
  return s;
}

// Throws CollectiveError, on every process alike, when the shapes differ.
void check_agreement(Runtime& rt, const ChannelShape& mine) {
  if (rt.processes() == 1) return;
  std::vector<ChannelShape> all(static_cast<std::size_t>(rt.processes()));
  rt.collectives().allgather(std::span<const ChannelShape>(&mine, 1), std::span<ChannelShape>(all));
  for (std::size_t r = 1; r < all.size(); ++r) {
    const ChannelShape& a = all[0];
    const ChannelShape& b = all[r];
    if (a.capacity == b.capacity && a.max_count == b.max_count && a.elem_bytes == b.elem_bytes &&
        a.elem_type == b.elem_type)
      continue;
    auto text = [](const ChannelShape& s) {
      return "capacity " + std::to_string(s.capacity) + ", max_count " +
             std::to_string(s.max_count) + ", " + std::to_string(s.elem_bytes) +
             "-byte elements of type " + s.type_name;
    };
    throw CollectiveError("Channel: process 0 made it with " + text(a) + ", process " +
                          std::to_string(r) + " with " + text(b) +
                          ": every process must make it alike");
  }
}

void check_size(const char* what, std::size_t v) {
  if (v == 0 || v > (std::size_t{1} << 30))
    throw std::invalid_argument(std::string("Channel: ") + what + " " + std::to_string(v) +
                                " is not allowed: 1..2^30");
}

}  // namespace

struct ChannelBytes::Impl {
  Runtime* rt;
  int p, me;
  std::size_t capacity, max_count, elem_bytes, slot_bytes;
  comm::Window<std::byte> window;
  std::vector<std::uint64_t> sent, received;  // messages to / from each process
  std::vector<std::byte> staging;

  Impl(Runtime& r, std::size_t cap, std::size_t max, std::size_t elem)
      : rt(&r),
        p(r.processes()),
        me(r.process()),
        capacity(cap),
        max_count(max),
        elem_bytes(elem),
        slot_bytes(kHeader + round_up8(comm::detail::checked_bytes(max, elem, "Channel message"))),
        window(r.window<std::byte>(
            comm::detail::checked_bytes(static_cast<std::size_t>(p) * cap, slot_bytes, "Channel"),
            static_cast<std::size_t>(p) * (cap + 1))),
        sent(static_cast<std::size_t>(p), 0),
        received(static_cast<std::size_t>(p), 0),
        staging(slot_bytes) {}

  std::size_t slot_offset(int sender, std::uint64_t n) const {
    return (static_cast<std::size_t>(sender) * capacity + n % capacity) * slot_bytes;
  }
  std::size_t arrival_signal(int sender, std::uint64_t n) const {
    return static_cast<std::size_t>(sender) * capacity + n % capacity;
  }
  std::size_t credit_signal(int receiver) const {
    return static_cast<std::size_t>(p) * capacity + static_cast<std::size_t>(receiver);
  }
  void check_rank(const char* call, const char* name, int rank) const {
    if (rank < 0 || rank >= p)
      throw std::invalid_argument(std::string("Channel::") + call + ": " + name + " " +
                                  std::to_string(rank) + " is not a process: 0.." +
                                  std::to_string(p - 1));
  }
};

ChannelBytes::ChannelBytes(Runtime& rt, std::size_t capacity, std::size_t max_count,
                           std::size_t elem_bytes, const std::type_info& elem_type) {
  rt.check_funneled("Channel (a collective)",
                    "make channels before run(), or between runs, from the thread that made "
                    "the Runtime");
  check_size("capacity", capacity);
  check_size("max_count", max_count);
  check_agreement(rt, shape_of(capacity, max_count, elem_bytes, elem_type));
  impl_ = std::make_unique<Impl>(rt, capacity, max_count, elem_bytes);
}

ChannelBytes::~ChannelBytes() = default;
ChannelBytes::ChannelBytes(ChannelBytes&&) noexcept = default;
ChannelBytes& ChannelBytes::operator=(ChannelBytes&&) noexcept = default;

std::size_t ChannelBytes::capacity() const {
  return impl_->capacity;
}
std::size_t ChannelBytes::max_count() const {
  return impl_->max_count;
}

void ChannelBytes::send(int to, const void* data, std::size_t count) {
  Impl& c = *impl_;
  c.check_rank("send", "destination", to);
  if (count > c.max_count)
    throw std::invalid_argument("Channel::send: " + std::to_string(count) +
                                " values in one message; this channel takes at most " +
                                std::to_string(c.max_count) + " (its max_count)");
  const std::uint64_t n = c.sent[static_cast<std::size_t>(to)];
  // The slot's previous message must have been taken: `to` has taken n - capacity + 1 of ours.
  if (n >= c.capacity) c.window.wait_until(c.credit_signal(to), n - c.capacity + 1, to);
  const std::uint64_t header = count;
  std::memcpy(c.staging.data(), &header, kHeader);
  if (count > 0) std::memcpy(c.staging.data() + kHeader, data, count * c.elem_bytes);
  const std::size_t bytes = kHeader + count * c.elem_bytes;
  c.window.put_signal(to, c.slot_offset(c.me, n),
                      std::span<const std::byte>(c.staging.data(), bytes),
                      c.arrival_signal(c.me, n));
  c.sent[static_cast<std::size_t>(to)] = n + 1;
}

std::size_t ChannelBytes::recv(int from, void* data, std::size_t room) {
  Impl& c = *impl_;
  c.check_rank("recv", "source", from);
  const std::uint64_t n = c.received[static_cast<std::size_t>(from)];
  c.window.wait_until(c.arrival_signal(from, n), n / c.capacity + 1, from);
  const std::byte* slot = c.window.local().data() + c.slot_offset(from, n);
  std::uint64_t count = 0;
  std::memcpy(&count, slot, kHeader);
  if (count > room)
    throw std::invalid_argument("Channel::recv: the message from process " + std::to_string(from) +
                                " holds " + std::to_string(count) +
                                " values, the span given has room for " + std::to_string(room) +
                                " (the message stays to be received)");
  if (count > 0) std::memcpy(data, slot + kHeader, count * c.elem_bytes);
  c.received[static_cast<std::size_t>(from)] = n + 1;
  c.window.signal_add(from, c.credit_signal(c.me));
  return count;
}

}  // namespace compas::detail
