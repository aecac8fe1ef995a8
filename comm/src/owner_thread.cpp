#include "owner_thread.hpp"

#include <stdexcept>
#include <thread>
#include "internals.hpp"

namespace compas::comm::detail {

void require_owner_thread(const CommImpl& m, const char* call) {
  if (std::this_thread::get_id() == m.owner) return;
  std::string what = call;
  what += ": called from a thread other than the one that made the Comm (the Runtime's thread; ";
  what +=
      "inside Runtime::run, thread 0): windows, barriers and process collectives are collective ";
  what += "over the processes, and one thread per process calls them, the same number of times ";
  what += "on every process";
  throw std::logic_error(what);
}

}  // namespace compas::comm::detail
