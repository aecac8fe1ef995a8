// Ending the whole job from one process: Runtime::abort, and the std::terminate handler the
// Runtime installs (an uncaught exception ends the job with one line, status 1; while no Runtime
// lives, an uncaught InputError ends this process with one line, status 2, and an uncaught
// comm::SecondJobError with one line, status 1).
#pragma once

namespace compas {
class Runtime;
namespace detail {

// Sets the process's terminate handler (once; the one it replaced still handles what it does
// not): an uncaught InputError while no Runtime is installed prints "compas: MESSAGE" and exits 2,
// an uncaught comm::SecondJobError the same with status 1.
void install_input_handler();

// Makes an uncaught exception end the job through rt.abort(1, what()); a CollectiveError (thrown
// alike on every process) is said by process 0 alone. The first Runtime of the process installs
// it; its destructor uninstalls it.
void install_terminate_handler(Runtime& rt);
void remove_terminate_handler(const Runtime& rt);

}  // namespace detail
}  // namespace compas
