// Internal: constructors of the bootstrap kinds, defined in their own sources.
#pragma once

#include <memory>

#include "compas/comm/bootstrap.hpp"

namespace compas::comm::detail {

std::unique_ptr<Bootstrap> make_tcp_bootstrap(const TcpOptions& options);

// The rendezvous socket a launcher hands to rank 0 (COMPAS_RENDEZVOUS_FD) is taken by the first
// tcp bootstrap and closed with it: the descriptor a bootstrap of this process adopted (-1 when
// none), so that a second one can say why the descriptor no longer names the socket.
void note_adopted_listener(int fd);
int adopted_listener();
#ifdef COMPAS_WITH_MPI
std::unique_ptr<Bootstrap> make_mpi_bootstrap();
bool mpi_finalized();  // MPI_Finalized
#endif

}  // namespace compas::comm::detail
