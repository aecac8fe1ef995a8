// BatchInbox (batch_inbox.hpp): an UpdateBatch's full buckets, put one-sided into their owner's
// window, with a credit back for each one applied.
//
// Signal words of every process's window: [s * chunks + k] counts the chunks source s has put into
// slot k here (chunk n of s goes to slot n % chunks, as its (n / chunks + 1)-th); [P * chunks + r]
// counts the chunks of this process that r has applied (its credits). A slot is rewritten only
// after its last chunk was applied, so each slot's count rises by one per chunk whatever order the
// transport delivers different slots in.
//
// A slot of a peer's inbox is also handed from one thread of this process to the next in this
// process: put_done[to * chunks + k] counts the puts into slot k at `to` that have returned here,
// and the thread of chunk n waits (acquire) until those of every earlier chunk of that slot have,
// then counts its own (release). The peer's credit already implies it (the peer applied chunk
// n - chunks, so that put had landed); but that order runs through the peer's process, which no
// happens-before of this process's threads records: two threads of this process writing one
// slot's memory are then ordered only by another process's atomics, which the C++ memory model of
// one program (and ThreadSanitizer) does not see. The hand-off costs one store per chunk.
#include "compas/port/batch_inbox.hpp"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "compas/base/machine.hpp"
#include "compas/comm/window.hpp"

namespace compas::detail {

struct BatchInbox::Impl {
  Impl(comm::Comm& c, std::size_t chunk, std::size_t n)
      : comm(&c),
        P(static_cast<std::size_t>(c.size())),
        me(c.rank()),
        chunk_bytes(chunk),
        chunks(n),
        window(c, comm::detail::checked_bytes(P * n, chunk, "update batch inbox"), P * n + P),
        sent(P),
        put_done(P * n),
        applied(P, 0) {}

  std::size_t arrival_signal(std::size_t from, std::uint64_t n) const {
    return from * chunks + static_cast<std::size_t>(n % chunks);
  }
  std::size_t credit_signal(std::size_t to) const { return P * chunks + to; }
  std::size_t slot_offset(std::size_t from, std::uint64_t n) const {
    return arrival_signal(from, n) * chunk_bytes;
  }
  // Whether chunk n of `from` is here.
  bool arrived(std::size_t from, std::uint64_t n) const {
    return window.signal(arrival_signal(from, n)) >= n / chunks + 1;
  }

  // Whether slot n % chunks at `to` is this process's to write chunk n into: `to` has applied
  // chunk n - chunks (n - chunks + 1 credits) and the put of that chunk has returned here.
  bool room(std::size_t to, std::uint64_t n) const {
    if (put_done[to * chunks + n % chunks].load(std::memory_order_acquire) != n / chunks)
      return false;
    return n < chunks || window.signal(credit_signal(to)) >= n - chunks + 1;
  }

  comm::Comm* comm;
  std::size_t P;
  int me;
  std::size_t chunk_bytes, chunks;
  comm::WindowBytes window;
  std::vector<std::atomic<std::uint64_t>> sent;      // chunks numbered for each destination
  std::vector<std::atomic<std::uint64_t>> put_done;  // puts returned, per destination and slot
  std::vector<std::uint64_t> applied;                // chunks applied from each source (drain only)
};

BatchInbox::BatchInbox(comm::Comm& comm, std::size_t chunk_bytes, std::size_t chunks)
    : impl_(std::make_unique<Impl>(comm, chunk_bytes, chunks)) {}

BatchInbox::~BatchInbox() = default;

void BatchInbox::send(int rank, const void* chunk, const std::function<void()>& idle) {
  Impl& c = *impl_;
  const auto to = static_cast<std::size_t>(rank);
  const std::uint64_t n = c.sent[to].fetch_add(1, std::memory_order_relaxed);
  if (!c.room(to, n)) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration<double>(c.comm->options().timeout_s);
    for (long look = 0; !c.room(to, n); ++look) {
      idle();
      base::cpu_relax();
      if ((look & 63) == 63) {  // a process sharing the core may be the one to apply
        std::this_thread::yield();
        c.comm->progress();
        if (std::chrono::steady_clock::now() > deadline)
          throw comm::CommError("compas::UpdateBatch::add: process " + std::to_string(c.me) +
                                    " waited " + std::to_string(c.comm->options().timeout_s) +
                                    " s for room in process " + std::to_string(rank) +
                                    "'s inbox (it applies nothing: is it stuck or dead?)",
                                rank);
      }
    }
  }
  c.window.put_signal(rank, c.slot_offset(static_cast<std::size_t>(c.me), n), chunk, c.chunk_bytes,
                      c.arrival_signal(static_cast<std::size_t>(c.me), n));
  c.put_done[to * c.chunks + n % c.chunks].store(n / c.chunks + 1, std::memory_order_release);
}

std::vector<std::uint64_t> BatchInbox::sent() const {
  std::vector<std::uint64_t> out;
  for (const auto& s : impl_->sent) out.push_back(s.load(std::memory_order_relaxed));
  return out;
}

void BatchInbox::drain(const std::function<void(const std::byte*)>& apply,
                       std::span<const std::uint64_t> until) {
  Impl& c = *impl_;
  for (std::size_t s = 0; s < c.P; ++s) {
    if (s == static_cast<std::size_t>(c.me)) continue;
    std::uint64_t& n = c.applied[s];
    for (;; ++n) {
      if (!until.empty() && n < until[s])
        c.window.wait_until(c.arrival_signal(s, n), n / c.chunks + 1, static_cast<int>(s));
      else if (!c.arrived(s, n))
        break;
      apply(c.window.local() + c.slot_offset(s, n));
      c.window.signal_add(static_cast<int>(s), c.credit_signal(static_cast<std::size_t>(c.me)));
    }
  }
}

Drainer::Drainer(std::function<void()> drain) : drain_(std::move(drain)) {
  thread_ = std::thread([this] {
    try {
      while (!done_.load(std::memory_order_acquire)) {
        drain_();
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    } catch (...) {
      error_ = std::current_exception();
    }
  });
}

Drainer::~Drainer() {
  stop();
}

void Drainer::stop() noexcept {
  done_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

void Drainer::finish() {
  stop();
  if (error_) std::rethrow_exception(error_);
}

}  // namespace compas::detail
