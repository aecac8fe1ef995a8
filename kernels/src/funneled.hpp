// A kernel's run is collective and funneled: it makes windows and runs collectives on the Comm
// before it calls Runtime::run itself, so it is refused (std::logic_error naming `call`) inside
// run() or from a thread other than the one that made the Runtime, before anything collective.
#pragma once

#include "compas/runtime/runtime.hpp"

namespace compas::kernels {

inline void check_funneled(Runtime& rt, const char* call) {
  rt.check_funneled(call, "run kernels from the thread that made the Runtime, outside run()");
}

}  // namespace compas::kernels
