// What happens to a UCX request whose wait timed out (CommImpl::abandon, sever).
//
// Cancelling and freeing it is not enough: ucp_request_cancel does nothing for RMA and atomics,
// and UCX would still write a late reply into the caller's get destination or into an atomic's
// reply buffer after both were freed. Closing the endpoint makes UCX complete every request on
// it with an error and drop what arrives later; the job is failing anyway (the peer is hung or
// unreachable), and every later operation towards that peer fails at once, naming it.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "internals.hpp"
#include "ucx_impl.hpp"

namespace compas::comm {

namespace {
using Clock = std::chrono::steady_clock;
constexpr auto kAbandonGrace = std::chrono::seconds(2);
}  // namespace

void CommImpl::abandon(ucs_status_ptr_t sp, int peer, const char* op,
                       std::unique_ptr<std::uint64_t[]> hold) {
  failed.store(true, std::memory_order_relaxed);
  ucp_request_cancel(worker, sp);
  if (peer >= 0 && peer != rank) sever(peer, "an operation towards it timed out");
  const auto until = Clock::now() + kAbandonGrace;
  while (ucp_request_check_status(sp) == UCS_INPROGRESS && Clock::now() < until)
    ucp_worker_progress(worker);
  // Freed now, or (still in progress) released by UCX when it completes.
  const bool released = ucp_request_check_status(sp) != UCS_INPROGRESS;
  ucp_request_free(sp);
  if (released) return;
  if (std::string_view(op) == "get") {
    // Its destination is the caller's memory, which cannot be kept: a reply still on its way
    // would land in memory the caller may have freed. End the process instead (the job is
    // failing: its launcher ends the others).
    std::fprintf(stderr,
                 "compas: a get from rank %d timed out and UCX would still write its reply into "
                 "the caller's memory (the endpoint could not be closed); ending this process\n",
                 peer);
    std::_Exit(1);
  }
  if (!hold) return;
  std::lock_guard lock(abandoned_mu);
  abandoned.push_back(std::move(hold));
}

void CommImpl::sever(int r, const std::string& why) {
  {
    std::lock_guard lock(reason_mu);
    if (dead_reason[r].empty()) dead_reason[r] = why;
  }
  // First: a thread that looks at the endpoint from now on throws instead of using it.
  dead[r].store(true, std::memory_order_release);
  ucs_status_ptr_t sp = nullptr;
  {
    // Not held while progressing: callbacks run there may create endpoints.
    std::lock_guard lock(mu);
    ucp_ep_h e = eps[r].exchange(nullptr, std::memory_order_acq_rel);
    if (!e) return;
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_EP_CLOSE_FLAG_FORCE;
    sp = ucp_ep_close_nbx(e, &p);
  }
  if (!UCS_PTR_IS_PTR(sp)) return;
  const auto until = Clock::now() + kAbandonGrace;
  while (ucp_request_check_status(sp) == UCS_INPROGRESS && Clock::now() < until)
    ucp_worker_progress(worker);
  ucp_request_free(sp);
}

}  // namespace compas::comm
