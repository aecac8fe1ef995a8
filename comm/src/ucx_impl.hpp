// Internal state of Comm and WindowBytes, shared by their sources.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compas/comm/ucx.hpp"
#include "compas/comm/window.hpp"
#include "internals.hpp"
#include "private_memory.hpp"

namespace compas::comm {

struct EpErrorArg {
  CommImpl* impl;
  int rank;
};

// The active message that carries a put_signal (or a bare signal) to peers reached through UCX
// active messages rather than RMA: the payload follows this header.
struct PutSignalHeader {
  std::uint32_t window = 0;  // id of the window (creation order, equal on every process)
  std::uint32_t signal = 0;
  std::uint64_t offset = 0;  // bytes into the window
  std::uint64_t add = 0;
  std::int32_t origin = 0;    // sending rank
  std::uint32_t counted = 0;  // counts toward flush (see FlushMessage); not the barrier's own
};
constexpr unsigned kPutSignalAm = 1;

// flush(rank) over active messages: UCX completes an active message when it has left (or reached
// the target's transport), not when the target has run its handler. So the origin asks "have you
// applied my first `seq` signals?" (kFlushRequestAm) and the target answers once it has
// (kFlushAckAm), from its next progress call outside the handler.
struct FlushMessage {
  std::int32_t rank = 0;  // the sender of this message
  std::uint32_t reserved = 0;
  std::uint64_t seq = 0;
};
constexpr unsigned kFlushRequestAm = 2;
constexpr unsigned kFlushAckAm = 3;

// A window's owner gave up its collective destruction (a peer did not come within the timeout, or
// the job was already failing) while peers may still be using it: it tells them, so their next
// operation on the window fails at the initiator instead of writing memory the owner let go.
struct WindowFreedMessage {
  std::uint32_t window = 0;
  std::int32_t rank = 0;  // the owner
};
constexpr unsigned kWindowFreedAm = 4;
void on_window_freed(CommImpl& m, const WindowFreedMessage& msg);  // window.cpp

// Applies a put_signal that arrived as an active message (window_signals.cpp). Runs in progress
// context.
ucs_status_t deliver_put_signal(CommImpl& m, const PutSignalHeader& h, void* data,
                                std::size_t length, const ucp_am_recv_param_t* param);

struct Comm::Impl {
  Comm* self = nullptr;
  Bootstrap* boot = nullptr;
  CommOptions opt;
  std::thread::id owner = std::this_thread::get_id();  // owner_thread.hpp
  int rank = 0, size = 1;
  bool backoff = false;  // the wait policy resolved
  ucp_context_h ctx = nullptr;
  ucp_worker_h worker = nullptr;
  std::vector<std::string> addresses;  // worker address of every rank
  std::vector<std::vector<int>> hosts;
  std::vector<std::string> host_names;  // by host index: the host name its processes gave
  std::vector<int> host_of;
  std::vector<std::vector<int>> cpus_of;  // each rank's affinity mask when the job formed
  std::vector<int> threads_of;            // each rank's threads (CommOptions::threads)
  // Same-host peers in this pid namespace: their pid, to notice death without a timeout
  // (0: not checkable). Checked at most every 20 ms per peer.
  std::vector<long> local_pid;
  mutable std::unique_ptr<std::atomic<std::int64_t>[]> pid_checked_ns;

  std::unique_ptr<std::atomic<ucp_ep_h>[]> eps;
  std::unique_ptr<std::atomic<bool>[]> dead;
  mutable std::vector<std::string> dead_reason;  // guarded by reason_mu
  mutable std::mutex reason_mu;                  // never held around a UCX call
  std::vector<EpErrorArg> err_args;
  mutable std::mutex mu;  // endpoint creation
  std::atomic<int> connected{0};
  // Set once a peer was found dead or a wait timed out: the job is failing, so teardown skips
  // its collective steps (barriers) that would wait for peers that will never come.
  mutable std::atomic<bool> failed{false};
  // Teardown may meet the others: nothing has failed and no exception is on its way out.
  bool may_meet() const;
  // The first window teardown whose meeting failed since Comm::take_teardown_failure() last
  // asked; "" when none (guarded by reason_mu).
  mutable std::string teardown_failure;

  // Operation counts (stats()), one block per thread that has used this Comm: its owner adds
  // with a plain load and store, no locked instruction on the put path (two shared fetch_adds
  // cost a load/store put a tenth of its latency), and stats() sums the blocks.
  struct alignas(64) OpCounts {
    std::atomic<std::uint64_t> puts{0}, gets{0}, atomics{0}, signals{0}, bytes_put{0}, bytes_got{0};
    void put(std::uint64_t bytes) { add(puts, 1), add(bytes_put, bytes); }
    void get(std::uint64_t bytes) { add(gets, 1), add(bytes_got, bytes); }
    void signal() { add(signals, 1); }
    void atomic() { add(atomics, 1); }

   private:
    static void add(std::atomic<std::uint64_t>& a, std::uint64_t v) {
      a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
    }
  };
  OpCounts& counts();  // the calling thread's block
  static std::uint64_t new_serial();
  const std::uint64_t serial = new_serial();  // tells Comms apart in threads' cached blocks
  std::mutex counts_mu;                       // guards count_blocks
  std::deque<std::pair<std::thread::id, OpCounts>> count_blocks;

  // Signals sent as active messages: sent to / acknowledged by each target, applied from each
  // origin; flush requests not yet satisfiable, and acknowledgements due (guarded by acks_mu).
  std::unique_ptr<std::atomic<std::uint64_t>[]> am_sent, am_acked, am_applied;
  // Operations handed to UCX per target (put/get/atomics; not load/store), and how many of them a
  // completed flush covered: flush skips UCX when nothing new went through it.
  std::unique_ptr<std::atomic<std::uint64_t>[]> ucx_ops, ucx_flushed;
  std::atomic<std::uint64_t> ucx_ops_total{0}, ucx_flushed_total{0};
  void count_ucx_op(int r) {
    ucx_ops[r].fetch_add(1, std::memory_order_relaxed);
    ucx_ops_total.fetch_add(1, std::memory_order_relaxed);
  }
  std::mutex acks_mu;
  std::vector<FlushMessage> flush_waiting, acks_due;
  std::atomic<int> acks_pending{0};  // flush_waiting.size() + acks_due.size()
  void note_applied(int origin);     // after a signal from origin is applied
  void on_flush_request(const FlushMessage& req);
  void on_flush_ack(const FlushMessage& ack);
  void send_due_acks();  // outside handlers: after progress calls
  void flush_signals(const std::vector<int>& targets);
  void progress_once();  // ucp_worker_progress, then acknowledgements due

  std::thread progress_thread;
  std::atomic<bool> stop_progress{false};
  int efd = -1;

  // Windows by id, for active messages; ids follow creation order (collective, so equal on all).
  std::mutex windows_mu;
  std::vector<WindowBytes*> windows;
  // Registrations of windows whose destruction did not meet every peer: a late peer's put may
  // still arrive, so they stay mapped until the worker is gone (~Comm). Guarded by windows_mu.
  struct Orphaned {
    ucp_mem_h memh;
    detail::PrivateMemory memory;  // unmapped after memh is
  };
  std::vector<Orphaned> orphaned;
  // Per peer: -1 undecided, 0 put_signal by RMA (put, fence, atomic), 1 by one active message.
  std::unique_ptr<std::atomic<int>[]> signal_by_am;
  bool use_am_for_signals(int r);  // decides once per peer (connects)

  std::unique_ptr<WindowBytes> coll;                        // the process collectives' signals
  std::uint64_t barrier_epoch = 0, host_barrier_epoch = 0;  // barriers so far, per algorithm
  // The process barrier (ProcessBarrier): two-level or dissemination, decided by all at
  // construction.
  bool host_barrier = false;
  bool host_barrier_possible = false;  // every process reaches its host leader by load/store
  std::vector<int> leaders;            // each host's leader (its lowest rank), by host index
  std::vector<int> everyone;           // 0 .. size - 1: the dissemination group of all processes
  void choose_process_barrier();
  // Dissemination among `group` (ranks), this process being group[me], on the coll window's
  // signals first_signal.. (one per round). Each round's wait runs through `guard` when given.
  void dissemination(const std::vector<int>& group, int me, std::uint64_t epoch,
                     std::size_t first_signal,
                     const std::function<void(const std::function<void()>&)>& guard = {});
  // ucx_barrier.cpp: runs a wait of two-level barrier `epoch`; a CommError from it comes out
  // naming the processes of this host that did not arrive (or saying that all did). With several
  // hosts, a timeout while every process of this host arrived waits one COMPAS_TIMEOUT more: the
  // host a process is missing from names it first.
  void host_barrier_wait(std::uint64_t epoch, const std::function<void()>& wait);
  struct HostLook {
    std::vector<int> absent, unread;
  };
  HostLook look_at_host(std::uint64_t epoch);
  std::string describe_host(const HostLook& look, bool waited_twice) const;
  std::mutex barrier_mu;

  bool same_host_as_me(int r) const;
  // UCX_TLS lets UCX use shared memory between processes of a host (see ep()).
  bool shared_memory_allowed = true;
  ucp_ep_h ep(int r);  // connects lazily; throws CommError for a dead peer
  // Throws CommError when rank r is known dead or, on this host, its process is gone (looked at
  // at most every 20 ms, or at once with `immediately`).
  void check_alive(int r, bool immediately = false) const;
  [[noreturn]] void fail(int r, const std::string& what, ucs_status_t status) const;

  // Waits until done() holds, progressing the worker and backing off as the policy says. Throws
  // CommError after the timeout naming `what` and `peer`, or early when `peer` is dead.
  // `block`, when given, replaces the short sleep of the back-off (a futex wait on a signal).
  // `poll_often`: the condition is a plain memory word that load/store peers may set, so progress
  // the worker (costly: its lock) only every few polls; otherwise progress on every iteration.
  void wait(const std::function<bool()>& done, const std::function<std::string()>& what, int peer,
            const std::function<void()>& block = {}, bool poll_often = false);
  // Waits for a UCX request (or status) to complete locally and frees it. On a timeout the
  // request is abandoned (below) with `hold`, the memory it may still touch.
  void complete(ucs_status_ptr_t sp, int peer, const char* op,
                std::unique_ptr<std::uint64_t[]>* hold = nullptr);
  // A request whose wait timed out: UCX may still write its reply into our buffers or read its
  // source, so it is made to let go before the error reaches the caller. The endpoint to `peer`
  // is closed (UCX then completes its requests with an error) and `peer` marked unreachable; the
  // worker is progressed until the request is released, for at most kAbandonGrace. A request
  // UCX still holds after that keeps `hold` alive until the worker is destroyed (abandoned); a
  // get (`op`), whose destination is the caller's memory, then ends the process.
  void abandon(ucs_status_ptr_t sp, int peer, const char* op,
               std::unique_ptr<std::uint64_t[]> hold);
  // Closes the endpoint to `r` at once and marks `r` unreachable for `why`.
  void sever(int r, const std::string& why);
  std::mutex abandoned_mu;
  std::vector<std::unique_ptr<std::uint64_t[]>> abandoned;  // freed after ucp_worker_destroy
  void run_progress_thread();
  // Sleeps until the worker has an event (or timeout_ms passes).
  void sleep_on_worker(int timeout_ms);
  void enter_wait();
  void leave_wait();
  std::atomic<std::uint32_t> waiting_threads{0};  // threads progressing in a wait (futex word)
  std::atomic<std::int64_t> last_wait_end_ns{0};  // steady clock, when the last wait ended
};

}  // namespace compas::comm
