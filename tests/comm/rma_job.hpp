// test_comm_rma's job, made by its main (test_rma.cpp) and shared by its files.
#pragma once

#include "compas/comm/comm.hpp"

namespace rma_job {

compas::comm::Comm& comm();
int rank();    // this process's rank
int nranks();  // the job's processes

}  // namespace rma_job
