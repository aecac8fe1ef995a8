// The comm layer's access to what its public classes keep private: their implementations and
// the Request made from a UCX request. Only comm/src includes this.
#pragma once

#include <utility>

#include "compas/comm/collectives.hpp"
#include "compas/comm/ucx.hpp"
#include "compas/comm/window.hpp"

namespace compas::comm::detail {

struct Internals {
  // The implementations' names, private to their classes: comm/src names them through these.
  using CommImpl = Comm::Impl;
  using WindowImpl = WindowBytes::Impl;
  using CollectivesImpl = ProcessCollectives::Impl;

  static CommImpl& comm(Comm& c) { return c.impl(); }
  static WindowImpl* window(WindowBytes& w) { return w.impl(); }
  static std::uint64_t direct_fetch_add_signal(WindowBytes& w, int rank, std::size_t index,
                                               std::uint64_t add, bool wake = true) {
    return w.direct_fetch_add_signal(rank, index, add, wake);
  }
  static void direct_wait_until(WindowBytes& w, int rank, std::size_t index, std::uint64_t at_least,
                                const char* what, int from_rank = -1) {
    w.direct_wait_until(rank, index, at_least, what, from_rank);
  }
  template <class... Args>
  static Request request(Args&&... args) {
    return Request(std::forward<Args>(args)...);
  }
};

}  // namespace compas::comm::detail

namespace compas::comm {
using CommImpl = detail::Internals::CommImpl;
using WindowImpl = detail::Internals::WindowImpl;
using CollectivesImpl = detail::Internals::CollectivesImpl;
}  // namespace compas::comm
