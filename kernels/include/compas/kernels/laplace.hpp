// Laplace: explicit Jacobi sweeps of the 5-point Laplacian on an (n+2) x (n+2) grid of the unit
// square (n x n unknowns, Dirichlet boundary), COMPaS section 5.1.
//
// Decomposition: interior rows in blocks over processes (Runtime::process_block), the rows of a
// block over the threads of the process (by default shared out dynamically within a sweep:
// Schedule). Each process holds its rows plus one halo row above and below, twice (Jacobi reads one
// copy and writes the other): two DistArray<double, 2> of the porting layer. After a sweep the
// copy just written exchanges its halo rows (DistArray::exchange_halos: thread 0 puts its first
// and last new rows straight into the neighbours' halo rows with put_signal, no message buffer,
// no copy at the receiver, and waits for the neighbours' signals).
//
// Problem and verification: boundary values of the harmonic polynomial f(x, y) = x^2 - y^2, whose
// discrete 5-point Laplacian is exactly zero, so f is the discrete solution. The interior starts
// at f plus two eigenmodes of the Jacobi iteration, A sin(pi x) sin(pi y) + B sin(3 pi x)
// sin(2 pi y): after k sweeps each mode is multiplied by its eigenvalue^k
// ((cos(a pi h) + cos(b pi h)) / 2, h = 1 / (n + 1)), so the field after any number of sweeps is
// known in closed form and checked point by point. With a tolerance, sweeps stop when the largest
// change of a sweep falls below it, and the field must match f within the bound that follows
// from the slowest mode's contraction. Every point is computed by the same expression in the same
// order whatever the decomposition, so the field is bitwise identical for every P x T
// (Result::field_hash).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "compas/base/stores.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas::kernels::detail {
struct TestHooks;  // compas/kernels/test_hooks.hpp: for tests, not part of the interface
}  // namespace compas::kernels::detail

namespace compas::kernels::laplace {

// Stores of the sweep: ordinary, non-temporal (streaming), or automatic: when both copies of the
// field exceed the caches below the last level, sweeps 2 to 9 alternate the two kinds and the
// faster is kept (in runs of at least 12 sweeps; shorter ones stream when the field exceeds twice
// the last level).
using Stores = base::Stores;  // automatic, cached or streaming (direct is the sort's)

// Who sweeps which rows of a process. fixed: each thread its own block, every sweep. dynamic
// (default): each thread's block is cut into groups of whole 4-row blocks; a thread sweeps its
// own groups in order, then takes the groups that threads on its socket have not started, so a
// thread whose core runs slower (another job, interrupts, a virtual machine's other guests)
// sweeps fewer rows and the team does not wait for it at every sweep's barrier. Which thread
// computes a point does not change its bits.
enum class Schedule { dynamic, fixed };

struct Params {
  std::size_t n = 640;   // interior points per side (the paper's size)
  int iters = 100;       // sweeps (the most, when tol > 0)
  double tol = 0;        // > 0: stop when max |change| of a sweep <= tol
  int check_every = 10;  // sweeps between convergence checks (tol > 0)
  Stores stores = Stores::automatic;
  Schedule schedule = Schedule::dynamic;
  // Faults the tests inject (slow_thread: this thread of every process starts each sweep's
  // rows only once the others have taken all its groups, or after 1 s).
  const detail::TestHooks* test = nullptr;  // faults tests inject (none when null)
};

struct Result {
  int sweeps = 0;
  double seconds = 0;      // sweeps only, slowest process
  double cpu_seconds = 0;  // CPU time of all processes over the same span
  double max_change = 0;   // of the last sweep (when computed: tol > 0, or the final sweep)
  double max_error = 0;    // vs the closed-form field (fixed sweeps) or f (tol)
  double allowed_error = 0;
  bool verified = false;
  std::string verification;        // what was checked, and why it failed
  std::uint64_t field_hash = 0;    // order-independent hash of every interior value's bits
  double mlups() const;            // million point updates per second
  double flops = 0, bytes = 0;     // work model of the timed part, whole job
  bool streaming_stores = false;   // non-temporal stores were used (after calibration, if any)
  bool stores_calibrated = false;  // --stores auto timed both kinds on sweeps 2..9
  // Why these stores: the flag that fixed them, the timing that chose them, or the cache rule
  // (with the sizes it compared).
  std::string stores_reason;
  // Share of the point updates made by a thread other than the rows' owner (dynamic schedule),
  // whole job: 0 when the threads kept pace; a thread that did no rows of its own adds its share.
  double moved = 0;
};

// "dynamic" | "fixed" (also "static"); throws std::invalid_argument naming the value otherwise.
Schedule parse_schedule(const std::string& text);
std::string to_string(Schedule s);

// Throws std::invalid_argument for bad parameters (n < processes, iters < 1, ...).
// `processes_here`: the job's processes on this host (0: all of them), whose memory this host must
// give together; too much throws std::invalid_argument naming the size and the host's limit
// (base::memory_limit), before anything is allocated.
void check(const Params& p, int processes, int processes_here = 0);

// Collective: every process calls it (outside Runtime::run); runs on the runtime's team.
Result run(Runtime& rt, const Params& p);

}  // namespace compas::kernels::laplace
