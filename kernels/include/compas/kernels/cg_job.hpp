// NAS CG on a job of P processes x T threads (cg.hpp has the solver and the matrix).
//
// Rows decomposition: rows in whole chunks over processes (cg::row_block), then over the threads
// of each process. Between processes the solver's exchanges become one-sided: thread 0 of each
// process put_signals its rows of p (and its chunks' partial sums) into every other process's
// window and waits for theirs; the threads then copy the others' parts out of the window into
// their own p. Grid decomposition (P = C x C): NPB's 2-D one, the row reduction, transpose and
// dot-product reductions one-sided too (cg_grid_exchange.hpp). A grid adds the panel sums in the
// panel tree's order; rows add them left to right unless asked for the tree (JobParams), which
// gives a grid's bits. For one order, zeta and every vector are bitwise the same for every P x T;
// in the tree's order also for every grid. So by default (auto) a job of 16 or more processes
// that takes a grid differs in the last bits from one that takes rows.
#pragma once

#include <optional>
#include <string>

#include "compas/kernels/cg.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas::kernels::detail {
struct TestHooks;  // compas/kernels/test_hooks.hpp: for tests, not part of the interface
}  // namespace compas::kernels::detail

namespace compas::kernels::cg {

struct JobParams {
  char cls = 'S';
  Decomposition decomposition = Decomposition::automatic;
  // Unset: running with rows, tree with a grid. Running makes `automatic` take rows; with an
  // explicit grid it is std::invalid_argument.
  std::optional<SumOrder> sum_order;
  const detail::TestHooks* test = nullptr;  // faults tests inject (none when null)
};

struct JobResult {
  char cls = 'S';
  double zeta = 0, zeta_verify = 0, error = 0, rnorm = 0;
  bool verified = false;
  bool official = true;            // zeta_verify is NPB's
  double seconds = 0;              // timed iterations, slowest process
  double cpu_seconds = 0;          // all processes over the run
  double mops = 0;                 // NPB's Mop/s: npb_flops / seconds
  std::int64_t na = 0, nnz = 0;    // whole matrix
  double bytes_per_iteration = 0;  // inner CG iteration, whole job (IterationModel)
  double flops_per_iteration = 0;
  Grid grid;  // columns == 1: the rows decomposition
  SumOrder sum_order = SumOrder::tree;
  // Bytes a process puts per inner CG iteration (the largest over processes; the outer
  // iterations' own reductions and the residual spread over their 25 inner ones).
  double comm_bytes_per_iteration = 0;
  std::string verification;
};

// std::invalid_argument naming the class when it has fewer row chunks than `processes`, or when
// the job's processes on this host (`processes_here`, 0: all of them) need together more memory
// than this host can give (base::memory_limit), before anything is allocated.
void check(const ClassParams& cp, int processes, int processes_here = 0);

// Collective: every process calls it (outside Runtime::run). std::invalid_argument for a bad
// class, more processes than chunks, a grid the processes cannot form, or the running order with
// a grid.
JobResult run(Runtime& rt, const JobParams& p);

}  // namespace compas::kernels::cg
