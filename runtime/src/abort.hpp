// Ending the whole job from one process: Runtime::abort, and the std::terminate handler the
// Runtime installs while it lives (an uncaught exception ends the job with one line, status 1).
#pragma once

namespace compas {
class Runtime;
namespace detail {

// Makes an uncaught exception end the job through rt.abort(1, what()); a CollectiveError (thrown
// alike on every process) is said by process 0 alone. The first Runtime of the process installs
// it; its destructor puts the previous handler back.
void install_terminate_handler(Runtime& rt);
void remove_terminate_handler(const Runtime& rt);

}  // namespace detail
}  // namespace compas
