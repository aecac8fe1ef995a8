// Comm: one process's UCX (UCP) context, its worker and its endpoints to the other processes of
// the job; the layer through which data moves between nodes.
//
// Threading: one UCP worker per process, created in UCS_THREAD_MODE_MULTI, shared by every thread
// that calls into it; any thread may issue any operation at any time. (One worker per thread
// would avoid the worker lock but multiplies endpoints by T and makes passive-target progress
// T times harder; RMA between nodes is issued by one thread per node in the hybrid codes compas
// targets.)
//
// Progress: with `Progress::thread` (the default when P > 1) a progress thread sleeps on the
// worker's event fd and progresses the worker whenever the network has something, so a put or
// atomic aimed at this process completes while its threads compute, also where UCX emulates RMA
// in software (tcp). Every blocking wait progresses the worker itself; while a thread waits, and
// for 1 ms after the last wait ended, the progress thread stands down (it is not woken per
// message), so communication-bound phases do not pay a context switch per message. With
// `Progress::wait` there is no thread and operations targeting this process complete only while
// it waits in compas (the choice for codes that never compute while others access them).
//
// Endpoints are created lazily, on a process's first operation towards a peer, so a process that
// talks to k peers pays for k endpoints, not P. Endpoints to peers on other hosts use UCX peer
// error handling (keepalive): a peer that dies fails the operations towards it with a CommError
// naming its rank. Same-host endpoints cannot (UCX's shared-memory transports do not support it;
// asking moves the traffic to tcp), so waits for a same-host peer look at its process instead.
// Every wait ends after COMPAS_TIMEOUT with a CommError naming the rank waited for.
//
// Same-host peers: when UCX can map a peer's registered memory into this process (shared-memory
// transports, ucp_rkey_ptr), windows access it by direct load/store (Window::direct()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/comm/bootstrap.hpp"

namespace compas::comm {

// A failed remote operation or wait: a dead peer, a timeout. rank() names the peer, or -1.
class CommError : public std::runtime_error {
 public:
  explicit CommError(const std::string& message, int peer = -1)
      : std::runtime_error(message), rank_(peer) {}
  int rank() const { return rank_; }

 private:
  int rank_;
};

enum class Progress { thread, wait };
// How put_signal reaches a peer that is not load/store-reachable: by RMA (put, fence, remote
// atomic add: passive target where the network has RDMA), or by one active message whose
// handler copies the data and adds to the signal (one message instead of three where UCX only
// emulates RMA, e.g. tcp). `automatic` picks am when UCX's RMA lanes to the peer are tcp or
// missing.
enum class SignalPath { rma, am, automatic };
// How a process waits for a remote event (a signal, a request's completion): spin polling the
// worker, or back off (yield, then short sleeps) so that a peer sharing the core can run. `auto`
// spins unless the job is oversubscribed (COMPAS_OVERSUBSCRIBED=1, set by compas-run).
enum class CommWait { spin, backoff, automatic };

// The process barrier among processes: dissemination over signals among all of them; or two-level
// (`host`): the processes of a host count in on a word at their host leader (the lowest rank
// there) by load/store and wait on another, the leaders run the dissemination among hosts, then
// release their host; on one host the last to arrive releases. Two-level needs every process to
// reach its host leader by load/store (else the whole job keeps dissemination) and is only taken
// when some host has two processes. `automatic` chooses it when every process's waits back off
// (CommWait resolved to backoff: the job is oversubscribed, or COMPAS_COMM_WAIT=backoff): a
// process that is not a leader then sleeps at most once per barrier, where dissemination waits
// log2(P) times, each time on a process that may not be running.
enum class ProcessBarrier { dissemination, host, automatic };

struct CommOptions {
  Progress progress = Progress::thread;            // COMPAS_PROGRESS=thread|wait
  CommWait wait = CommWait::automatic;             // COMPAS_COMM_WAIT=spin|backoff|auto
  SignalPath signal_path = SignalPath::automatic;  // COMPAS_SIGNAL_PATH=rma|am|auto
  ProcessBarrier process_barrier =
      ProcessBarrier::automatic;  // COMPAS_PROCESS_BARRIER=dissemination|host|auto
  // COMPAS_OVERSUBSCRIBED=0|1. When not given, Comm finds out itself: the processes of a host
  // want more cores (`threads` each) than the union of their affinity masks has; options() then
  // reports what it found.
  bool oversubscribed = false;
  bool oversubscribed_given = false;
  // The threads this process runs, for that count: 0 means COMPAS_THREADS, else 1. The Runtime
  // sets its own.
  int threads = 0;
  bool direct = true;     // COMPAS_DIRECT=0 turns off load/store to same-host peers
  // COMPAS_HUGE_PAGES=1: the windows of a process alone on its host (private memory) go on
  // transparent huge pages (window.hpp).
  bool huge_pages = false;
  double timeout_s = 60;  // COMPAS_TIMEOUT, seconds: every blocking wait

  // Reads the variables above; throws std::invalid_argument naming a bad value and what is
  // allowed.
  static CommOptions from_environment();
};

// Totals of what this process initiated, for reports and Software Defined Events.
struct CommStats {
  std::uint64_t puts = 0, gets = 0, atomics = 0, signals = 0;
  std::uint64_t bytes_put = 0, bytes_got = 0;
  std::uint64_t endpoints = 0;  // endpoints created so far
};

class WindowBytes;
class Request;
namespace detail {
struct Internals;  // the comm layer's own access to what its classes hide (comm/src)
}

class Comm {
 public:
  // Collective over the bootstrap's processes: creates the context and worker and exchanges
  // worker addresses and host identities. `boot` must outlive the Comm.
  explicit Comm(Bootstrap& boot, CommOptions options = CommOptions::from_environment());
  ~Comm();  // collective: waits (bounded by the timeout) until every process is done with it
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const;
  int size() const;
  Bootstrap& bootstrap();
  const CommOptions& options() const;

  // Ranks grouped by host (host_id() equal), hosts ordered by their lowest rank, ranks ascending.
  const std::vector<std::vector<int>>& hosts() const;
  int host_of(int rank) const;  // index into hosts()
  bool same_host(int rank) const;
  // The OS cpus `rank`'s affinity mask held when the job formed (what its launcher gave it; a
  // cpu number means something only among the ranks of one host).
  const std::vector<int>& cpus_of(int rank) const;
  // The threads `rank` said it runs (CommOptions::threads, COMPAS_THREADS, else 1).
  int threads_of(int rank) const;

  // Progresses the worker once (completes arrived operations); returns whether anything happened.
  bool progress();
  // Remote completion of every operation this process issued towards `rank` / towards anyone.
  void flush(int rank);
  void flush_all();
  // Operations issued after the fence are performed after those issued before it.
  void fence();

  // Throws CommError if `rank` is known dead. Creates the endpoint if it does not exist yet.
  void connect(int rank);
  int connected_peers() const;  // endpoints created so far (excluding self)
  // UCX's transport lanes towards `rank` (connects), e.g. "rma: posix/memory, amo: posix/memory".
  std::string transport(int rank);
  CommStats stats() const;

  // Process barrier among all processes (ProcessBarrier; see collectives.hpp for the other process
  // collectives). The algorithm is chosen by all processes together at construction:
  // barrier_algorithm() names it ("dissemination" or "host"). barrier(how) runs a given one, for
  // measurements: `host` throws std::logic_error where it is not possible (host_barrier_possible(),
  // the same answer on every process), `automatic` is the chosen one.
  void barrier();
  void barrier(ProcessBarrier how);
  std::string barrier_algorithm() const;
  bool host_barrier_possible() const;

  // What went wrong when a window was destroyed since the last call (its meeting with the other
  // processes failed: a timeout, a dead peer), and forgets it; "" when nothing did. A destructor
  // cannot throw: who destroys collectively and must say that it failed (the C API's destroys and
  // compas_finalize) asks afterwards.
  std::string take_teardown_failure();

 private:
  struct Impl;  // comm/src (ucx_impl.hpp): nothing of UCX is visible here
  friend struct detail::Internals;
  Impl& impl() { return *impl_; }
  void close() noexcept;  // ~Comm's teardown (also when the constructor fails late)
  std::unique_ptr<Impl> impl_;
};

// A non-blocking operation in flight. wait() returns once it completed locally (the source buffer
// of a put may be reused, the destination of a get holds the data); move-only; destroying an
// unfinished Request waits for it.
class Request {
 public:
  Request() = default;
  Request(Request&& o) noexcept;
  Request& operator=(Request&& o) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  bool test();  // progresses once; true when complete (throws CommError if it failed)
  void wait();  // throws CommError on failure or timeout

 private:
  friend struct detail::Internals;
  // A UCX request pointer (or null for an operation complete at issue). `hold` keeps memory UCX
  // reads or writes until completion (an atomic's operands, a message header); on completion
  // `result_size` bytes at hold[result_at] are copied to `result` (an atomic's reply).
  Request(Comm* comm, void* ucx_request, int peer, const char* op,
          std::unique_ptr<std::uint64_t[]> hold = nullptr, void* result = nullptr,
          std::size_t result_at = 0, std::size_t result_size = 0);
  void finish();  // after UCX completed: deliver the result, release what was held
  Comm* comm_ = nullptr;
  void* req_ = nullptr;
  int peer_ = -1;
  const char* op_ = "";
  std::unique_ptr<std::uint64_t[]> hold_;
  void* result_ = nullptr;
  std::size_t result_at_ = 0, result_size_ = 0;
};

}  // namespace compas::comm
