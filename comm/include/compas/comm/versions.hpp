// The versions of the communication libraries this build runs on, for reports.
#pragma once

#include <string>

namespace compas::comm {

// UCX's, as the library loaded says it ("1.13.1").
std::string ucx_version();

// The MPI library's (MPI_Get_library_version's first line), or "" when compas was built without
// MPI.
std::string mpi_version();

}  // namespace compas::comm
