// Request: an operation in flight, made from a UCX request; waits for it, copies an atomic's
// reply out, and keeps the memory UCX may still touch until it completes.
#include <cstring>

#include "compas/comm/ucx.hpp"
#include "internals.hpp"
#include "ucx_impl.hpp"

namespace compas::comm {

Request::Request(Comm* comm, void* ucx_request, int peer, const char* op,
                 std::unique_ptr<std::uint64_t[]> hold, void* result, std::size_t result_at,
                 std::size_t result_size)
    : comm_(comm),
      req_(ucx_request),
      peer_(peer),
      op_(op),
      hold_(std::move(hold)),
      result_(result),
      result_at_(result_at),
      result_size_(result_size) {
  if (!req_) finish();  // complete at issue
}

Request::Request(Request&& o) noexcept
    : comm_(o.comm_),
      req_(o.req_),
      peer_(o.peer_),
      op_(o.op_),
      hold_(std::move(o.hold_)),
      result_(o.result_),
      result_at_(o.result_at_),
      result_size_(o.result_size_) {
  o.req_ = nullptr;
  o.result_ = nullptr;
}

Request& Request::operator=(Request&& o) noexcept {
  if (this != &o) {
    if (req_) {
      try {
        wait();
      } catch (...) {
      }
    }
    comm_ = o.comm_;
    req_ = o.req_;
    peer_ = o.peer_;
    op_ = o.op_;
    hold_ = std::move(o.hold_);
    result_ = o.result_;
    result_at_ = o.result_at_;
    result_size_ = o.result_size_;
    o.req_ = nullptr;
    o.result_ = nullptr;
  }
  return *this;
}

Request::~Request() {
  if (req_) {
    try {
      wait();
    } catch (...) {
    }
  }
}

void Request::finish() {
  if (result_ && hold_ && result_size_)
    std::memcpy(result_, reinterpret_cast<const std::byte*>(hold_.get()) + result_at_,
                result_size_);
  result_ = nullptr;
  hold_.reset();
}

bool Request::test() {
  if (!req_) return true;
  detail::Internals::comm(*comm_).progress_once();
  const ucs_status_t st = ucp_request_check_status(req_);
  if (st == UCS_INPROGRESS) return false;
  ucp_request_free(req_);
  req_ = nullptr;
  if (st != UCS_OK) {
    hold_.reset();
    detail::Internals::comm(*comm_).fail(peer_, op_, st);
  }
  finish();
  return true;
}

void Request::wait() {
  if (!req_) return;
  void* r = req_;
  req_ = nullptr;
  try {
    detail::Internals::comm(*comm_).complete(r, peer_, op_, &hold_);
  } catch (...) {
    hold_.reset();
    throw;
  }
  finish();
}

}  // namespace compas::comm
