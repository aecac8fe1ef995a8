// GEMM on a real job: every rank of a compas-run job (P x T from the CTest variant) runs this.
// The blocks of C are gathered on rank 0 (one-sided puts into a window prefilled with NaN, so a
// block that is missing shows) and compared with OpenBLAS's cblas_dgemm on the same generated A
// and B: relative Frobenius error <= 1e-12 n. The built-in Freivalds check must pass on the
// correct product and fail on a perturbed one; repeated multiplications (which carry panels and
// slot releases across iterations) must give the same bits as one.
#include <cblas.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <vector>

#include "compas/kernels/test_hooks.hpp"
#include "../common/job_main.hpp"
#include "compas/compas.hpp"
#include "compas/kernels/gemm_job.hpp"

namespace {

namespace gemm = compas::kernels::gemm;

bool is_prime(int p) {
  if (p < 2) return false;
  for (int d = 2; d * d <= p; ++d)
    if (p % d == 0) return false;
  return true;
}

// C gathered on rank 0 (n x n, row-major); empty on the other ranks.
std::vector<double> gather(compas::Runtime& rt, const gemm::JobResult& r) {
  const std::size_t n = r.n;
  if (rt.processes() == 1) return r.c;
  compas::comm::Window<double> win(rt.comm(), n * n, 1);
  if (rt.process() == 0)
    for (double& v : win.local()) v = std::numeric_limits<double>::quiet_NaN();
  rt.comm().barrier();
  for (std::size_t i = 0; i < r.rows && r.cols > 0; ++i)
    win.put(0, (r.row0 + i) * n + r.col0, std::span<const double>(r.c.data() + i * r.cols, r.cols));
  rt.comm().flush(0);
  rt.comm().barrier();
  std::vector<double> c;
  if (rt.process() == 0) c.assign(win.local().begin(), win.local().end());
  rt.comm().barrier();
  return c;
}

// cblas_dgemm on the generated matrices.
std::vector<double> reference(std::size_t n) {
  std::vector<double> a(n * n), b(n * n), c(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      a[i * n + j] = gemm::a_value(i, j);
      b[i * n + j] = gemm::b_value(i, j);
    }
  const int nn = static_cast<int>(n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nn, nn, nn, 1.0, a.data(), nn, b.data(),
              nn, 0.0, c.data(), nn);
  return c;
}

TEST(GemmJob, GatheredProductMatchesCblasDgemm) {
  const int p = g_rt->processes();
  for (std::size_t n : {std::size_t{1}, std::size_t{97}, std::size_t{128}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    gemm::JobParams jp;
    jp.n = n;
    jp.iters = 1;
    jp.keep_c = true;
    const auto r = gemm::run(*g_rt, jp);
    EXPECT_TRUE(r.verified) << r.verification;
    EXPECT_LE(r.error, r.tolerance);
    EXPECT_EQ(r.grid_rows * r.grid_cols, p);
    EXPECT_LE(r.grid_rows, r.grid_cols);
    EXPECT_EQ(r.ring, is_prime(p)) << r.grid_rows << "x" << r.grid_cols;
    EXPECT_GT(r.seconds, 0);
    EXPECT_EQ(r.flops, 2.0 * static_cast<double>(n * n * n));
    EXPECT_EQ(r.rows * r.cols, r.c.size());
    if (n >= static_cast<std::size_t>(p)) {
      // Every block of A reaches the rest of its process row, every block of B the rest of its
      // column (the ring: A only, the grid being 1 x P).
      EXPECT_EQ(r.panel_bytes, 8.0 * static_cast<double>(n * n) * (r.grid_rows + r.grid_cols - 2));
    }
    const std::vector<double> c = gather(*g_rt, r);
    if (g_rt->process() != 0) continue;
    const std::vector<double> ref = reference(n);
    ASSERT_EQ(c.size(), ref.size());
    double diff = 0, norm = 0;
    std::size_t bad = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (!std::isfinite(c[i])) ++bad;
      diff += (c[i] - ref[i]) * (c[i] - ref[i]);
      norm += ref[i] * ref[i];
    }
    EXPECT_EQ(bad, 0u) << "elements of C never written (or not finite)";
    const double rel = std::sqrt(diff) / std::sqrt(norm);
    EXPECT_LE(rel, 1e-12 * static_cast<double>(n)) << "relative Frobenius error";
  }
}

TEST(GemmJob, RepeatedMultiplicationsGiveTheSameBits) {
  gemm::JobParams jp;
  jp.n = 97;
  jp.iters = 1;
  jp.keep_c = true;
  const auto one = gemm::run(*g_rt, jp);
  jp.iters = 3;
  const auto three = gemm::run(*g_rt, jp);
  EXPECT_TRUE(three.verified) << three.verification;
  ASSERT_EQ(three.iter_seconds.size(), 3u);
  EXPECT_LE(three.seconds_min, three.seconds);
  ASSERT_EQ(one.c.size(), three.c.size());
  for (std::size_t i = 0; i < one.c.size(); ++i)
    ASSERT_EQ(one.c[i], three.c[i]) << "element " << i << " of this process's block";
}

TEST(GemmJob, AnInjectedFaultFailsVerification) {
  gemm::JobParams jp;
  jp.n = 97;
  jp.iters = 1;
  compas::kernels::detail::TestHooks hooks;
  hooks.inject_fault = true;
  jp.test = &hooks;
  const auto r = gemm::run(*g_rt, jp);
  EXPECT_FALSE(r.verified) << r.verification;
  EXPECT_GT(r.error, r.tolerance);
  EXPECT_NE(r.verification.find("Freivalds"), std::string::npos) << r.verification;
}

TEST(GemmJob, BadParametersAreRejectedBeforeAnythingRuns) {
  gemm::JobParams jp;
  jp.n = 0;
  EXPECT_THROW(gemm::run(*g_rt, jp), std::invalid_argument);
  jp.n = 10;
  jp.iters = 0;
  EXPECT_THROW(gemm::run(*g_rt, jp), std::invalid_argument);
}

}  // namespace
