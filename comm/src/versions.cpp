// Library versions (compas/comm/versions.hpp).
#include "compas/comm/versions.hpp"

#include <ucp/api/ucp.h>

#ifdef COMPAS_WITH_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace compas::comm {

std::string ucx_version() {
  const char* v = ucp_get_version_string();
  return v ? v : "";
}

std::string mpi_version() {
#ifdef COMPAS_WITH_MPI
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(text, &len) != MPI_SUCCESS) return "unknown";
  std::string v(text, static_cast<std::size_t>(len));
  if (const auto nl = v.find_first_of("\r\n,"); nl != std::string::npos) v.resize(nl);
  return v;
#else
  return "";
#endif
}

}  // namespace compas::comm
