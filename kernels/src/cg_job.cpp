#include "compas/kernels/cg_job.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>

#include "cg_grid_exchange.hpp"
#include "cg_internal.hpp"
#include "compas/comm/window.hpp"
#include "compas/kernels/test_hooks.hpp"
#include "compas/perf/region.hpp"
#include "compas/perf/timer.hpp"
#include "funneled.hpp"
#include "job_memory.hpp"

namespace compas::kernels::cg {

namespace {

constexpr std::size_t kMaxPartials = 4;  // values per chunk the window has room for

// The exchanges of a job of several processes, through one window per process laid out as
//   [2][na] doubles          copies of p (alternating), written by the other processes
//   [2][nchunks * 4] doubles  partial sums (alternating), written by the other processes
// Alternating buffers: a process starts exchange j + 2 of a kind only after exchange j + 1, which
// needs every process's put, and each puts only after it has copied out exchange j, so the buffer
// a put lands in is never one still being read. Each buffer has its own signal (kind x parity): a
// fast process may already be putting exchange j + 1 while this one still waits for a slow
// process's exchange j, and that put must not count towards j.
class JobExchange final : public Exchange {
 public:
  JobExchange(Runtime& rt, std::int64_t na, int stagger_us)
      : rt_(rt),
        stagger_us_(rt.process() == 0 ? stagger_us : 0),
        na_(static_cast<std::size_t>(na)),
        nchunks_(static_cast<std::size_t>(chunk_count(na))),
        win_(rt.comm(), 2 * na_ + 2 * nchunks_ * kMaxPartials, 4) {
    for (int r = 0; r < rt.processes(); ++r) {
      const auto [lo, hi] = row_block(na, rt.processes(), r);
      rows_.push_back({static_cast<std::size_t>(lo), static_cast<std::size_t>(hi)});
      chunks_.push_back({static_cast<std::size_t>(lo / kChunkRows),
                         static_cast<std::size_t>((hi + kChunkRows - 1) / kChunkRows)});
    }
    chunks_.back().second = nchunks_;
  }

  void assemble_vector(threads::ThreadCtx& t, std::span<double> p) override {
    exchange(t, p, 1, rows_, 0, na_, vector_calls_, kVector);
  }

  void assemble_partials(threads::ThreadCtx& t, std::span<double> partials,
                         std::size_t k) override {
    if (k > kMaxPartials)
      throw std::logic_error("cg: more partial sums per chunk than the window holds");
    exchange(t, partials, k, chunks_, 2 * na_, nchunks_ * kMaxPartials, partial_calls_, kPartials);
  }

  void synchronize(threads::ThreadCtx& t) override {
    COMPAS_REGION(t, "synchronize");
    rt_.barrier(t);
  }

  double bytes_sent() const { return bytes_; }

 private:
  enum : std::size_t { kVector = 0, kPartials = 1 };

  // Every process's block [lo, hi) (in units of `k` doubles) of `data` to every other, through
  // the buffer at `base` (+ parity * stride) of their windows.
  void exchange(threads::ThreadCtx& t, std::span<double> data, std::size_t k,
                const std::vector<std::pair<std::size_t, std::size_t>>& blocks, std::size_t base,
                std::size_t stride, std::uint64_t& calls, std::size_t signal) {
    // Read before the barrier, after which thread 0 counts this call: the same on every thread.
    const std::size_t parity = calls % 2;
    const std::size_t sig = 2 * signal + parity;
    // Exchanges of this kind and parity so far, this one included.
    const std::uint64_t rounds = calls / 2 + 1;
    {
      COMPAS_REGION(t, "synchronize");
      t.barrier();  // every thread has written its part
    }
    const int me = rt_.process(), p = rt_.processes();
    if (t.is_leader()) {
      COMPAS_REGION(t, "communicate");
      ++calls;
      const auto [lo, hi] = blocks[static_cast<std::size_t>(me)];
      const std::span<const double> mine(data.data() + lo * k, (hi - lo) * k);
      for (int d = 1; d < p; ++d) {
        const int r = (me + d) % p;
        if (d > 1 && stagger_us_ > 0)
          std::this_thread::sleep_for(std::chrono::microseconds(stagger_us_));
        win_.put_signal(r, base + parity * stride + lo * k, mine, sig);
        bytes_ += static_cast<double>(mine.size_bytes());
      }
      win_.wait_until(sig, rounds * static_cast<std::uint64_t>(p - 1));
    }
    {
      COMPAS_REGION(t, "synchronize");
      t.barrier();
    }
    {
      COMPAS_REGION(t, "communicate");
      // The others' blocks out of the window, split among the threads.
      const double* buf = win_.local().data() + base + parity * stride;
      const std::size_t n = blocks.back().second * k;
      const auto [a, b] = threads::block_range(n, t.threads(), t.thread());
      const auto [lo, hi] = blocks[static_cast<std::size_t>(me)];
      const std::size_t own_lo = lo * k, own_hi = hi * k;
      auto copy = [&](std::size_t from, std::size_t to) {
        if (to > from) std::memcpy(data.data() + from, buf + from, (to - from) * sizeof(double));
      };
      copy(a, std::min(b, own_lo));
      copy(std::max(a, own_hi), b);
    }
    COMPAS_REGION(t, "synchronize");
    t.barrier();
  }

  Runtime& rt_;
  int stagger_us_;
  std::size_t na_, nchunks_;
  comm::Window<double> win_;
  std::vector<std::pair<std::size_t, std::size_t>> rows_, chunks_;
  std::uint64_t vector_calls_ = 0, partial_calls_ = 0;
  double bytes_ = 0;
};

// One process: team barriers, marked as synchronization.
class TeamOnly final : public Exchange {
 public:
  void assemble_vector(threads::ThreadCtx& t, std::span<double>) override { sync(t); }
  void assemble_partials(threads::ThreadCtx& t, std::span<double>, std::size_t) override {
    sync(t);
  }
  void synchronize(threads::ThreadCtx& t) override { sync(t); }

 private:
  static void sync(threads::ThreadCtx& t) {
    COMPAS_REGION(t, "synchronize");
    t.barrier();
  }
};

// The order the job adds panel sums in: as asked, else running with rows and tree with a grid.
SumOrder sum_order(const JobParams& jp, Grid grid) {
  if (grid.columns > 1 && jp.sum_order == SumOrder::running)
    throw std::invalid_argument("cg: the running sum order on a grid of " +
                                std::to_string(grid.rows) + " x " + std::to_string(grid.columns) +
                                " processes: a grid adds in the panel tree's order (ask for the "
                                "rows decomposition, or the tree order)");
  return jp.sum_order.value_or(grid.columns > 1 ? SumOrder::tree : SumOrder::running);
}

// Spends `ms` of this thread's CPU time (a test's stand-in for untimed work).
void spin_cpu(int ms) {
  const auto now = [] {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  };
  const double until = now() + ms / 1e3;
  while (now() < until) {
  }
}

}  // namespace

void check(const ClassParams& cp, int processes, int processes_here) {
  if (chunk_count(cp.na) < processes)
    throw std::invalid_argument(
        "cg: class " + std::string(1, cp.cls) + " has " + std::to_string(chunk_count(cp.na)) +
        " row chunks, fewer than the " + std::to_string(processes) + " processes");
  // The generating vectors (na rows of nonzer + 1 columns and values), a process's rows of the
  // matrix (at most (nonzer + 1)^2 entries a row, while generated and once assembled) and the
  // solver's vectors.
  const double na = static_cast<double>(cp.na), w = cp.nonzer + 1;
  kernels::detail::check_job_memory("cg: class " + std::string(1, cp.cls),
                                    na * w * 12 + (na / processes + 1) * w * w * 28 + 64 * na,
                                    processes, processes_here, base::Mapping::private_memory);
}

JobResult run(Runtime& rt, const JobParams& jp) {
  check_funneled(rt, "kernels::cg::run");
  const ClassParams cp = params(jp.cls);
  check(cp, rt.processes(), rt.processes_here());
  const Grid grid = choose_grid(cp, rt.processes(), jp.decomposition, jp.sum_order);
  const SumOrder order = sum_order(jp, grid);
  Csr a;
  Layout layout;
  std::unique_ptr<Exchange> ex;
  std::function<double()> bytes_sent = [] { return 0.0; };
  if (grid.columns > 1) {
    layout = grid_layout(cp.na, grid, rt.process());
    const auto [lo, hi] = grid_block(cp.na, grid.columns, rt.process() / grid.columns);
    a = make_matrix(cp, lo, hi);
    keep_columns(a, layout.vector_lo, layout.vector_hi);  // block j's rows are its columns
    auto g = std::make_unique<detail::GridExchange>(rt, cp.na, grid);
    bytes_sent = [e = g.get()] { return e->bytes_sent(); };
    ex = std::move(g);
  } else {
    const auto [lo, hi] = row_block(cp.na, rt.processes(), rt.process());
    a = make_matrix(cp, lo, hi);
    layout = rows_layout(a, order);
    if (rt.processes() > 1) {
      auto r = std::make_unique<JobExchange>(rt, cp.na,
                                             kernels::detail::hooks_of(jp.test).put_stagger_us);
      bytes_sent = [e = r.get()] { return e->bytes_sent(); };
      ex = std::move(r);
    } else {
      ex = std::make_unique<TeamOnly>();
    }
  }
  if (kernels::detail::hooks_of(jp.test).inject_fault && rt.process() == 0 && !a.values.empty())
    a.values[a.values.size() / 2] += 1.0;  // an entry changed by 1: zeta moves well past 1e-10
  Solver solver(cp, a, *ex, layout);
  JobResult jr;
  double my_cpu = 0, c0 = 0;
  Result r;
  // The regions and the CPU time start where the timed iterations do.
  const auto before_timed = [&](threads::ThreadCtx& t) {
    if (kernels::detail::hooks_of(jp.test).untimed_cpu_ms > 0)
      spin_cpu(kernels::detail::hooks_of(jp.test).untimed_cpu_ms);
    t.barrier();
    rt.profile().reset(t.thread());
    if (t.is_leader()) c0 = perf::process_cpu_seconds();
    t.barrier();
  };
  rt.run([&](threads::ThreadCtx& t) {
    Result mine = solver.run(t, before_timed);
    if (t.is_leader()) {
      r = std::move(mine);
      my_cpu = perf::process_cpu_seconds() - c0;
    }
    t.barrier();
    const double secs = rt.allreduce(t, r.seconds, op::max{});
    const double cpu = rt.allreduce(t, t.is_leader() ? my_cpu : 0.0, op::sum{});
    const double nnz =
        rt.allreduce(t, t.is_leader() ? static_cast<double>(a.nnz()) : 0.0, op::sum{});
    const double bytes = rt.allreduce(t, t.is_leader() ? r.model.bytes() : 0.0, op::sum{});
    const double flops = rt.allreduce(t, t.is_leader() ? r.model.flops : 0.0, op::sum{});
    const double sent = rt.allreduce(t, t.is_leader() ? bytes_sent() : 0.0, op::max{});
    if (t.is_leader()) {
      jr.seconds = secs;
      jr.cpu_seconds = cpu;
      jr.nnz = static_cast<std::int64_t>(nnz);
      jr.bytes_per_iteration = bytes;
      jr.flops_per_iteration = flops;
      // run() does one untimed outer iteration before the niter timed ones.
      jr.comm_bytes_per_iteration = sent / ((cp.niter + 1.0) * kCgIterations);
    }
  });
  jr.cls = cp.cls;
  jr.grid = grid;
  jr.sum_order = order;
  jr.na = cp.na;
  jr.zeta = r.zeta;
  jr.rnorm = r.rnorm;
  jr.zeta_verify = cp.zeta_verify;
  jr.official = cp.official;
  jr.verified = verify(cp, r.zeta, &jr.error);
  jr.mops = jr.seconds > 0 ? npb_flops(cp) / jr.seconds / 1e6 : 0;
  char buf[256];
  std::snprintf(buf, sizeof buf, "zeta %.13f vs %s %.13f: relative error %.2e %s %.0e", jr.zeta,
                cp.official ? "NPB's" : "the serial reference's", jr.zeta_verify, jr.error,
                jr.verified ? "<=" : ">", kEpsilon);
  jr.verification = buf;
  return jr;
}

}  // namespace compas::kernels::cg
