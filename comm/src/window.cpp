// WindowBytes: creation (ucp_mem_map, key exchange), destruction (collective, or telling peers
// the window is gone), and per-peer resolution (rkey unpack, direct mapping: same-host peers at
// creation, remote peers at first use). Its operations are in window_rma.cpp,
// window_atomics.cpp, window_signals.cpp and window_wait.cpp.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "compas/comm/window.hpp"
#include "internals.hpp"
#include "owner_thread.hpp"
#include "ucx_impl.hpp"
#include "window_impl.hpp"

namespace compas::comm {

namespace {

using detail::Layout;
using detail::Peer;

// What each process publishes at creation: base address, data bytes, signal count, packed rkey.
constexpr std::size_t kKeyHeader = 3 * sizeof(std::uint64_t);

}  // namespace

WindowBytes::WindowBytes(Comm& comm, std::size_t bytes, std::size_t signals, Fill fill)
    : comm_(&comm), bytes_(bytes), signals_(signals) {
  detail::require_owner_thread(detail::Internals::comm(comm), "comm::WindowBytes");
  const Layout layout = Layout::of(bytes, signals);  // before anything collective: may throw
  impl_ = new Impl;
  Impl& w = *impl_;
  w.comm = &detail::Internals::comm(comm);
  w.own = layout;
  // Alone on its host, nobody maps this memory but UCX (see private_memory.hpp).
  const bool alone = comm.hosts()[static_cast<std::size_t>(comm.host_of(comm.rank()))].size() == 1;
  // Peers may still be operating on this process's memory through UCX, which (without a progress
  // thread) completes only while this process progresses; the bootstrap below does not.
  try {
    if (comm.size() > 1 && w.comm->coll) comm.barrier();
    detail::agree_window_memory(comm, w.own.total,
                                alone ? base::Mapping::private_memory : base::Mapping::shared);
    if (alone) w.memory = detail::PrivateMemory(w.own.total, comm.options().huge_pages);
  } catch (...) {
    delete impl_;
    throw;
  }

  ucp_mem_map_params_t mp{};
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS |
                  UCP_MEM_MAP_PARAM_FIELD_ADDRESS;
  mp.address = w.memory.data();  // registered where it is, or (nullptr) allocated by UCX
  mp.length = w.own.total;
  mp.flags = alone ? 0 : UCP_MEM_MAP_ALLOCATE;
  if (ucs_status_t st = ucp_mem_map(w.comm->ctx, &mp, &w.memh); st != UCS_OK) {
    delete impl_;
    throw CommError("registering a window of " + std::to_string(w.own.total) +
                    " bytes (ucp_mem_map): " + ucs_status_string(st));
  }
  ucp_mem_attr_t attr{};
  attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
  ucp_mem_query(w.memh, &attr);
  base_ = static_cast<std::byte*>(attr.address);
  // The signals and the words after them are always zeroed; the data only when asked (zeroing
  // it here would first-touch every page from this thread). Private memory comes zeroed, but
  // touching it here keeps its page faults out of the program's first loops, as for a segment.
  if (fill == Fill::zero)
    std::memset(base_, 0, w.own.total);
  else
    std::memset(base_ + w.own.data_bytes, 0, w.own.total - w.own.data_bytes);
  w.base = base_;
  // Registered before the keys are exchanged: once a peer has them it may send put_signal
  // messages, and the handler finds the window by this id (windows are created collectively, so
  // ids agree across processes).
  {
    std::lock_guard lock(w.comm->windows_mu);
    w.id = static_cast<std::uint32_t>(w.comm->windows.size());
    w.comm->windows.push_back(this);
  }
  auto unregister = [&w] {
    std::lock_guard lock(w.comm->windows_mu);
    w.comm->windows[w.id] = nullptr;
  };

  void* rkey_buf = nullptr;
  size_t rkey_len = 0;
  if (ucs_status_t st = ucp_rkey_pack(w.comm->ctx, w.memh, &rkey_buf, &rkey_len); st != UCS_OK) {
    unregister();
    ucp_mem_unmap(w.comm->ctx, w.memh);
    delete impl_;
    throw CommError(std::string("packing a window's remote key: ") + ucs_status_string(st));
  }
  std::string mine(kKeyHeader, '\0');
  const std::uint64_t header[3] = {reinterpret_cast<std::uint64_t>(base_), bytes_, signals_};
  std::memcpy(mine.data(), header, kKeyHeader);
  mine.append(static_cast<const char*>(rkey_buf), rkey_len);
  ucp_rkey_buffer_release(rkey_buf);

  std::vector<std::string> all;
  try {
    all = comm.bootstrap().allgather(mine);
  } catch (...) {
    unregister();
    ucp_mem_unmap(w.comm->ctx, w.memh);
    delete impl_;
    throw;
  }
  {
    // Under the table's lock: a kWindowFreedAm handler looks the peers up.
    std::lock_guard lock(w.comm->windows_mu);
    w.peers = std::make_unique<Peer[]>(all.size());
    w.size = static_cast<int>(all.size());
  }
  for (std::size_t r = 0; r < all.size(); ++r) {
    std::uint64_t header[3] = {};
    if (all[r].size() >= kKeyHeader) std::memcpy(header, all[r].data(), kKeyHeader);
    try {
      if (all[r].size() < kKeyHeader) throw std::length_error("too short");
      w.peers[r].layout = Layout::of(header[1], header[2]);
    } catch (const std::length_error&) {
      unregister();
      ucp_mem_unmap(w.comm->ctx, w.memh);
      delete impl_;
      throw CommError("rank " + std::to_string(r) + " sent a malformed window key",
                      static_cast<int>(r));
    }
    w.peers[r].raddr = header[0];
    w.peers[r].packed = all[r].substr(kKeyHeader);
  }
  Peer& me = w.peers[comm.rank()];
  me.direct = base_;
  me.ready.store(true);
  try {
    w.resolve_same_host_peers(*this);
    // No process leaves the creation before every process has attached its same-host peers'
    // segments: a process that then fails at once (bad input found right after, the same on
    // every process) unwinds without the collective destruction and frees its segment, and a
    // peer still unpacking its key would find it gone, which UCX 1.13 answers with a crash.
    // (Every process alike: the job has a host of several processes or none.)
    bool shared = false;
    for (const auto& host : comm.hosts()) shared = shared || host.size() > 1;
    if (shared) comm.bootstrap().barrier();
  } catch (...) {
    for (int r = 0; r < comm.size(); ++r)
      if (w.peers[r].rkey) ucp_rkey_destroy(w.peers[r].rkey);
    unregister();
    ucp_mem_unmap(w.comm->ctx, w.memh);
    delete impl_;
    throw;
  }
}

// A same-host peer's key names its shared-memory segment, which lives only as long as someone
// holds it: unpacked now, while every owner is still in this collective creation (it leaves the
// creation only once every process has unpacked, and frees its window only after), the
// segment stays attached here whatever becomes of its owner. Unpacked later, after the owner
// died, UCX 1.13 crashes (not fails) on the segment that is gone. Remote peers stay lazy.
void WindowImpl::resolve_same_host_peers(WindowBytes& win) {
  for (int r = 0; r < comm->size; ++r)
    if (r != comm->rank && win.comm_->same_host(r)) (void)peer(r, win);
}

namespace {

std::atomic<int> freed_messages_in_flight{0};

// Tells every live peer reached through UCX that window `id` is gone (kWindowFreedAm), waiting
// a bounded time for the messages to leave; a peer that is dead or unreachable is skipped.
void notify_freed(CommImpl& c, std::uint32_t id) {
  for (int r = 0; r < c.size; ++r) {
    if (r == c.rank || c.dead[r].load(std::memory_order_acquire)) continue;
    ucp_ep_h ep = c.eps[r].load(std::memory_order_acquire);
    if (!ep) continue;  // never connected: it reaches this window by load/store, if at all
    auto* msg = new WindowFreedMessage{id, c.rank};
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    prm.user_data = msg;
    prm.cb.send = [](void* request, ucs_status_t, void* user) {
      delete static_cast<WindowFreedMessage*>(user);
      ucp_request_free(request);
      freed_messages_in_flight.fetch_sub(1, std::memory_order_release);
    };
    ucs_status_ptr_t sp = ucp_am_send_nbx(ep, kWindowFreedAm, msg, sizeof *msg, nullptr, 0, &prm);
    if (UCS_PTR_IS_PTR(sp))
      freed_messages_in_flight.fetch_add(1, std::memory_order_relaxed);
    else
      delete msg;  // sent at once, or failed (a peer going away): nothing to wait for
  }
  // Push the messages out, a bounded time (the callbacks free them whenever they complete).
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  try {
    while (freed_messages_in_flight.load(std::memory_order_acquire) > 0 &&
           std::chrono::steady_clock::now() < until)
      c.progress_once();
  } catch (...) {
  }
}

}  // namespace

WindowBytes::~WindowBytes() {
  Impl& w = *impl_;
  CommImpl& c = *w.comm;
  // Nobody may touch this memory once it is unmapped: everyone completes, then meets.
  try {
    comm_->flush_all();
  } catch (...) {
  }
  bool met = comm_->size() == 1;
  std::string why;
  if (!met && c.may_meet()) {
    try {
      if (!c.coll || this == c.coll.get())  // the barrier's own window
        comm_->bootstrap().barrier();
      else
        comm_->barrier();
      met = true;
    } catch (const std::exception& e) {
      why = e.what();
      c.failed.store(true, std::memory_order_relaxed);
      std::lock_guard lock(c.reason_mu);
      if (c.teardown_failure.empty())
        c.teardown_failure =
            "window " + std::to_string(w.id) + " could not meet the others: " + why;
    }
  }
  {
    std::lock_guard lock(c.windows_mu);
    c.windows[w.id] = nullptr;
  }
  if (!met) {
    // Some peer may still be using this window: it must learn that it is gone (load/store peers
    // from the word in the memory itself, the others by message), and its late operations must
    // land in memory still registered, not in memory reused for something else.
    w.own.freed_word(base_)->store(1, std::memory_order_release);
    if (!why.empty() && this != c.coll.get())
      std::fprintf(stderr,
                   "compas: rank %d: window %u destroyed without every process (%s): peers still "
                   "using it get an error\n",
                   c.rank, w.id, why.c_str());
    notify_freed(c, w.id);
  }
  for (int r = 0; r < comm_->size(); ++r)
    if (w.peers[r].rkey) ucp_rkey_destroy(w.peers[r].rkey);
  if (met) {
    ucp_mem_unmap(c.ctx, w.memh);
  } else {
    std::lock_guard lock(c.windows_mu);
    c.orphaned.push_back({w.memh, std::move(w.memory)});
  }
  delete impl_;
}

void WindowImpl::throw_freed(int rank) const {
  comm->failed.store(true, std::memory_order_relaxed);
  if (comm->coll && detail::Internals::window(*comm->coll) ==
                        this)  // the Comm's own window: the whole Comm is gone
    throw CommError("rank " + std::to_string(rank) +
                        " left the job: it destroyed its Comm while this process still needed it "
                        "(it failed, or ended without the collective calls the others made)",
                    rank);
  throw CommError("window " + std::to_string(id) + " of rank " + std::to_string(rank) +
                      " was freed while this process was still using it: rank " +
                      std::to_string(rank) +
                      " destroyed it without this process at its collective destruction",
                  rank);
}

void on_window_freed(CommImpl& m, const WindowFreedMessage& msg) {
  if (msg.rank < 0 || msg.rank >= m.size) return;
  std::lock_guard lock(m.windows_mu);
  if (msg.window >= m.windows.size() || !m.windows[msg.window]) return;
  WindowImpl& w = *detail::Internals::window(*m.windows[msg.window]);
  if (w.peers) w.peers[msg.rank].freed.store(true, std::memory_order_relaxed);
}

const Layout& WindowImpl::layout(int rank) const {
  if (rank < 0 || rank >= comm->size)
    throw std::out_of_range("rank " + std::to_string(rank) + " is outside the job: ranks are 0.." +
                            std::to_string(comm->size - 1));
  return peers[rank].layout;
}

std::size_t WindowBytes::bytes(int rank) const {
  return impl_->layout(rank).bytes;
}

std::size_t WindowBytes::signals(int rank) const {
  return impl_->layout(rank).signals;
}

Peer& WindowImpl::peer(int rank, WindowBytes& win) {
  (void)layout(rank);  // checks the rank
  Peer& p = peers[rank];
  if (p.ready.load(std::memory_order_acquire)) {
    if (p.freed.load(std::memory_order_relaxed) ||
        (p.direct && p.layout.freed_word(p.direct)->load(std::memory_order_acquire) != 0))
        [[unlikely]]
      throw_freed(rank);
    return p;
  }
  ucp_ep_h ep = comm->ep(rank);
  std::lock_guard lock(mu);
  if (p.ready.load(std::memory_order_acquire)) return p;
  // Same-host keys are unpacked at creation (resolve_same_host_peers); look at the process first
  // all the same, for a peer found dead since.
  comm->check_alive(rank, /*immediately=*/true);
  if (ucs_status_t st = ucp_ep_rkey_unpack(ep, p.packed.data(), &p.rkey); st != UCS_OK)
    comm->fail(rank, "unpacking the window key", st);
  if (comm->opt.direct && win.comm_->same_host(rank)) {
    void* ptr = nullptr;
    if (ucp_rkey_ptr(p.rkey, p.raddr, &ptr) == UCS_OK) p.direct = static_cast<std::byte*>(ptr);
  }
  p.ready.store(true, std::memory_order_release);
  return p;
}

bool WindowBytes::direct(int rank) {
  return impl_->peer(rank, *this).direct != nullptr;
}

std::byte* WindowBytes::peer_data(int rank) {
  return impl_->peer(rank, *this).direct;
}

namespace detail {

void throw_bytes_overflow(std::size_t count, std::size_t size, const char* what) {
  throw std::length_error(std::string(what) + ": " + std::to_string(count) + " of " +
                          std::to_string(size) + " bytes do not fit in memory");
}

void throw_offset_overflow(std::size_t offset) {
  throw std::out_of_range("element offset " + std::to_string(offset) +
                          " is outside every window (its byte offset does not fit a size_t)");
}

}  // namespace detail

}  // namespace compas::comm
