// Adding to a window's signals: signal_add, put_signal (by RMA, or as one active message that
// deliver_put_signal applies at the target), and direct_fetch_add_signal by load/store.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>

#include "compas/base/machine.hpp"
#include "compas/comm/window.hpp"
#include "direct_copy.hpp"
#include "internals.hpp"
#include "ucx_impl.hpp"
#include "window_impl.hpp"

namespace compas::comm {

namespace {

using detail::check_range;
using detail::check_signal;
using detail::Layout;
using detail::low_half;
using detail::Peer;

// signal[signal] += add on a peer reached by load/store, waking its sleepers.
void add_direct(const Peer& p, std::size_t signal, std::uint64_t add) {
  std::uint64_t* word = p.layout.signal(p.direct, signal);
  std::atomic_ref<std::uint64_t>(*word).fetch_add(add, std::memory_order_seq_cst);
  // Dekker with wait_until: the add is seen, or the sleeper's registration is.
  if (std::atomic_ref<std::uint32_t>(*p.layout.waiters(p.direct)).load(std::memory_order_seq_cst))
    base::futex_wake_all(low_half(word), base::FutexScope::shared);
}

}  // namespace

void WindowBytes::signal_add(int rank, std::size_t signal, std::uint64_t add) {
  check_signal("signal_add", rank, signal, impl_->layout(rank).signals);
  Peer& p = impl_->peer(rank, *this);
  CommImpl& c = *impl_->comm;
  c.counts().signal();
  if (p.direct) {
    add_direct(p, signal, add);
    return;
  }
  if (c.use_am_for_signals(rank)) {
    send_put_signal_am(rank, 0, nullptr, 0, signal, add).wait();
    return;
  }
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
  prm.datatype = ucp_dt_make_contig(8);
  const std::uint64_t raddr = p.raddr + p.layout.data_bytes + signal * 8;
  c.complete(ucp_atomic_op_nbx(c.ep(rank), UCP_ATOMIC_OP_ADD, &add, 1, raddr, p.rkey, &prm), rank,
             "signal");
  c.count_ucx_op(rank);
}

Request WindowBytes::put_signal_nb(int rank, std::size_t offset, const void* src, std::size_t n,
                                   std::size_t signal, std::uint64_t add) {
  const Layout& target = impl_->layout(rank);
  check_range("put_signal", rank, offset, n, target.bytes);
  check_signal("put_signal", rank, signal, target.signals);
  Peer& p = impl_->peer(rank, *this);
  CommImpl& c = *impl_->comm;
  if (p.direct) {
    c.counts().put(n);
    if (n) detail::copy_direct(p.direct + offset, src, n, detail::Stores::streaming);
    signal_add(rank, signal, add);  // release: the data is visible before the signal
    return {};
  }
  if (c.use_am_for_signals(rank)) {
    c.counts().put(n);
    c.counts().signal();
    return send_put_signal_am(rank, offset, src, n, signal, add);
  }
  Request data = put_nb(rank, offset, src, n);
  // The signal must not overtake the data.
  if (ucs_status_t st = ucp_worker_fence(c.worker); st != UCS_OK)
    c.fail(rank, "fence before a signal", st);
  signal_add(rank, signal, add);
  return data;  // the source buffer is reusable once this completes
}

void WindowBytes::put_signal(int rank, std::size_t offset, const void* src, std::size_t n,
                             std::size_t signal, std::uint64_t add) {
  // A peer reached by load/store, every check passed inline (direct_peer, the signal's index):
  // the copy and the add, no Request.
  Peer* p = impl_->direct_peer(rank, offset, n);
  if (p && signal < p->layout.signals) [[likely]] {
    CommImpl::OpCounts& counts = impl_->comm->counts();
    counts.put(n);
    counts.signal();
    detail::copy_direct(p->direct + offset, src, n, detail::Stores::streaming);
    add_direct(*p, signal, add);  // release: the data is visible before the signal
    return;
  }
  put_signal_nb(rank, offset, src, n, signal, add).wait();
}

Request WindowBytes::send_put_signal_am(int rank, std::size_t offset, const void* src,
                                        std::size_t n, std::size_t signal, std::uint64_t add) {
  CommImpl& c = *impl_->comm;
  // Puts issued earlier to this peer must be visible when the signal is.
  if (ucs_status_t st = ucp_worker_fence(c.worker); st != UCS_OK)
    c.fail(rank, "fence before a signal", st);
  // The header must outlive the send: the Request holds it.
  constexpr std::size_t words = (sizeof(PutSignalHeader) + 7) / 8;
  auto hold = std::make_unique<std::uint64_t[]>(words);
  auto* h = new (hold.get()) PutSignalHeader;
  h->origin = c.rank;
  // The barrier's signals are not counted: the barrier itself observes them, and counting them
  // would make every barrier's flush a round trip.
  h->counted = this != c.coll.get();
  if (h->counted) c.am_sent[rank].fetch_add(1, std::memory_order_seq_cst);
  h->window = impl_->id;
  h->signal = static_cast<std::uint32_t>(signal);
  h->offset = offset;
  h->add = add;
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  prm.flags = 0;
  ucs_status_ptr_t sp = ucp_am_send_nbx(c.ep(rank), kPutSignalAm, h, sizeof *h, src, n, &prm);
  c.count_ucx_op(rank);
  if (UCS_PTR_IS_ERR(sp)) c.fail(rank, "put_signal", UCS_PTR_STATUS(sp));
  return detail::Internals::request(comm_, sp, rank, "put_signal", std::move(hold));
}

namespace {

// Adds to a signal word of this process and wakes its sleepers (see wait_until).
void apply_signal(WindowImpl& w, std::uint32_t signal, std::uint64_t add) {
  std::uint64_t* word = w.own.signal(w.base, signal);
  std::atomic_ref<std::uint64_t>(*word).fetch_add(add, std::memory_order_seq_cst);
  if (std::atomic_ref<std::uint32_t>(*w.own.waiters(w.base)).load(std::memory_order_seq_cst))
    base::futex_wake_all(low_half(word), base::FutexScope::shared);
}

struct PendingSignal {
  WindowImpl* window;
  std::uint32_t signal;
  std::uint64_t add;
  int origin;
  bool counted;  // toward flush
};

}  // namespace

ucs_status_t deliver_put_signal(CommImpl& m, const PutSignalHeader& h, void* data,
                                std::size_t length, const ucp_am_recv_param_t* param) {
  WindowBytes* win = nullptr;
  {
    std::lock_guard lock(m.windows_mu);
    if (h.window < m.windows.size()) win = m.windows[h.window];
  }
  if (!win) {
    std::fprintf(stderr, "compas: rank %d: put_signal for window %u, which does not exist here\n",
                 m.rank, h.window);
    return UCS_OK;
  }
  WindowImpl& w = *detail::Internals::window(*win);
  if (h.origin < 0 || h.origin >= m.size) {
    std::fprintf(stderr, "compas: rank %d: put_signal from unknown rank %d dropped\n", m.rank,
                 h.origin);
    return UCS_OK;
  }
  if (h.offset > w.own.bytes || length > w.own.bytes - h.offset || h.signal >= w.own.signals) {
    std::fprintf(stderr, "compas: rank %d: put_signal outside window %u dropped\n", m.rank,
                 h.window);
    return UCS_OK;
  }
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    if (length) std::memcpy(w.base + h.offset, data, length);
    apply_signal(w, h.signal, h.add);
    if (h.counted) m.note_applied(h.origin);
    return UCS_OK;
  }
  // Rendezvous: fetch the payload straight into the window, then signal.
  auto* pending = new PendingSignal{&w, h.signal, h.add, h.origin, h.counted != 0};
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  prm.user_data = pending;
  prm.cb.recv_am = [](void* request, ucs_status_t status, size_t, void* user) {
    auto* p = static_cast<PendingSignal*>(user);
    if (status == UCS_OK) {
      apply_signal(*p->window, p->signal, p->add);
      if (p->counted) p->window->comm->note_applied(p->origin);
    } else {
      std::fprintf(stderr, "compas: rank %d: receiving a put_signal payload from rank %d: %s\n",
                   p->window->comm->rank, p->origin, ucs_status_string(status));
    }
    delete p;
    ucp_request_free(request);
  };
  ucs_status_ptr_t sp = ucp_am_recv_data_nbx(m.worker, data, w.base + h.offset, length, &prm);
  if (sp == nullptr) {
    apply_signal(w, h.signal, h.add);
    if (h.counted) m.note_applied(h.origin);
    delete pending;
  } else if (UCS_PTR_IS_ERR(sp)) {
    std::fprintf(stderr, "compas: rank %d: receiving a put_signal payload from rank %d: %s\n",
                 m.rank, h.origin, ucs_status_string(UCS_PTR_STATUS(sp)));
    delete pending;
  }
  return UCS_OK;
}

std::uint64_t WindowBytes::direct_fetch_add_signal(int rank, std::size_t index, std::uint64_t add,
                                                   bool wake) {
  check_signal("direct_fetch_add_signal", rank, index, impl_->layout(rank).signals);
  Peer& p = impl_->peer(rank, *this);
  if (!p.direct)
    throw std::logic_error("direct_fetch_add_signal: rank " + std::to_string(rank) +
                           " is not reached by load/store");
  impl_->comm->counts().signal();
  std::uint64_t* word = p.layout.signal(p.direct, index);
  const std::uint64_t old =
      std::atomic_ref<std::uint64_t>(*word).fetch_add(add, std::memory_order_seq_cst);
  // Dekker with wait_for_word: the add is seen, or the sleeper's registration is.
  if (wake &&
      std::atomic_ref<std::uint32_t>(*p.layout.waiters(p.direct)).load(std::memory_order_seq_cst))
    base::futex_wake_all(low_half(word), base::FutexScope::shared);
  return old;
}

}  // namespace compas::comm
