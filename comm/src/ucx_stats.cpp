// Comm's operation counts: each thread's block of counters, and stats() summing them.
#include <atomic>
#include <mutex>
#include <thread>
#include <tuple>
#include <utility>

#include "compas/comm/ucx.hpp"
#include "internals.hpp"
#include "ucx_impl.hpp"

namespace compas::comm {

std::uint64_t CommImpl::new_serial() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

CommImpl::OpCounts& CommImpl::counts() {
  struct Cached {
    std::uint64_t serial = 0;
    OpCounts* block = nullptr;
  };
  thread_local Cached cached;
  if (cached.serial == serial) [[likely]]
    return *cached.block;
  // A thread new to this Comm, or one that used another Comm since: find or add its block.
  std::lock_guard lock(counts_mu);
  const auto me = std::this_thread::get_id();
  OpCounts* block = nullptr;
  for (auto& [id, c] : count_blocks)
    if (id == me) block = &c;
  if (!block)
    block = &count_blocks
                 .emplace_back(std::piecewise_construct, std::forward_as_tuple(me),
                               std::forward_as_tuple())
                 .second;
  cached = {serial, block};
  return *block;
}

CommStats Comm::stats() const {
  Impl& m = *impl_;
  CommStats s;
  {
    std::lock_guard lock(m.counts_mu);
    for (const auto& [id, c] : m.count_blocks) {
      s.puts += c.puts.load(std::memory_order_relaxed);
      s.gets += c.gets.load(std::memory_order_relaxed);
      s.atomics += c.atomics.load(std::memory_order_relaxed);
      s.signals += c.signals.load(std::memory_order_relaxed);
      s.bytes_put += c.bytes_put.load(std::memory_order_relaxed);
      s.bytes_got += c.bytes_got.load(std::memory_order_relaxed);
    }
  }
  s.endpoints = static_cast<std::uint64_t>(m.connected.load());
  return s;
}

}  // namespace compas::comm
