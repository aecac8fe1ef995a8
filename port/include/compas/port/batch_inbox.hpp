// What UpdateBatch (update_batch.hpp) sends before its flush: a bucket that fills goes one-sided
// into its owner's inbox, so that a batch's buffers stay bounded however many updates its threads
// add between two flushes. Internal to the porting layer.
//
// Every process's inbox is one window: for each source process s, `chunks` slots of `chunk_bytes`
// (one full bucket each). Source s's n-th chunk to r goes into slot n % chunks of r's region for
// s, with a put_signal that raises r's arrival word for that slot; r applies its chunks from each
// source in the order they were numbered, and gives a credit back (a signal add at s) for each.
// A sender whose slot is still taken waits for the credit, calling `idle` meanwhile (its process
// applies what arrived for it), so that two processes sending to each other never wait for each
// other: a deadlock-free wait at any P x T, oversubscribed included, bounded by COMPAS_TIMEOUT.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "compas/comm/ucx.hpp"

namespace compas::detail {

class BatchInbox {
 public:
  // Collective (every process alike): the window of P * chunks slots of chunk_bytes.
  BatchInbox(comm::Comm& comm, std::size_t chunk_bytes, std::size_t chunks);
  ~BatchInbox();
  BatchInbox(const BatchInbox&) = delete;
  BatchInbox& operator=(const BatchInbox&) = delete;

  // Any thread: `chunk` (chunk_bytes) into `rank`'s inbox (rank is not this process). Waits for a
  // free slot there (its last chunk applied by `rank`, and put by this process's thread that sent
  // it: one thread of this process writes a slot at a time), calling idle() between looks;
  // comm::CommError after COMPAS_TIMEOUT seconds without one, naming `rank`. Returns when `chunk`
  // may be reused.
  void send(int rank, const void* chunk, const std::function<void()>& idle);

  // The chunks this process has sent to each process since the inbox was made (P counts).
  std::vector<std::uint64_t> sent() const;

  // One thread at a time (the caller holds the batch's lock): apply(chunk) for every chunk that
  // has arrived, each source's in order, with a credit back for each. With `until` (P counts: the
  // chunks each source has sent in all), waits until that many of each were applied.
  void drain(const std::function<void(const std::byte*)>& apply,
             std::span<const std::uint64_t> until = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// While a flush waits for the other processes (its agreement and count exchange), a helper thread
// runs drain() every 20 microseconds, so that a process still adding is never left waiting for
// room in this one's inbox. Stopped and joined by finish() (which rethrows what drain() threw) or
// by the destructor.
class Drainer {
 public:
  explicit Drainer(std::function<void()> drain);
  ~Drainer();
  Drainer(const Drainer&) = delete;
  Drainer& operator=(const Drainer&) = delete;
  void finish();

 private:
  void stop() noexcept;
  std::function<void()> drain_;
  std::atomic<bool> done_{false};
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace compas::detail
