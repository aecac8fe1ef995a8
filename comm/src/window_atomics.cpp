// WindowBytes' atomics (fetch_add, compare_swap, atomic_update; 4 or 8 bytes): CPU atomics where
// load/store reaches the peer, UCX atomics otherwise.
#include <atomic>
#include <cstring>
#include <stdexcept>

#include "compas/comm/window.hpp"
#include "internals.hpp"
#include "ucx_impl.hpp"
#include "window_impl.hpp"

namespace compas::comm {

namespace {

using detail::check_range;
using detail::Peer;

std::uint64_t local_atomic(std::byte* at, ucp_atomic_op_t op, std::uint64_t value,
                           std::uint64_t expected, std::size_t width) {
  if (width == 8) {
    std::atomic_ref<std::uint64_t> a(*reinterpret_cast<std::uint64_t*>(at));
    if (op == UCP_ATOMIC_OP_ADD) return a.fetch_add(value, std::memory_order_acq_rel);
    std::uint64_t e = expected;
    a.compare_exchange_strong(e, value, std::memory_order_acq_rel);
    return e;
  }
  std::atomic_ref<std::uint32_t> a(*reinterpret_cast<std::uint32_t*>(at));
  if (op == UCP_ATOMIC_OP_ADD)
    return a.fetch_add(static_cast<std::uint32_t>(value), std::memory_order_acq_rel);
  auto e = static_cast<std::uint32_t>(expected);
  a.compare_exchange_strong(e, static_cast<std::uint32_t>(value), std::memory_order_acq_rel);
  return e;
}

// x op= value on this process's view of a peer's word, with the CPU's atomics; `op` is what
// ucx_op made of the caller's AtomicOp (one of the four it allows), so that AtomicOp is read once.
template <class W>
void local_update(std::byte* at, ucp_atomic_op_t op, W value) {
  std::atomic_ref<W> a(*reinterpret_cast<W*>(at));
  if (op == UCP_ATOMIC_OP_ADD)
    a.fetch_add(value, std::memory_order_relaxed);
  else if (op == UCP_ATOMIC_OP_AND)
    a.fetch_and(value, std::memory_order_relaxed);
  else if (op == UCP_ATOMIC_OP_OR)
    a.fetch_or(value, std::memory_order_relaxed);
  else
    a.fetch_xor(value, std::memory_order_relaxed);
}

ucp_atomic_op_t ucx_op(AtomicOp op) {
  switch (op) {
    case AtomicOp::add:
      return UCP_ATOMIC_OP_ADD;
    case AtomicOp::bit_and:
      return UCP_ATOMIC_OP_AND;
    case AtomicOp::bit_or:
      return UCP_ATOMIC_OP_OR;
    case AtomicOp::bit_xor:
      return UCP_ATOMIC_OP_XOR;
  }
  throw std::invalid_argument("atomic_update: operator " + std::to_string(static_cast<int>(op)) +
                              " is not allowed: add, bit_and, bit_or or bit_xor");
}

void check_atomic(const char* name, int rank, std::size_t offset, std::size_t width,
                  std::size_t bytes) {
  if (width != 4 && width != 8)
    throw std::invalid_argument(std::string(name) + ": width " + std::to_string(width) +
                                " is not allowed: atomics are 4 or 8 bytes wide");
  check_range(name, rank, offset, width, bytes);
  if (offset % width != 0)
    throw std::invalid_argument(std::string(name) + " at byte offset " + std::to_string(offset) +
                                " is not aligned to its width (" + std::to_string(width) + ")");
}

}  // namespace

void WindowBytes::atomic_update(int rank, std::size_t offset, AtomicOp op, std::uint64_t value,
                                std::size_t width) {
  check_atomic("atomic_update", rank, offset, width, bytes(rank));
  const ucp_atomic_op_t uop = ucx_op(op);
  Peer& p = impl_->peer(rank, *this);
  CommImpl& c = *impl_->comm;
  c.counts().atomic();
  if (p.direct) {
    if (width == 8)
      local_update<std::uint64_t>(p.direct + offset, uop, value);
    else
      local_update<std::uint32_t>(p.direct + offset, uop, static_cast<std::uint32_t>(value));
    return;
  }
  // No reply buffer: a post. UCX reads the operand before the call returns (it may complete
  // later); the request, when there is one, is released at once: flush completes it.
  const auto v32 = static_cast<std::uint32_t>(value);
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
  prm.datatype = ucp_dt_make_contig(width);
  const void* operand = width == 8 ? static_cast<const void*>(&value) : &v32;
  ucs_status_ptr_t sp =
      ucp_atomic_op_nbx(c.ep(rank), uop, operand, 1, p.raddr + offset, p.rkey, &prm);
  c.count_ucx_op(rank);
  if (UCS_PTR_IS_ERR(sp)) c.fail(rank, "atomic_update", UCS_PTR_STATUS(sp));
  if (UCS_PTR_IS_PTR(sp)) ucp_request_free(sp);
}

static Request window_atomic_nb(WindowBytes& win, WindowImpl& w, Comm& comm, const char* name,
                                int rank, std::size_t offset, ucp_atomic_op_t op,
                                std::uint64_t value, std::uint64_t expected, std::size_t width,
                                void* result) {
  check_atomic(name, rank, offset, width, win.bytes(rank));
  Peer& p = w.peer(rank, win);
  CommImpl& c = *w.comm;
  c.counts().atomic();
  if (p.direct) {
    const std::uint64_t old = local_atomic(p.direct + offset, op, value, expected, width);
    if (width == 8) {
      std::memcpy(result, &old, 8);
    } else {
      const auto old32 = static_cast<std::uint32_t>(old);
      std::memcpy(result, &old32, 4);
    }
    return {};
  }
  // UCX's compare-swap takes the compare value in `buffer` and the new value in the reply buffer
  // (which receives the old value); fetch-add takes the operand in `buffer`. Both live in the
  // Request until completion: hold[0] the operand, hold[1] the reply.
  const bool cswap = op == UCP_ATOMIC_OP_CSWAP;
  auto hold = std::make_unique<std::uint64_t[]>(2);
  const std::uint64_t operand = cswap ? expected : value, reply = cswap ? value : 0;
  if (width == 8) {
    hold[0] = operand;
    hold[1] = reply;
  } else {
    const auto o32 = static_cast<std::uint32_t>(operand), r32 = static_cast<std::uint32_t>(reply);
    std::memcpy(&hold[0], &o32, 4);
    std::memcpy(&hold[1], &r32, 4);
  }
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
  prm.datatype = ucp_dt_make_contig(width);
  prm.reply_buffer = &hold[1];
  ucs_status_ptr_t sp =
      ucp_atomic_op_nbx(c.ep(rank), op, &hold[0], 1, p.raddr + offset, p.rkey, &prm);
  c.count_ucx_op(rank);
  if (UCS_PTR_IS_ERR(sp)) c.fail(rank, name, UCS_PTR_STATUS(sp));
  return detail::Internals::request(&comm, sp, rank, name, std::move(hold), result, 8, width);
}

static std::uint64_t window_atomic(WindowBytes& win, WindowImpl& w, Comm& comm, const char* name,
                                   int rank, std::size_t offset, ucp_atomic_op_t op,
                                   std::uint64_t value, std::uint64_t expected, std::size_t width) {
  // A peer reached by load/store, every check passed inline (direct_peer, the width, the
  // alignment): the CPU's atomic, no Request.
  if ((width == 8 || width == 4) && offset % width == 0) [[likely]] {
    if (Peer* p = w.direct_peer(rank, offset, width)) [[likely]] {
      w.comm->counts().atomic();
      return local_atomic(p->direct + offset, op, value, expected, width);
    }
  }
  std::uint64_t r64 = 0;
  std::uint32_t r32 = 0;
  void* out = width == 8 ? static_cast<void*>(&r64) : static_cast<void*>(&r32);
  window_atomic_nb(win, w, comm, name, rank, offset, op, value, expected, width, out).wait();
  return width == 8 ? r64 : r32;
}

std::uint64_t WindowBytes::fetch_add(int rank, std::size_t offset, std::uint64_t value,
                                     std::size_t width) {
  return window_atomic(*this, *impl_, *comm_, "fetch_add", rank, offset, UCP_ATOMIC_OP_ADD, value,
                       0, width);
}

Request WindowBytes::fetch_add_nb(int rank, std::size_t offset, std::uint64_t value,
                                  std::size_t width, void* result) {
  return window_atomic_nb(*this, *impl_, *comm_, "fetch_add", rank, offset, UCP_ATOMIC_OP_ADD,
                          value, 0, width, result);
}

std::uint64_t WindowBytes::compare_swap(int rank, std::size_t offset, std::uint64_t expected,
                                        std::uint64_t desired, std::size_t width) {
  return window_atomic(*this, *impl_, *comm_, "compare_swap", rank, offset, UCP_ATOMIC_OP_CSWAP,
                       desired, expected, width);
}

Request WindowBytes::compare_swap_nb(int rank, std::size_t offset, std::uint64_t expected,
                                     std::uint64_t desired, std::size_t width, void* result) {
  return window_atomic_nb(*this, *impl_, *comm_, "compare_swap", rank, offset, UCP_ATOMIC_OP_CSWAP,
                          desired, expected, width, result);
}

}  // namespace compas::comm
