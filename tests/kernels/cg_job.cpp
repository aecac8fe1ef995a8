// NAS CG on a real job: every rank of a compas-run job (P x T from the CTest variant) runs this.
// Class S and T must verify, and zeta must be bitwise the one the single-process solver computes
// in the same sum order (the solver's sums have one order whatever the decomposition); a
// perturbed matrix value must fail verification.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <stdexcept>

#include "../../kernels/src/cg_internal.hpp"
#include "compas/kernels/test_hooks.hpp"
#include "../common/job_main.hpp"
#include "../common/sanitized.hpp"
#include "compas/compas.hpp"
#include "compas/kernels/cg_job.hpp"

namespace {

namespace cg = compas::kernels::cg;

using compas::test::kSanitized;

std::uint64_t bits(double v) {
  return std::bit_cast<std::uint64_t>(v);
}

struct Reference {
  double zeta, rnorm;
};

// The single-process solver's result: process 0 computes it with its team and the others take its
// bits (every process computing its own, P serial solves of class A would share the cores).
Reference reference(char cls, cg::SumOrder order = cg::SumOrder::running) {
  std::array<double, 2> v{};
  if (g_rt->process() == 0) {
    const auto ref = cg::run(g_rt->team(), cg::params(cls), order);
    v = {ref.zeta, ref.rnorm};
  }
  compas::broadcast(*g_rt, std::span<double>(v), 0);
  return {v[0], v[1]};
}

TEST(CgJob, ClassesVerifyAndMatchTheSingleProcessSolverBitForBit) {
  for (char cls : {'S', 'T'}) {
    cg::JobParams p;
    p.cls = cls;
    const auto r = cg::run(*g_rt, p);
    EXPECT_TRUE(r.verified) << r.verification;
    // The same class on one process alone, with its team.
    const Reference ref = reference(cls);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(r.zeta), std::bit_cast<std::uint64_t>(ref.zeta))
        << "class " << cls << ": " << r.zeta << " vs " << ref.zeta;
    EXPECT_EQ(std::bit_cast<std::uint64_t>(r.rnorm), std::bit_cast<std::uint64_t>(ref.rnorm));
    EXPECT_GT(r.seconds, 0);
    EXPECT_GT(r.mops, 0);
    EXPECT_EQ(r.na, cg::params(cls).na);
    EXPECT_EQ(r.nnz, cg::make_matrix(cg::params(cls)).nnz());
  }
}

// seconds covers the niter timed iterations only; the regions and the CPU time must cover the same
// interval. Every thread spends 1 s of CPU time between the untimed iteration and the timed ones:
// counted, it would add 1 s to the "solve" region and to each thread's CPU time; the bounds leave
// half of it for whatever else a loaded machine adds.
TEST(CgJob, RegionsAndCpuTimeCoverOnlyTheTimedIterations) {
  constexpr int kUntimedMs = 1000;
  cg::JobParams p;
  p.cls = 'S';
  compas::kernels::detail::TestHooks hooks;
  hooks.untimed_cpu_ms = kUntimedMs;
  p.test = &hooks;
  g_rt->profile().reset();
  const auto r = cg::run(*g_rt, p);
  EXPECT_TRUE(r.verified) << r.verification;
  const int threads = g_rt->processes() * g_rt->team().threads();
  const double half = 0.5 * kUntimedMs / 1e3;
  EXPECT_LT(r.cpu_seconds, (r.seconds + half) * threads)
      << "cpu_seconds counts the untimed work (seconds " << r.seconds << ")";
  int solves = 0;
  for (const auto& s : g_rt->profile().samples())
    if (s.region == "solve") {
      ++solves;
      EXPECT_LT(s.seconds, r.seconds + half)
          << "thread " << s.thread << "'s solve region counts the untimed work (seconds "
          << r.seconds << ")";
      EXPECT_EQ(s.calls, 1u);
    }
  EXPECT_EQ(solves, g_rt->team().threads()) << "a solve region on every thread";
}

// Process 0's puts of every exchange arrive late, one by one: a faster process then finishes an
// exchange and starts the next before process 0's data of the first has reached everyone. Each
// exchange must still wait for its own data (the result stays bitwise the single-process one).
TEST(CgJob, AStaggeredProcessDoesNotLetOthersReadStaleData) {
  if (g_rt->processes() < 3)
    GTEST_SKIP() << "needs three processes: one late, one fast, one waiting";
  cg::JobParams p;
  p.cls = 'S';
  compas::kernels::detail::TestHooks hooks;
  hooks.put_stagger_us = 2000;
  p.test = &hooks;
  const auto r = cg::run(*g_rt, p);
  const Reference ref = reference('S');
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(r.zeta), std::bit_cast<std::uint64_t>(ref.zeta))
      << r.zeta << " vs " << ref.zeta;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(r.rnorm), std::bit_cast<std::uint64_t>(ref.rnorm));
}

// NPB's 2-D decomposition on a real job of 4 processes (2 x 2): the same bits as one process in
// the tree's order, and bytes reported. Class A (4 panels: each process column holds 2, added
// in the tree's order, (p0 + p1) + (p2 + p3)) also differs from one process in the running
// order, ((p0 + p1) + p2) + p3; W, under sanitizers, has one panel per process column.
TEST(CgJob, AGridGivesTheSameBitsAsOneProcess) {
  if (g_rt->processes() != 4) GTEST_SKIP() << "needs a job of 2 x 2 processes";
  const char cls = kSanitized ? 'W' : 'A';
  cg::JobParams p;
  p.cls = cls;
  p.decomposition = cg::Decomposition::grid;
  const auto r = cg::run(*g_rt, p);
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.grid.rows, 2);
  EXPECT_EQ(r.grid.columns, 2);
  EXPECT_EQ(r.sum_order, cg::SumOrder::tree);
  const Reference ref = reference(cls, cg::SumOrder::tree);
  EXPECT_EQ(bits(r.zeta), bits(ref.zeta)) << r.zeta << " vs " << ref.zeta;
  EXPECT_EQ(bits(r.rnorm), bits(ref.rnorm)) << r.rnorm << " vs " << ref.rnorm;
  if (cls == 'A') {
    const Reference running = reference(cls, cg::SumOrder::running);
    EXPECT_NE(bits(r.rnorm), bits(running.rnorm)) << "the orders agree: the check has no teeth";
  }
  EXPECT_EQ(r.nnz, cg::make_matrix(cg::params(cls)).nnz());  // every entry in one block
  EXPECT_GT(r.comm_bytes_per_iteration, 0);
  // A grid adds in the tree's order only: the running order is refused on every process.
  p.sum_order = cg::SumOrder::running;
  EXPECT_THROW(cg::run(*g_rt, p), std::invalid_argument);
}

// The rows decomposition in each sum order (unset: running) gives the bits one process computes
// in that order. Class A has 4 panels, where the orders differ (W, under sanitizers, has 2).
TEST(CgJob, RowsInEachSumOrderGiveTheSingleProcessBits) {
  const char cls = kSanitized ? 'W' : 'A';
  for (const auto order : {std::optional<cg::SumOrder>{}, std::optional{cg::SumOrder::tree},
                           std::optional{cg::SumOrder::running}}) {
    cg::JobParams p;
    p.cls = cls;
    p.decomposition = cg::Decomposition::rows;
    p.sum_order = order;
    const cg::SumOrder expected = order.value_or(cg::SumOrder::running);
    SCOPED_TRACE(!order ? "unset" : expected == cg::SumOrder::tree ? "tree" : "running");
    const auto r = cg::run(*g_rt, p);
    EXPECT_TRUE(r.verified) << r.verification;
    EXPECT_EQ(r.sum_order, expected);
    const Reference ref = reference(cls, expected);
    EXPECT_EQ(bits(r.zeta), bits(ref.zeta)) << r.zeta << " vs " << ref.zeta;
    EXPECT_EQ(bits(r.rnorm), bits(ref.rnorm));
  }
}

// The rows decomposition's bytes, counted as the exchanges put them, against what each process
// has to send: per outer iteration, its rows of p 26 times and its chunks' partial sums of 52
// one-value and one two-value reductions, to each of the P - 1 others.
TEST(CgJob, TheRowsDecompositionReportsTheBytesItSends) {
  cg::JobParams p;
  p.cls = 'S';
  p.decomposition = cg::Decomposition::rows;
  const auto r = cg::run(*g_rt, p);
  const cg::ClassParams cp = cg::params('S');
  const int procs = g_rt->processes();
  double most = 0;
  for (int q = 0; q < procs && procs > 1; ++q) {
    const auto [lo, hi] = cg::row_block(cp.na, procs, q);
    const double chunks =
        static_cast<double>((hi + cg::kChunkRows - 1) / cg::kChunkRows - lo / cg::kChunkRows);
    const double outer = 8.0 * (procs - 1) * (26.0 * static_cast<double>(hi - lo) + 54 * chunks);
    most = std::max(most, outer / cg::kCgIterations);
  }
  EXPECT_EQ(r.grid.columns, 1);
  EXPECT_DOUBLE_EQ(r.comm_bytes_per_iteration, most);
}

TEST(CgJob, APerturbedMatrixFailsVerification) {
  cg::JobParams p;
  p.cls = 'S';
  compas::kernels::detail::TestHooks hooks;
  hooks.inject_fault = true;
  p.test = &hooks;
  const auto r = cg::run(*g_rt, p);
  EXPECT_FALSE(r.verified) << r.verification;
}

TEST(CgJob, MoreProcessesThanChunksIsRejected) {
  if (g_rt->processes() < 2) GTEST_SKIP() << "needs a job of several processes";
  // Every class has far more chunks than this job has processes: the check passes here; the
  // error path is exercised by the CLI test with a tiny class.
  cg::JobParams p;
  p.cls = 'Q';
  EXPECT_THROW(cg::run(*g_rt, p), std::invalid_argument);
}

}  // namespace
