// The error model of the C API: every entry point runs its body through guard(), which catches
// every exception and turns it into a compas_error code and this thread's last-error message.
#pragma once

#include <stdexcept>
#include <string>

#include "compas/compas.h"

namespace compas::capi {

// An error the C layer itself detects, with its code.
class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// Records `message` (prefixed by `call`) as this thread's last error; returns code.
int fail(int code, const char* call, const char* message) noexcept;
// The code of the exception being handled (inside a catch block), its message recorded.
int from_current_exception(const char* call) noexcept;

// The code of the last failure on this thread (COMPAS_OK before any).
int last_error_code() noexcept;

// The process's error mode: with fatal on, fail() ends the job (end_job) instead of returning.
void set_fatal(bool on) noexcept;
// compas_fail on the process's runtime (runtime.cpp): the message, then status 2 for
// COMPAS_ERR_ARG, else 1, on every process; before compas_init succeeded, on this one.
[[noreturn]] void end_job() noexcept;

template <class F>
int guard(const char* call, F&& body) noexcept {
  try {
    body();
    return COMPAS_OK;
  } catch (...) {
    return from_current_exception(call);
  }
}

// Throws Error(COMPAS_ERR_ARG) naming `what` when p is NULL.
inline void need(const void* p, const char* what) {
  if (p == nullptr) throw Error(COMPAS_ERR_ARG, std::string(what) + " is NULL");
}

}  // namespace compas::capi
