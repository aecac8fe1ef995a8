// WindowBytes' put and get: a copy where load/store reaches the peer (direct_copy.hpp), a UCX
// operation otherwise.
#include <atomic>

#include "compas/comm/window.hpp"
#include "direct_copy.hpp"
#include "internals.hpp"
#include "ucx_impl.hpp"
#include "window_impl.hpp"

namespace compas::comm {

namespace {

using detail::check_range;
using detail::Peer;

ucp_request_param_t no_callback() {
  ucp_request_param_t p{};
  p.op_attr_mask = 0;
  return p;
}

}  // namespace

Request WindowBytes::put_nb(int rank, std::size_t offset, const void* src, std::size_t n) {
  check_range("put", rank, offset, n, impl_->layout(rank).bytes);
  Peer& p = impl_->peer(rank, *this);
  CommImpl& c = *impl_->comm;
  c.counts().put(n);
  if (n == 0) return {};
  if (p.direct) {
    detail::copy_direct(p.direct + offset, src, n, detail::Stores::cached);
    return {};
  }
  ucp_request_param_t prm = no_callback();
  ucs_status_ptr_t sp = ucp_put_nbx(c.ep(rank), src, n, p.raddr + offset, p.rkey, &prm);
  c.count_ucx_op(rank);  // after the issue: a flush that saw the count covers the operation
  if (UCS_PTR_IS_ERR(sp)) c.fail(rank, "put", UCS_PTR_STATUS(sp));
  return detail::Internals::request(comm_, sp, rank, "put");
}

void WindowBytes::put(int rank, std::size_t offset, const void* src, std::size_t n) {
  // A peer reached by load/store, every check passed inline: the copy, no Request.
  if (Peer* p = impl_->direct_peer(rank, offset, n)) [[likely]] {
    impl_->comm->counts().put(n);
    detail::copy_direct(p->direct + offset, src, n, detail::Stores::cached);
    return;
  }
  put_nb(rank, offset, src, n).wait();
}

Request WindowBytes::get_nb(int rank, std::size_t offset, void* dst, std::size_t n) {
  check_range("get", rank, offset, n, impl_->layout(rank).bytes);
  Peer& p = impl_->peer(rank, *this);
  CommImpl& c = *impl_->comm;
  c.counts().get(n);
  if (n == 0) return {};
  if (p.direct) {
    std::atomic_thread_fence(std::memory_order_acquire);
    detail::copy_direct(dst, p.direct + offset, n, detail::Stores::cached);
    return {};
  }
  ucp_request_param_t prm = no_callback();
  ucs_status_ptr_t sp = ucp_get_nbx(c.ep(rank), dst, n, p.raddr + offset, p.rkey, &prm);
  c.count_ucx_op(rank);
  if (UCS_PTR_IS_ERR(sp)) c.fail(rank, "get", UCS_PTR_STATUS(sp));
  return detail::Internals::request(comm_, sp, rank, "get");
}

void WindowBytes::get(int rank, std::size_t offset, void* dst, std::size_t n) {
  if (Peer* p = impl_->direct_peer(rank, offset, n)) [[likely]] {
    impl_->comm->counts().get(n);
    std::atomic_thread_fence(std::memory_order_acquire);
    detail::copy_direct(dst, p->direct + offset, n, detail::Stores::cached);
    return;
  }
  get_nb(rank, offset, dst, n).wait();
}

}  // namespace compas::comm
