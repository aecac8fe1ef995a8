// Laplace on a real job: every rank of a compas-run job (P x T from the CTest variant) runs this.
// The field after fixed sweeps must equal, bit for bit, a plain serial Jacobi written here
// independently of the kernel (compared through the order-independent hash), and verify against
// the closed form; the tolerance mode must converge to f = x^2 - y^2; a perturbed value must fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../kernels/src/store_calibration.hpp"
#include "compas/kernels/test_hooks.hpp"
#include "../common/job_main.hpp"
#include "compas/base/isa.hpp"
#include "compas/compas.hpp"
#include "compas/kernels/laplace.hpp"
#include "compas/probes/membw.hpp"

namespace {

namespace lp = compas::kernels::laplace;

std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The serial reference: the whole grid, boundary f = x^2 - y^2, interior f plus the two modes
// the kernel documents, `sweeps` Jacobi sweeps with the same expression; the hash of the interior.
std::uint64_t serial_hash(std::size_t n, int sweeps) {
  const double pi = 3.14159265358979323846, h = 1.0 / static_cast<double>(n + 1);
  const std::size_t w = n + 2;
  std::vector<double> u(w * w), v(w * w);
  for (std::size_t i = 0; i < w; ++i)
    for (std::size_t j = 0; j < w; ++j) {
      const double x = static_cast<double>(j) * h, y = static_cast<double>(i) * h;
      const bool boundary = i == 0 || j == 0 || i == w - 1 || j == w - 1;
      u[i * w + j] = x * x - y * y +
                     (boundary ? 0.0
                               : 0.5 * std::sin(pi * x) * std::sin(pi * y) +
                                     0.25 * std::sin(3 * pi * x) * std::sin(2 * pi * y));
    }
  v = u;
  for (int k = 0; k < sweeps; ++k) {
    for (std::size_t i = 1; i <= n; ++i)
      for (std::size_t j = 1; j <= n; ++j)
        v[i * w + j] =
            0.25 * (u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] + u[i * w + j + 1]);
    std::swap(u, v);
  }
  std::uint64_t hash = 0;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= n; ++j)
      hash += mix((static_cast<std::uint64_t>(i) << 32 | j) ^
                  mix(std::bit_cast<std::uint64_t>(u[i * w + j])));
  return hash;
}

TEST(LaplaceJob, FixedSweepsMatchTheSerialReferenceBitForBit) {
  for (std::size_t n : {std::size_t{7}, std::size_t{64}, std::size_t{101}}) {
    for (int sweeps : {1, 2, 37}) {
      lp::Params p;
      p.n = n;
      p.iters = sweeps;
      // Every store variant computes the same bits.
      p.stores = sweeps == 2 ? lp::Stores::streaming : lp::Stores::cached;
      const auto r = lp::run(*g_rt, p);
      EXPECT_TRUE(r.verified) << r.verification;
      EXPECT_EQ(r.sweeps, sweeps);
      EXPECT_EQ(r.field_hash, serial_hash(n, sweeps)) << "n " << n << " sweeps " << sweeps;
      EXPECT_GT(r.seconds, 0);
      EXPECT_DOUBLE_EQ(r.flops, 4.0 * static_cast<double>(n * n) * sweeps);
    }
  }
}

// Both schedules compute the serial reference's bits. With one thread held back at every sweep
// until the others have taken all its groups, the dynamic schedule has them sweep exactly its
// rows (a group swept twice, skipped or never taken changes the hash or the share of moved
// updates; a group not taken holds the late thread back 1 s); the fixed schedule moves none.
TEST(LaplaceJob, DynamicScheduleSharesALateThreadsRowsWithTheSameBits) {
  const int threads = g_rt->threads(), nodes = g_rt->processes();
  const auto& socket = g_rt->team().placement().socket_of_thread;
  const bool one_socket =
      std::all_of(socket.begin(), socket.end(), [&](int s) { return s == socket.front(); });
  const std::size_t n = 101;  // rows per thread not a multiple of the 4-row blocks
  // The last thread's rows on every process, as a share of all rows.
  double last_share = 0;
  for (int p = 0; p < nodes; ++p) {
    const auto [a, b] = compas::threads::block_range(n, nodes, p);
    const auto [c, d] = compas::threads::block_range(b - a, threads, threads - 1);
    last_share += static_cast<double>(d - c) / static_cast<double>(n);
  }
  for (lp::Schedule schedule : {lp::Schedule::fixed, lp::Schedule::dynamic}) {
    for (int slow : {-1, threads - 1}) {
      lp::Params p;
      p.n = n;
      p.iters = 9;
      p.schedule = schedule;
      compas::kernels::detail::TestHooks hooks;
      hooks.slow_thread = slow;
      p.test = &hooks;
      const auto r = lp::run(*g_rt, p);
      const std::string what = "schedule " + lp::to_string(schedule) + " slow thread " +
                               std::to_string(slow) + " of " + std::to_string(threads);
      EXPECT_TRUE(r.verified) << what << ": " << r.verification;
      EXPECT_EQ(r.field_hash, serial_hash(n, p.iters)) << what;
      EXPECT_GE(r.moved, 0.0) << what;
      EXPECT_LE(r.moved, 1.0) << what;
      if (schedule == lp::Schedule::fixed || threads == 1) {
        EXPECT_EQ(r.moved, 0.0) << what;
      } else if (slow >= 0 && one_socket) {
        // Two threads: the other one took its own groups before the late one's, so it moved
        // exactly those. More: the others also share out their own groups among themselves.
        if (threads == 2)
          EXPECT_NEAR(r.moved, last_share, 1e-12) << what;
        else
          EXPECT_GE(r.moved, last_share - 1e-12) << what;
      }
    }
  }
}

TEST(LaplaceJob, ScheduleNamesParse) {
  EXPECT_EQ(lp::parse_schedule("dynamic"), lp::Schedule::dynamic);
  EXPECT_EQ(lp::parse_schedule("fixed"), lp::Schedule::fixed);
  EXPECT_EQ(lp::parse_schedule("static"), lp::Schedule::fixed);
  for (const char* bad : {"", "Dynamic", "guided"}) {
    try {
      lp::parse_schedule(bad);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos)
          << e.what();
    }
  }
}

// --stores auto on a field beyond the caches below the last level times both store kinds on its
// first sweeps (runs of at least calibration::kMinSweeps) and keeps one; whichever it keeps, the
// bits are the serial reference's. Shorter runs do not calibrate.
TEST(LaplaceJob, AutoStoresCalibrateBeyondTheCachesWithTheSameBits) {
#if defined(__x86_64__)
  if (!compas::base::cpu_runs(compas::base::Isa::avx2))
    GTEST_SKIP() << "streaming sweeps need AVX2";
#else
  GTEST_SKIP() << "streaming sweeps exist on x86-64 only";
#endif
  const std::uint64_t threshold =
      compas::probes::nt_threshold(g_rt->topology(), g_rt->team().placement());
  // Both copies of the process's rows: 2 (n / P + 3) (n + 2) 8 bytes, past the threshold.
  std::size_t n = 64;
  const auto nodes = static_cast<std::size_t>(g_rt->processes());
  while (2 * (n / nodes + 3) * (n + 2) * 8 <= threshold) n += n / 2;
  if (n > 4096) GTEST_SKIP() << "caches below the last level of " << threshold << " bytes";
  constexpr int kMin = compas::kernels::calibration::kMinSweeps;
  for (int sweeps : {kMin, kMin - 1}) {
    lp::Params p;
    p.n = n;
    p.iters = sweeps;
    const auto r = lp::run(*g_rt, p);
    EXPECT_EQ(r.stores_calibrated, sweeps >= kMin) << "n " << n << " sweeps " << sweeps;
    EXPECT_TRUE(r.verified) << r.verification;
    EXPECT_EQ(r.field_hash, serial_hash(n, sweeps)) << "n " << n << " sweeps " << sweeps;
  }
  // A field inside the caches is not calibrated.
  lp::Params small;
  small.n = 16;
  small.iters = kMin;
  EXPECT_FALSE(lp::run(*g_rt, small).stores_calibrated);
}

TEST(LaplaceJob, ToleranceModeConvergesToTheHarmonicPolynomial) {
  lp::Params p;
  p.n = 24;
  p.iters = 100000;
  p.tol = 1e-11;
  p.check_every = 7;
  const auto r = lp::run(*g_rt, p);
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_LE(r.max_change, p.tol);
  EXPECT_LT(r.sweeps, p.iters);
  EXPECT_EQ(r.sweeps % p.check_every, 0);  // stops only at a check
  EXPECT_LT(r.max_error, 1e-7);
}

TEST(LaplaceJob, TooFewSweepsForTheToleranceIsNotVerified) {
  lp::Params p;
  p.n = 24;
  p.iters = 20;
  p.tol = 1e-11;
  const auto r = lp::run(*g_rt, p);
  EXPECT_FALSE(r.verified) << r.verification;
  EXPECT_NE(r.verification.find("did not converge"), std::string::npos) << r.verification;
}

TEST(LaplaceJob, APerturbedValueFailsVerification) {
  lp::Params p;
  p.n = 32;
  p.iters = 5;
  compas::kernels::detail::TestHooks hooks;
  hooks.inject_fault = true;
  p.test = &hooks;
  const auto r = lp::run(*g_rt, p);
  EXPECT_FALSE(r.verified) << r.verification;
  EXPECT_NE(r.field_hash, serial_hash(32, 5));
}

TEST(LaplaceJob, BadParametersAreRejected) {
  lp::Params p;
  p.n = 0;
  EXPECT_THROW(lp::check(p, 1), std::invalid_argument);
  p.n = 3;
  EXPECT_THROW(lp::check(p, 4), std::invalid_argument);
  p.n = 10;
  p.iters = 0;
  EXPECT_THROW(lp::check(p, 1), std::invalid_argument);
  p.iters = 1;
  p.tol = -1;
  EXPECT_THROW(lp::check(p, 1), std::invalid_argument);
}

// The store kinds are one enum for every kernel; Laplace has no direct stores and says so.
TEST(LaplaceJob, DirectStoresAreRefusedNamingTheKinds) {
  lp::Params p;
  p.n = 32;
  p.iters = 2;
  p.stores = lp::Stores::direct;
  try {
    lp::run(*g_rt, p);
    ADD_FAILURE() << "direct stores were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("auto, cached or streaming"), std::string::npos)
        << e.what();
  }
}

}  // namespace
