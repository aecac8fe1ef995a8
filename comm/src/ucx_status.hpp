// UCX status codes as CommError: the message of a failed UCX call, and the check that throws it.
#pragma once

#include <ucp/api/ucp.h>

#include <string>

#include "compas/comm/ucx.hpp"

namespace compas::comm {

inline std::string ucx_error(const std::string& what, ucs_status_t status) {
  return what + ": " + ucs_status_string(status);
}

inline void check(ucs_status_t status, const std::string& what) {
  if (status != UCS_OK) throw CommError(ucx_error(what, status));
}

}  // namespace compas::comm
