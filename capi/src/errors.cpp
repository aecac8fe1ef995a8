// compas_last_error, compas_error_name and the exception -> code conversion.
#include "errors.hpp"

#include <atomic>
#include <exception>
#include <new>
#include <string>

#include "compas/comm/collectives.hpp"
#include "compas/comm/ucx.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas::capi {
namespace {

thread_local std::string last_error;
thread_local int last_code = COMPAS_OK;
std::atomic<bool> fatal{false};

int code_of(const std::exception& e) {
  if (const auto* c = dynamic_cast<const Error*>(&e)) return c->code();
  if (dynamic_cast<const CollectiveError*>(&e) || dynamic_cast<const comm::MismatchError*>(&e))
    return COMPAS_ERR_COLLECTIVE;
  if (dynamic_cast<const comm::UnusableError*>(&e)) return COMPAS_ERR_STATE;  // before CommError
  if (dynamic_cast<const comm::CommError*>(&e) || dynamic_cast<const comm::BootstrapError*>(&e))
    return COMPAS_ERR_COMM;
  if (dynamic_cast<const std::bad_alloc*>(&e)) return COMPAS_ERR_NOMEM;
  if (dynamic_cast<const std::invalid_argument*>(&e) ||
      dynamic_cast<const std::out_of_range*>(&e) || dynamic_cast<const std::length_error*>(&e) ||
      dynamic_cast<const std::domain_error*>(&e))
    return COMPAS_ERR_ARG;
  if (dynamic_cast<const std::logic_error*>(&e)) return COMPAS_ERR_STATE;
  return COMPAS_ERR_INTERNAL;
}

}  // namespace

int fail(int code, const char* call, const char* message) noexcept {
  try {
    last_code = code;
    last_error = std::string(call) + ": " + message;
  } catch (...) {
    last_error.clear();  // out of memory for the message itself: the code still says it
  }
  if (fatal.load()) end_job();
  return code;
}

int from_current_exception(const char* call) noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    return fail(code_of(e), call, e.what());
  } catch (...) {
    return fail(COMPAS_ERR_INTERNAL, call, "an unknown exception");
  }
}

int last_error_code() noexcept {
  return last_code;
}

void set_fatal(bool on) noexcept {
  fatal.store(on);
}

}  // namespace compas::capi

extern "C" const char* compas_last_error(void) {
  return compas::capi::last_error.c_str();
}

extern "C" const char* compas_error_name(int code) {
  switch (code) {
    case COMPAS_OK:
      return "COMPAS_OK";
    case COMPAS_ERR_ARG:
      return "COMPAS_ERR_ARG";
    case COMPAS_ERR_COLLECTIVE:
      return "COMPAS_ERR_COLLECTIVE";
    case COMPAS_ERR_HANDLE:
      return "COMPAS_ERR_HANDLE";
    case COMPAS_ERR_NOMEM:
      return "COMPAS_ERR_NOMEM";
    case COMPAS_ERR_COMM:
      return "COMPAS_ERR_COMM";
    case COMPAS_ERR_STATE:
      return "COMPAS_ERR_STATE";
    case COMPAS_ERR_INTERNAL:
      return "COMPAS_ERR_INTERNAL";
    default:
      return "unknown";
  }
}
