// GEMM on a job: SUMMA / 1-D ring over the processes, gemm::multiply inside (gemm_job.hpp).
#include "compas/kernels/gemm_job.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

#include "compas/base/hash.hpp"
#include "compas/comm/window.hpp"
#include "compas/perf/region.hpp"
#include "compas/perf/timer.hpp"
#include "funneled.hpp"
#include "gemm_plan.hpp"
#include "job_memory.hpp"
#include "compas/kernels/test_hooks.hpp"

namespace compas::kernels::gemm {

namespace {

constexpr std::uint64_t kSeedA = 0x243f6a8885a308d3ull, kSeedB = 0x13198a2e03707344ull,
                        kSeedX = 0xa4093822299f31d0ull;

// [-1, 1), exactly: 53 random bits scaled by 2^-52.
double hash_value(std::uint64_t seed, std::uint64_t row, std::uint64_t col) {
  const std::uint64_t h = base::splitmix64(base::splitmix64(seed ^ row) + col);
  return static_cast<double>(h >> 11) * 0x1p-52 - 1.0;
}

}  // namespace

double a_value(std::uint64_t row, std::uint64_t col) {
  return hash_value(kSeedA, row, col);
}
double b_value(std::uint64_t row, std::uint64_t col) {
  return hash_value(kSeedB, row, col);
}

void check(const JobParams& p, int processes, int processes_here) {
  if (p.n < 1)
    throw std::invalid_argument("gemm: n = " + std::to_string(p.n) + ": must be at least 1");
  if (p.iters < 1)
    throw std::invalid_argument("gemm: iters = " + std::to_string(p.iters) +
                                ": must be at least 1");
  if (processes < 1) throw std::invalid_argument("gemm: no processes");
  // A, B and C's blocks of n^2 / P each, and with P > 1 the panels of A and B in flight.
  const double n2 = static_cast<double>(p.n) * static_cast<double>(p.n);
  kernels::detail::check_job_memory("gemm: --n " + std::to_string(p.n),
                                    8 * n2 * (processes == 1 ? 3 : 5) / processes, processes,
                                    processes_here, base::Mapping::private_memory);
}

namespace {

// One run of the job on this process: the schedule, the operands and the panel window, and what
// the multiplications measure. Thread 0 alone posts and waits on the window.
struct GemmJob {
  Runtime& rt;
  const JobParams& jp;
  const std::size_t n;
  const int P;
  const Runtime::Grid grid;
  const Plan plan;
  const Range I, J;
  const std::size_t mi, nj;
  const std::vector<Panel>& panels;
  // Local operands: A's panels of this process column (mi x w each, one after the other),
  // B[I_r, J_c] (B's rows are split like C's), C[I_r, J_c]. Never empty, so pointers are valid.
  std::vector<double> A, B, C;
  const std::size_t a_slot, b_slot;
  std::optional<comm::Window<double>> win;
  Workspace ws;
  JobResult jr;
  const std::vector<Step>& steps;
  const std::size_t per;
  std::vector<double> my_iter;
  double my_cpu = 0;
  // Thread 0 only.
  std::vector<comm::Request> pending;
  std::uint64_t iter = 0;  // multiplications done before this one

  GemmJob(Runtime& runtime, const JobParams& params);

  std::size_t slot_offset(Mat m, int slot) const {
    return m == kA ? static_cast<std::size_t>(slot) * a_slot
                   : 2 * a_slot + static_cast<std::size_t>(slot) * b_slot;
  }
  double* slot_ptr(Mat m, int slot) { return win->local().data() + slot_offset(m, slot); }
  void post(const std::vector<Send>& sends);

  void multiplications(threads::ThreadCtx& t);  // every thread: operands, timed iterations
  void fill_operands(threads::ThreadCtx& t);
  void multiply_once(threads::ThreadCtx& t, int it);
  void step(threads::ThreadCtx& t, const Step& st);
  void gather_times(threads::ThreadCtx& t);
  void timings();
  void fault() { C[0] += 1e-3 * (1.0 + std::fabs(C[0])); }  // a wrong element for the tests
  void verify();
  void freivalds(threads::ThreadCtx& t, const std::vector<double>& x, std::vector<double>& y,
                 std::vector<double>& d);
  // This process's block of C, for the tests.
  void keep_block() {
    jr.row0 = I.lo;
    jr.rows = mi;
    jr.col0 = J.lo;
    jr.cols = nj;
    jr.c.assign(C.begin(), C.begin() + static_cast<std::ptrdiff_t>(mi * nj));
  }
};

GemmJob::GemmJob(Runtime& runtime, const JobParams& params)
    : rt(runtime),
      jp(params),
      n(jp.n),
      P(rt.processes()),
      grid(rt.process_grid()),
      plan(n, P, grid),
      I(plan.rows()),
      J(plan.cols()),
      mi(I.size()),
      nj(J.size()),
      panels(plan.panels()),
      A(std::max<std::size_t>(mi * plan.a_width(), 1)),
      B(std::max<std::size_t>(mi * nj, 1)),
      C(std::max<std::size_t>(mi * nj, 1)),
      a_slot(plan.a_slot()),
      b_slot(plan.b_slot()),
      win(P > 1 ? std::optional<comm::Window<double>>(
                      std::in_place, rt.comm(), std::max<std::size_t>(2 * a_slot + 2 * b_slot, 1),
                      4 + 4 * static_cast<std::size_t>(P))
                : std::optional<comm::Window<double>>()),
      steps(plan.steps()),
      per(plan.steps_per_multiply()),
      my_iter(static_cast<std::size_t>(jp.iters), 0.0) {
  jr.n = n;
  jr.grid_rows = grid.rows;
  jr.grid_cols = grid.cols;
  jr.ring = plan.ring();
  jr.isa = to_string(ws.blocking().isa);
  jr.iters = jp.iters;
  jr.steps = static_cast<int>(plan.steps_per_multiply());
  jr.flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
}

// Thread 0: each send once its receiver has released the slot, without waiting for the put.
void GemmJob::post(const std::vector<Send>& sends) {
  for (const Send& s : sends) {
    if (s.releases > 0)
      win->wait_until(release_signal(s.m, s.slot, s.to, P),
                      iter * plan.releases_per_multiply(s.m, s.slot, s.to) + s.releases, s.to);
    const double* src =
        s.from_slot ? slot_ptr(s.m, s.src_slot) : (s.m == kA ? A.data() : B.data()) + s.src_offset;
    pending.push_back(win->put_signal_nb(s.to, slot_offset(s.m, s.slot),
                                         std::span<const double>(src, s.count),
                                         arrival_signal(s.m, s.slot)));
  }
}

void GemmJob::multiplications(threads::ThreadCtx& t) {
  fill_operands(t);
  t.barrier();
  for (int it = 0; it < jp.iters; ++it) multiply_once(t, it);
  {
    COMPAS_REGION(t, "synchronize");
    rt.barrier(t);
  }
  gather_times(t);
}

// This process's A panels and B block, rows over the threads.
void GemmJob::fill_operands(threads::ThreadCtx& t) {
  const auto [lo, hi] = t.block(mi);
  for (std::size_t s = 0; s < panels.size(); ++s) {
    const Panel& pn = panels[s];
    if (pn.a_col != grid.col) continue;
    double* a = A.data() + plan.a_column(s) * mi;
    for (std::size_t i = lo; i < hi; ++i)
      for (std::size_t k = 0; k < pn.w; ++k) a[i * pn.w + k] = a_value(I.lo + i, pn.k0 + k);
  }
  for (std::size_t k = lo; k < hi; ++k)
    for (std::size_t j = 0; j < nj; ++j) B[k * nj + j] = b_value(I.lo + k, J.lo + j);
}

// One timed multiplication: from a job barrier, the first sends, then every step.
void GemmJob::multiply_once(threads::ThreadCtx& t, int it) {
  {
    COMPAS_REGION(t, "synchronize");
    rt.barrier(t);
  }
  const std::uint64_t t0 = perf::now_ns();
  const double c0 = t.is_leader() ? perf::process_cpu_seconds() : 0.0;
  if (t.is_leader()) iter = static_cast<std::uint64_t>(it);
  if (t.is_leader() && P > 1) {
    COMPAS_REGION(t, "communicate");
    post(plan.first_sends());
  }
  for (std::size_t i = 0; i < per; ++i) step(t, steps[i]);
  if (t.is_leader()) {
    my_iter[static_cast<std::size_t>(it)] = 1e-9 * static_cast<double>(perf::now_ns() - t0);
    my_cpu += perf::process_cpu_seconds() - c0;
  }
}

// One step: its panels waited for (and the next step's posted) by thread 0, the team's multiply,
// then the slots it read released.
void GemmJob::step(threads::ThreadCtx& t, const Step& st) {
  const Panel& pn = panels[st.panel];
  if (P > 1) {
    if (t.is_leader()) {
      COMPAS_REGION(t, "communicate");
      for (const auto& [m, src] : {std::pair{kA, &st.a}, std::pair{kB, &st.b}})
        if (!src->local)
          win->wait_until(arrival_signal(m, src->slot),
                          iter * plan.arrivals_per_multiply(m, src->slot) + src->arrival,
                          src->from);
      post(st.sends);  // the next step's panels travel while this one is multiplied
    }
    COMPAS_REGION(t, "communicate");  // the team waits for the panels with thread 0
    t.barrier();
  }
  const double* a = st.a.local ? A.data() + st.a.offset : slot_ptr(kA, st.a.slot);
  const double* b = st.b.local ? B.data() + st.b.offset : slot_ptr(kB, st.b.slot);
  {
    COMPAS_REGION(t, "compute");
    multiply(t, mi, nj, pn.w, a, std::max<std::size_t>(pn.w, 1), b, std::max<std::size_t>(nj, 1),
             C.data(), std::max<std::size_t>(nj, 1), !st.first, ws);
  }
  // multiply returned on every thread: the slots read are free once the puts from them
  // (ring) are complete.
  if (P > 1 && t.is_leader() && (!pending.empty() || !st.releases.empty())) {
    COMPAS_REGION(t, "communicate");
    for (auto& r : pending) r.wait();
    pending.clear();
    for (const Release& r : st.releases)
      win->signal_add(r.to, release_signal(r.m, r.slot, rt.process(), P));
  }
}

// The iterations' times (each as long as its slowest process took), CPU time and panel bytes.
void GemmJob::gather_times(threads::ThreadCtx& t) {
  if (t.is_leader()) {  // each multiplication as long as its slowest process took
    if (P > 1) rt.collectives().allreduce(std::span<double>(my_iter), comm::Op::max);
    jr.iter_seconds = my_iter;
  }
  const double cpu = rt.allreduce(t, t.is_leader() ? my_cpu : 0.0, op::sum{});
  const double bytes =
      rt.allreduce(t, t.is_leader() ? plan.bytes_sent_per_multiply() : 0.0, op::sum{});
  if (t.is_leader()) {
    jr.cpu_seconds = cpu;
    jr.panel_bytes = bytes;
  }
}

// The median and best iteration, and the rate.
void GemmJob::timings() {
  std::vector<double> sorted = jr.iter_seconds;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t k = sorted.size();
  jr.seconds = k % 2 == 1 ? sorted[k / 2] : 0.5 * (sorted[k / 2 - 1] + sorted[k / 2]);
  jr.seconds_min = sorted.front();
  jr.gflops = jr.seconds > 0 ? jr.flops / jr.seconds / 1e9 : 0.0;
}

// Freivalds: d = C x - A (B x) and s = |A| (|B| |x|) + |C| |x|, every row on every process.
void GemmJob::verify() {
  std::vector<double> x(n), y(2 * n, 0.0), d(2 * n, 0.0);
  for (std::size_t j = 0; j < n; ++j) x[j] = 1.0 + 0.5 * hash_value(kSeedX, 0, j);
  rt.run([&](threads::ThreadCtx& t) { freivalds(t, x, y, d); });
  double error = 0;
  for (std::size_t i = 0; i < n && !std::isnan(error); ++i) {
    const double e = d[n + i] > 0 ? std::fabs(d[i]) / d[n + i]
                     : d[i] == 0  ? 0.0
                                  : std::numeric_limits<double>::infinity();
    error = std::isnan(e) ? e : std::max(error, e);
  }
  jr.error = error;
  jr.tolerance = (4.0 * static_cast<double>(n) + 2.0 * P + 8.0) * 0x1p-53;
  jr.verified = error <= jr.tolerance;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "Freivalds: max_i |(C x - A (B x))_i| / (|A| |B| |x| + |C| |x|)_i = %.2e %s "
                "(4n + 2P + 8) u = %.2e (x_j in [0.5, 1.5) from a hash; u = 2^-53)",
                jr.error, jr.verified ? "<=" : "exceeds", jr.tolerance);
  jr.verification = buf;
}

// One thread's rows of y = (B x, |B| |x|), then of d = (C x - A y, |A| |y| + |C| |x|); each summed
// over the processes.
void GemmJob::freivalds(threads::ThreadCtx& t, const std::vector<double>& x, std::vector<double>& y,
                        std::vector<double>& d) {
  const auto [lo, hi] = t.block(mi);
  for (std::size_t k = lo; k < hi; ++k) {  // B x over this process's part of B
    double v = 0, va = 0;
    for (std::size_t j = 0; j < nj; ++j) {
      const double b = B[k * nj + j];
      v += b * x[J.lo + j];
      va += std::fabs(b) * x[J.lo + j];
    }
    y[I.lo + k] = v;
    y[n + I.lo + k] = va;
  }
  t.barrier();
  if (t.is_leader() && P > 1) rt.collectives().allreduce(std::span<double>(y), comm::Op::sum);
  t.barrier();
  for (std::size_t i = lo; i < hi; ++i) {
    double z = 0, za = 0;
    for (std::size_t s = 0; s < panels.size(); ++s) {
      const Panel& pn = panels[s];
      if (pn.a_col != grid.col) continue;
      const double* a = A.data() + plan.a_column(s) * mi + i * pn.w;
      for (std::size_t k = 0; k < pn.w; ++k) {
        z += a[k] * y[pn.k0 + k];
        za += std::fabs(a[k]) * y[n + pn.k0 + k];
      }
    }
    double cx = 0, ca = 0;
    for (std::size_t j = 0; j < nj; ++j) {
      const double c = C[i * nj + j];
      cx += c * x[J.lo + j];
      ca += std::fabs(c) * x[J.lo + j];
    }
    d[I.lo + i] = cx - z;
    d[n + I.lo + i] = za + ca;
  }
  t.barrier();
  if (t.is_leader() && P > 1) rt.collectives().allreduce(std::span<double>(d), comm::Op::sum);
}

}  // namespace

JobResult run(Runtime& rt, const JobParams& jp) {
  check_funneled(rt, "kernels::gemm::run");
  check(jp, rt.processes(), rt.processes_here());
  GemmJob job(rt, jp);
  rt.run([&](threads::ThreadCtx& t) { job.multiplications(t); });
  job.win.reset();
  job.timings();
  if (kernels::detail::hooks_of(jp.test).inject_fault && rt.process() == 0 && job.mi * job.nj > 0)
    job.fault();
  job.verify();
  if (jp.keep_c) job.keep_block();
  return std::move(job.jr);
}

}  // namespace compas::kernels::gemm
