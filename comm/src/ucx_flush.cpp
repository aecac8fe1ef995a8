// Comm's flushes: flush, flush_all and fence over UCX, and the active-message flush protocol that
// makes them cover signals sent as active messages (requests, acknowledgements, applied counts).
#include <atomic>
#include <stdexcept>

#include "compas/comm/ucx.hpp"
#include "internals.hpp"
#include "ucx_impl.hpp"
#include "ucx_status.hpp"

namespace compas::comm {

void CommImpl::note_applied(int origin) {
  am_applied[origin].fetch_add(1, std::memory_order_seq_cst);
  if (acks_pending.load(std::memory_order_seq_cst) == 0) return;
  std::lock_guard lock(acks_mu);
  for (auto it = flush_waiting.begin(); it != flush_waiting.end();) {
    if (am_applied[it->rank].load() >= it->seq) {
      acks_due.push_back(*it);
      it = flush_waiting.erase(it);
    } else {
      ++it;
    }
  }
}

void CommImpl::on_flush_request(const FlushMessage& req) {
  std::lock_guard lock(acks_mu);
  if (am_applied[req.rank].load(std::memory_order_seq_cst) >= req.seq)
    acks_due.push_back(req);
  else
    flush_waiting.push_back(req);  // a rendezvous payload is still on its way
  acks_pending.store(static_cast<int>(flush_waiting.size() + acks_due.size()));
}

void CommImpl::on_flush_ack(const FlushMessage& ack) {
  auto& acked = am_acked[ack.rank];
  std::uint64_t cur = acked.load();
  while (cur < ack.seq && !acked.compare_exchange_weak(cur, ack.seq)) {
  }
}

void CommImpl::send_due_acks() {
  if (acks_pending.load(std::memory_order_relaxed) == 0) return;
  std::vector<FlushMessage> due;
  {
    std::lock_guard lock(acks_mu);
    due.swap(acks_due);
    acks_pending.store(static_cast<int>(flush_waiting.size()));
  }
  for (const FlushMessage& req : due) {
    auto* ack = new FlushMessage{rank, 0, req.seq};
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    prm.user_data = ack;
    prm.cb.send = [](void* request, ucs_status_t, void* user) {
      delete static_cast<FlushMessage*>(user);
      ucp_request_free(request);
    };
    ucs_status_ptr_t sp;
    try {
      sp = ucp_am_send_nbx(ep(req.rank), kFlushAckAm, ack, sizeof *ack, nullptr, 0, &prm);
    } catch (const CommError&) {
      sp = UCS_STATUS_PTR(UCS_ERR_UNREACHABLE);  // the origin is gone; nobody waits for this
    }
    if (!UCS_PTR_IS_PTR(sp)) delete ack;  // done at once, or failed
  }
}

void CommImpl::flush_signals(const std::vector<int>& targets) {
  std::vector<std::pair<int, std::uint64_t>> asked;
  for (int r : targets) {
    const std::uint64_t seq = am_sent[r].load(std::memory_order_seq_cst);
    if (am_acked[r].load(std::memory_order_seq_cst) >= seq) continue;
    FlushMessage req{rank, 0, seq};
    ucp_request_param_t prm{};
    complete(ucp_am_send_nbx(ep(r), kFlushRequestAm, &req, sizeof req, nullptr, 0, &prm), r,
             "flush request");
    asked.emplace_back(r, seq);
  }
  for (auto [r, seq] : asked)
    wait([&, r = r, seq = seq] { return am_acked[r].load(std::memory_order_seq_cst) >= seq; },
         [r = r] { return "the signals sent to rank " + std::to_string(r) + " to be applied"; }, r);
}

void Comm::flush(int r) {
  Impl& m = *impl_;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (r < 0 || r >= m.size)
    throw std::out_of_range("flush: rank " + std::to_string(r) + " is outside the job");
  ucp_ep_h ep = m.eps[r].load(std::memory_order_acquire);
  if (!ep) return;
  // Nothing handed to UCX since the last flush (load/store peers): the fence above is all.
  const std::uint64_t issued = m.ucx_ops[r].load(std::memory_order_acquire);
  if (issued != m.ucx_flushed[r].load(std::memory_order_relaxed)) {
    m.check_alive(r);
    ucp_request_param_t p{};
    m.complete(ucp_ep_flush_nbx(ep, &p), r, "flush");
    std::uint64_t seen = m.ucx_flushed[r].load();
    while (seen < issued && !m.ucx_flushed[r].compare_exchange_weak(seen, issued)) {
    }
  }
  if (m.am_sent[r].load(std::memory_order_relaxed) != 0) m.flush_signals({r});
}

void Comm::flush_all() {
  Impl& m = *impl_;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (m.connected.load() == 0) return;
  const std::uint64_t issued = m.ucx_ops_total.load(std::memory_order_acquire);
  if (issued != m.ucx_flushed_total.load(std::memory_order_relaxed)) {
    ucp_request_param_t p{};
    m.complete(ucp_worker_flush_nbx(m.worker, &p), -1, "flush_all");
    std::uint64_t seen = m.ucx_flushed_total.load();
    while (seen < issued && !m.ucx_flushed_total.compare_exchange_weak(seen, issued)) {
    }
    for (int r = 0; r < m.size; ++r) {
      const std::uint64_t per = m.ucx_ops[r].load();
      std::uint64_t old = m.ucx_flushed[r].load();
      while (old < per && !m.ucx_flushed[r].compare_exchange_weak(old, per)) {
      }
    }
  }
  std::vector<int> targets;
  for (int r = 0; r < m.size; ++r)
    if (m.am_sent[r].load(std::memory_order_relaxed) != 0) targets.push_back(r);
  if (!targets.empty()) m.flush_signals(targets);
}

void Comm::fence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (impl_->connected.load() == 0) return;
  check(ucp_worker_fence(impl_->worker), "ucp_worker_fence");
}

}  // namespace compas::comm
