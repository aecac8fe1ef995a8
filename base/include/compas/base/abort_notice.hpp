// A rank's word to its launcher that it ends the job (Runtime::abort, compas_abort): compas-run
// hands every rank the writing end of one pipe (COMPAS_ABORT_FD); a rank that aborts writes its
// rank and status there before it exits. Its peers, which lose it in a collective, may end with
// status 1 before its own end is reaped: the notice, written first, lets compas-run name the
// rank that aborted and exit with its status every time.
#pragma once

#include <cstdint>

namespace compas::base {

// What a rank writes (one write of 8 bytes: atomic on a pipe).
struct AbortNotice {
  std::int32_t rank = -1;
  std::int32_t status = 0;
};

// Takes the pipe COMPAS_ABORT_FD names, when set, as this process's way to tell its launcher
// (close-on-exec from then on, so that programs it starts do not hold it). Throws
// std::invalid_argument naming the value when it is not a descriptor open for writing on a pipe.
// Called by the tcp bootstrap when it forms a job from the environment.
void adopt_abort_pipe();

// Writes {rank, status} to the adopted pipe, if any; nothing else (any thread, before _Exit).
void tell_launcher_of_abort(int rank, int status) noexcept;

}  // namespace compas::base
