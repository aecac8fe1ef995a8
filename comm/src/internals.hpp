// The comm layer's access to what its public classes keep private: their implementations and
// the Request made from a UCX request. Only comm/src includes this.
#pragma once

#include <utility>

#include "compas/comm/ucx.hpp"
#include "compas/comm/window.hpp"

namespace compas::comm::detail {

struct Internals {
  static Comm::Impl& comm(Comm& c) { return c.impl(); }
  static WindowBytes::Impl* window(WindowBytes& w) { return w.impl(); }
  template <class... Args>
  static Request request(Args&&... args) {
    return Request(std::forward<Args>(args)...);
  }
};

}  // namespace compas::comm::detail
