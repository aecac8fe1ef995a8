// The Runtime's bad input: what its options' parsing and its checks before the job forms throw
// as std::invalid_argument becomes an InputError (runtime.hpp), with the handler set that ends
// the process with status 2 when nobody catches it.
#pragma once

#include <stdexcept>

#include "abort.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas::detail {

template <class F>
auto as_input_error(F&& f) -> decltype(f()) {
  install_input_handler();
  try {
    return f();
  } catch (const InputError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
}

}  // namespace compas::detail
