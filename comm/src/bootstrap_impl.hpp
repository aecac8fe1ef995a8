// Internal: constructors of the bootstrap kinds, defined in their own sources.
#pragma once

#include <memory>

#include "compas/comm/bootstrap.hpp"

namespace compas::comm::detail {

std::unique_ptr<Bootstrap> make_tcp_bootstrap(const TcpOptions& options);
#ifdef COMPAS_WITH_MPI
std::unique_ptr<Bootstrap> make_mpi_bootstrap();
#endif

}  // namespace compas::comm::detail
