// NAS CG: the random number generator against exact integer arithmetic, the matrix (symmetry,
// structure, row ranges equal to the rows of the whole matrix), verification of the official
// classes on teams of 1, 2 and 3 threads with bitwise identical results, the same bits from
// several emulated processes exchanging through the Exchange interface, class T against the
// serial reference, a corrupted matrix failing verification, and the work models.
//
// Under AddressSanitizer only the small classes run (S and T); W needs an optimised build to stay
// quick.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <barrier>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../common/sanitized.hpp"
#include "cg_internal.hpp"
#include "compas/threads/team.hpp"

namespace cg = compas::kernels::cg;
namespace ct = compas::threads;

namespace {

__extension__ typedef unsigned __int128 u128;  // exact products of 46-bit numbers

using compas::test::kSanitized;

const ct::Topology& host() {
  static const ct::Topology t = ct::Topology::host();
  return t;
}

cg::Result run_on(int threads, const cg::ClassParams& cp, const cg::Csr& a,
                  std::vector<double>* z = nullptr, cg::Product product = cg::Product::automatic,
                  cg::SumOrder order = cg::SumOrder::running) {
  ct::TeamOptions o;
  o.threads = threads;
  o.allow_oversubscribe = threads > host().pus();
  ct::Team team(host(), o);
  cg::TeamExchange exchange;
  cg::Solver solver(cp, a, exchange, cg::rows_layout(a, order), product);
  std::vector<cg::Result> per_thread(static_cast<std::size_t>(threads));
  team.run(
      [&](ct::ThreadCtx& t) { per_thread[static_cast<std::size_t>(t.thread())] = solver.run(t); });
  for (const cg::Result& r : per_thread) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(r.zeta),
              std::bit_cast<std::uint64_t>(per_thread[0].zeta));
    EXPECT_EQ(std::bit_cast<std::uint64_t>(r.rnorm),
              std::bit_cast<std::uint64_t>(per_thread[0].rnorm));
  }
  if (z) z->assign(solver.z().begin(), solver.z().end());
  return per_thread[0];
}

const cg::Csr& matrix(char cls) {
  static const cg::Csr s = cg::make_matrix(cg::params('S'));
  static const cg::Csr t = cg::make_matrix(cg::params('T'));
  return cls == 'S' ? s : t;
}

// The value of row i, column j of a, or NaN when not stored.
double entry(const cg::Csr& a, std::int64_t i, std::int32_t j) {
  const std::size_t r = static_cast<std::size_t>(i - a.row_lo);
  const auto first = a.colidx.begin() + a.rowstr[r], last = a.colidx.begin() + a.rowstr[r + 1];
  const auto it = std::lower_bound(first, last, j);
  if (it == last || *it != j) return std::nan("");
  return a.values[static_cast<std::size_t>(it - a.colidx.begin())];
}

// P "processes" of one job emulated by P teams in this process, each with its own rows, its own
// vectors and its own Exchange that copies the other processes' blocks out of their arrays:
// the contract a distributed Exchange has to meet.
struct LoopbackJob {
  explicit LoopbackJob(int p) : procs(p), meet(p) {
    for (auto& table : published) table.resize(static_cast<std::size_t>(p));
  }
  int procs;
  std::barrier<> meet;
  // Where each process's array of an exchange is, by exchange number mod 2: a process publishes
  // for exchange n + 1 while others may still read what was published for n.
  std::array<std::vector<std::span<double>>, 2> published;
};

class LoopbackExchange final : public cg::Exchange {
 public:
  LoopbackExchange(LoopbackJob& job, std::int64_t na, int rank) : job_(job), na_(na), rank_(rank) {}
  void assemble_vector(ct::ThreadCtx& t, std::span<double> p) override { gather(t, p, 1, 1); }
  void assemble_partials(ct::ThreadCtx& t, std::span<double> partials, std::size_t k) override {
    gather(t, partials, cg::kChunkRows, k);
  }
  void synchronize(ct::ThreadCtx& t) override {
    t.barrier();
    if (t.thread() == 0) job_.meet.arrive_and_wait();
    t.barrier();
  }

 private:
  // Copies every other process's block of v (rows / `per` units of `k` values) from its array.
  void gather(ct::ThreadCtx& t, std::span<double> v, std::int64_t per, std::size_t k) {
    t.barrier();  // this process's threads have written their parts
    if (t.thread() == 0) {
      auto& where = job_.published[exchanges_++ % 2];
      where[static_cast<std::size_t>(rank_)] = v;
      job_.meet.arrive_and_wait();  // every process's array is complete and published
      for (int q = 0; q < job_.procs; ++q) {
        if (q == rank_) continue;
        const auto [lo, hi] = cg::row_block(na_, job_.procs, q);
        const std::size_t first = static_cast<std::size_t>((lo + per - 1) / per) * k;
        const std::size_t last = static_cast<std::size_t>((hi + per - 1) / per) * k;
        std::copy(where[static_cast<std::size_t>(q)].begin() + static_cast<std::ptrdiff_t>(first),
                  where[static_cast<std::size_t>(q)].begin() + static_cast<std::ptrdiff_t>(last),
                  v.begin() + static_cast<std::ptrdiff_t>(first));
      }
    }
    t.barrier();
  }
  LoopbackJob& job_;
  std::int64_t na_;
  int rank_;
  std::size_t exchanges_ = 0;
};

// Runs class cp as `threads.size()` processes with threads[i] threads each; zeta of every thread
// of every process, and z assembled from the processes' rows.
std::vector<cg::Result> run_loopback(const cg::ClassParams& cp, const std::vector<int>& threads,
                                     std::vector<double>* z,
                                     cg::SumOrder order = cg::SumOrder::running) {
  const int procs = static_cast<int>(threads.size());
  LoopbackJob job(procs);
  std::vector<cg::Result> results(static_cast<std::size_t>(procs));
  z->assign(static_cast<std::size_t>(cp.na), 0.0);
  std::vector<std::thread> runners;
  for (int rank = 0; rank < procs; ++rank) {
    runners.emplace_back([&, rank] {
      const auto [lo, hi] = cg::row_block(cp.na, procs, rank);
      const cg::Csr a = cg::make_matrix(cp, lo, hi);
      LoopbackExchange exchange(job, cp.na, rank);
      cg::Solver solver(cp, a, exchange, cg::rows_layout(a, order));
      ct::TeamOptions o;
      o.threads = threads[static_cast<std::size_t>(rank)];
      o.pin = false;
      o.allow_oversubscribe = true;
      o.job_oversubscribed = true;
      ct::Team team(host(), o);
      team.run([&](ct::ThreadCtx& t) {
        cg::Result r = solver.run(t);
        if (t.thread() == 0) results[static_cast<std::size_t>(rank)] = std::move(r);
      });
      std::copy(solver.z().begin(), solver.z().end(), z->begin() + static_cast<std::ptrdiff_t>(lo));
    });
  }
  for (auto& r : runners) r.join();
  return results;
}

}  // namespace

TEST(CgRandom, MatchesExactIntegerArithmetic) {
  constexpr u128 kMod = static_cast<u128>(1) << 46;
  const u128 a = 1220703125;  // 5^13
  ASSERT_EQ(a, static_cast<u128>(5ull * 5 * 5 * 5 * 5 * 5 * 5 * 5 * 5 * 5 * 5 * 5 * 5));
  u128 exact = 314159265;
  double x = cg::kSeed;
  for (int k = 0; k < 100000; ++k) {
    exact = exact * a % kMod;
    const double r = cg::randlc(&x, cg::kMultiplier);
    ASSERT_EQ(x, static_cast<double>(static_cast<std::uint64_t>(exact))) << "step " << k;
    // x / 2^46 is exact: the returned value must be that double to the last bit.
    const double expect = std::ldexp(static_cast<double>(static_cast<std::uint64_t>(exact)), -46);
    ASSERT_EQ(std::bit_cast<std::uint64_t>(r), std::bit_cast<std::uint64_t>(expect))
        << "step " << k;
  }
}

TEST(CgRandom, ExtremeSeedsAndOtherMultipliers) {
  constexpr std::uint64_t kMask = (std::uint64_t{1} << 46) - 1;
  for (std::uint64_t seed : {std::uint64_t{1}, kMask, kMask - 2, std::uint64_t{1} << 45}) {
    for (std::uint64_t mult : {std::uint64_t{1220703125}, kMask, std::uint64_t{3}}) {
      double x = static_cast<double>(seed);
      u128 exact = seed;
      for (int k = 0; k < 1000; ++k) {
        exact = exact * mult & kMask;
        cg::randlc(&x, static_cast<double>(mult));
        ASSERT_EQ(x, static_cast<double>(static_cast<std::uint64_t>(exact)))
            << "seed " << seed << " multiplier " << mult << " step " << k;
      }
    }
  }
}

TEST(CgRandom, VranlcIsConsecutiveRandlc) {
  double x1 = cg::kSeed, x2 = cg::kSeed;
  std::vector<double> y(1000);
  cg::vranlc(static_cast<std::int64_t>(y.size()), &x1, cg::kMultiplier, y.data());
  for (double v : y) EXPECT_EQ(v, cg::randlc(&x2, cg::kMultiplier));
  EXPECT_EQ(x1, x2);
}

TEST(CgParams, Classes) {
  EXPECT_EQ(cg::params('S').na, 1400);
  EXPECT_EQ(cg::params('w').nonzer, 8);
  EXPECT_EQ(cg::params('A').shift, 20);
  EXPECT_EQ(cg::params('B').niter, 75);
  EXPECT_EQ(cg::params('C').zeta_verify, 28.973605592845);
  EXPECT_FALSE(cg::params('T').official);
  for (char c : {'S', 'W', 'A', 'B', 'C', 'T'}) EXPECT_EQ(cg::params(c).rcond, 0.1);
  EXPECT_THROW(cg::params('D'), std::invalid_argument);
  EXPECT_THROW(cg::params('x'), std::invalid_argument);
}

TEST(CgMatrix, StructureOfClassS) {
  const cg::Csr& a = matrix('S');
  ASSERT_EQ(a.n, 1400);
  ASSERT_EQ(a.rowstr.size(), 1401u);
  EXPECT_EQ(a.rowstr.front(), 0);
  EXPECT_EQ(a.rowstr.back(), a.nnz());
  EXPECT_EQ(a.colidx.size(), a.values.size());
  for (std::int64_t i = 0; i < a.n; ++i) {
    const auto r = static_cast<std::size_t>(i);
    for (std::int64_t k = a.rowstr[r]; k < a.rowstr[r + 1]; ++k) {
      const std::int32_t c = a.colidx[static_cast<std::size_t>(k)];
      ASSERT_GE(c, 0);
      ASSERT_LT(c, a.n);
      if (k > a.rowstr[r]) {
        ASSERT_LT(a.colidx[static_cast<std::size_t>(k) - 1], c) << "row " << i;
      }
    }
    // Every row has its diagonal: rcond - shift plus a sum of squares.
    const double d = entry(a, i, static_cast<std::int32_t>(i));
    ASSERT_FALSE(std::isnan(d)) << "row " << i;
    EXPECT_GT(d, 0.1 - 10) << "row " << i;
  }
}

TEST(CgMatrix, ClassSIsSymmetric) {
  const cg::Csr& a = matrix('S');
  for (std::int64_t i = 0; i < a.n; ++i) {
    const auto r = static_cast<std::size_t>(i);
    for (std::int64_t k = a.rowstr[r]; k < a.rowstr[r + 1]; ++k) {
      const std::int32_t j = a.colidx[static_cast<std::size_t>(k)];
      const double v = a.values[static_cast<std::size_t>(k)];
      const double w = entry(a, j, static_cast<std::int32_t>(i));
      ASSERT_FALSE(std::isnan(w)) << "(" << i << ", " << j << ") has no transpose";
      // a_ij and a_ji are the same sums of the same products, each product associated the other
      // way round (x_j (s x_i) against x_i (s x_j)): equal to within a few roundings.
      ASSERT_LE(std::fabs(v - w), 1e-14 * std::fabs(v)) << "(" << i << ", " << j << ")";
    }
  }
}

TEST(CgMatrix, RowRangesAreTheRowsOfTheWholeMatrix) {
  const cg::ClassParams cp = cg::params('S');
  const cg::Csr& full = matrix('S');
  const std::pair<std::int64_t, std::int64_t> ranges[] = {
      {0, 1400}, {0, 64}, {64, 700}, {333, 777}, {1399, 1400}, {700, 700}, {1344, 1400}};
  for (auto [lo, hi] : ranges) {
    const cg::Csr part = cg::make_matrix(cp, lo, hi);
    ASSERT_EQ(part.row_lo, lo);
    ASSERT_EQ(part.row_hi, hi);
    ASSERT_EQ(part.rowstr.size(), static_cast<std::size_t>(hi - lo) + 1);
    const std::int64_t base = full.rowstr[static_cast<std::size_t>(lo)];
    for (std::int64_t i = 0; i <= hi - lo; ++i)
      ASSERT_EQ(part.rowstr[static_cast<std::size_t>(i)],
                full.rowstr[static_cast<std::size_t>(lo + i)] - base);
    for (std::int64_t k = 0; k < part.nnz(); ++k) {
      const auto f = static_cast<std::size_t>(base + k), p = static_cast<std::size_t>(k);
      ASSERT_EQ(part.colidx[p], full.colidx[f]);
      ASSERT_EQ(std::bit_cast<std::uint64_t>(part.values[p]),
                std::bit_cast<std::uint64_t>(full.values[f]));
    }
  }
  EXPECT_THROW(cg::make_matrix(cp, -1, 10), std::invalid_argument);
  EXPECT_THROW(cg::make_matrix(cp, 10, 5), std::invalid_argument);
  EXPECT_THROW(cg::make_matrix(cp, 0, 1401), std::invalid_argument);
}

TEST(CgDecomposition, RowBlocksAreWholeChunksCoveringTheRows) {
  for (std::int64_t na : {1400, 7000, 64, 65, 10}) {
    for (int parts = 1; parts <= 5; ++parts) {
      std::int64_t next = 0;
      for (int i = 0; i < parts; ++i) {
        const auto [lo, hi] = cg::row_block(na, parts, i);
        EXPECT_EQ(lo, next);
        EXPECT_TRUE(lo % cg::kChunkRows == 0 || lo == na);  // more parts than chunks: empty
        EXPECT_TRUE(hi % cg::kChunkRows == 0 || hi == na);
        next = hi;
      }
      EXPECT_EQ(next, na);
    }
  }
  // A solver refuses rows that do not start on a chunk boundary.
  const cg::ClassParams cp = cg::params('S');
  const cg::Csr part = cg::make_matrix(cp, 100, 200);
  cg::TeamExchange exchange;
  EXPECT_THROW(cg::Solver(cp, part, exchange), std::invalid_argument);
  EXPECT_THROW(cg::Solver(cg::params('W'), matrix('S'), exchange), std::invalid_argument);
}

TEST(CgReference, SerialReferenceVerifiesClassS) {
  const cg::ClassParams cp = cg::params('S');
  const cg::Result r = cg::serial_reference(cp, matrix('S'));
  EXPECT_TRUE(r.verified) << "zeta " << r.zeta << " error " << r.error;
  EXPECT_LT(r.rnorm, 1e-10);
}

TEST(CgRun, ClassSVerifiedAndBitwiseIdenticalOn1To3Threads) {
  const cg::ClassParams cp = cg::params('S');
  std::vector<double> z1;
  const cg::Result r1 = run_on(1, cp, matrix('S'), &z1);
  EXPECT_TRUE(r1.verified) << "zeta " << r1.zeta << " error " << r1.error;
  EXPECT_EQ(r1.zeta_history.size(), 15u);
  EXPECT_EQ(r1.nnz, matrix('S').nnz());
  for (int threads : {2, 3}) {
    std::vector<double> z;
    const cg::Result r = run_on(threads, cp, matrix('S'), &z);
    EXPECT_EQ(r.threads, threads);
    EXPECT_TRUE(r.verified) << threads << " threads: zeta " << r.zeta << " error " << r.error;
    EXPECT_EQ(std::bit_cast<std::uint64_t>(r.zeta), std::bit_cast<std::uint64_t>(r1.zeta));
    EXPECT_EQ(std::bit_cast<std::uint64_t>(r.rnorm), std::bit_cast<std::uint64_t>(r1.rnorm));
    ASSERT_EQ(z.size(), z1.size());
    for (std::size_t i = 0; i < z.size(); ++i)
      ASSERT_EQ(std::bit_cast<std::uint64_t>(z[i]), std::bit_cast<std::uint64_t>(z1[i])) << i;
  }
  // The portable product loop gives the bits of the vectorized one (where the CPU has one), on
  // one thread and on two (whose product is shared out dynamically).
  for (int threads : {1, 2}) {
    std::vector<double> z;
    const cg::Result r = run_on(threads, cp, matrix('S'), &z, cg::Product::generic);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(r.zeta), std::bit_cast<std::uint64_t>(r1.zeta));
    ASSERT_EQ(z.size(), z1.size());
    for (std::size_t i = 0; i < z.size(); ++i)
      ASSERT_EQ(std::bit_cast<std::uint64_t>(z[i]), std::bit_cast<std::uint64_t>(z1[i]))
          << "generic product, " << threads << " thread(s), row " << i;
  }
  // Same algorithm as the serial reference, other summation order: equal to rounding.
  const cg::Result ref = cg::serial_reference(cp, matrix('S'));
  EXPECT_NEAR(r1.zeta, ref.zeta, 1e-13 * ref.zeta);
  // The model counts the matrix as the solver stores it: 10 bytes per entry (value, 16-bit
  // column offset) plus the padding of the 8-row slices, which the length sort keeps small, plus
  // 12 bytes per slice and panel.
  const double nnz = static_cast<double>(matrix('S').nnz());
  const double slices = static_cast<double>(cg::panel_count(1400) * ((1400 + 7) / 8));
  EXPECT_GE(r1.model.matrix_bytes, 10 * nnz + 12 * slices);
  EXPECT_LE(r1.model.matrix_bytes, 10 * 1.3 * nnz + 12 * slices + 4);
  EXPECT_EQ(r1.model.flops, cg::inner_iteration_model(matrix('S')).flops);
}

TEST(CgRun, ProcessesThroughAnExchangeGiveTheSameBits) {
  const cg::ClassParams cp = cg::params('S');
  std::vector<double> z1;
  const cg::Result one = run_on(1, cp, matrix('S'), &z1);
  for (const std::vector<int>& shape : {std::vector<int>{1, 1}, std::vector<int>{2, 1, 1}}) {
    SCOPED_TRACE(testing::Message() << shape.size() << " processes");
    std::vector<double> z;
    const std::vector<cg::Result> per_process = run_loopback(cp, shape, &z);
    for (const cg::Result& r : per_process) {
      EXPECT_TRUE(r.verified) << "zeta " << r.zeta << " error " << r.error;
      EXPECT_EQ(std::bit_cast<std::uint64_t>(r.zeta), std::bit_cast<std::uint64_t>(one.zeta));
      EXPECT_EQ(std::bit_cast<std::uint64_t>(r.rnorm), std::bit_cast<std::uint64_t>(one.rnorm));
    }
    for (std::size_t i = 0; i < z.size(); ++i)
      ASSERT_EQ(std::bit_cast<std::uint64_t>(z[i]), std::bit_cast<std::uint64_t>(z1[i])) << i;
  }
}

TEST(CgRun, ClassWVerifiedOn2And3ThreadsWithTheSameBitsAndByTheSerialReference) {
  if (kSanitized) GTEST_SKIP() << "class W only in optimised builds";
  const cg::ClassParams cp = cg::params('W');
  const cg::Csr a = cg::make_matrix(cp);
  std::vector<double> z2, z3;
  const cg::Result r = run_on(2, cp, a, &z2);
  EXPECT_TRUE(r.verified) << "zeta " << r.zeta << " error " << r.error;
  EXPECT_LT(r.rnorm, 1e-10);
  // W's 7000 columns make two panels (S and T have one): the bits hold across them too.
  ASSERT_GT(cg::panel_count(cp.na), 1);
  const cg::Result r3 = run_on(3, cp, a, &z3);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(r3.zeta), std::bit_cast<std::uint64_t>(r.zeta));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(r3.rnorm), std::bit_cast<std::uint64_t>(r.rnorm));
  ASSERT_EQ(z3.size(), z2.size());
  for (std::size_t i = 0; i < z2.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint64_t>(z3[i]), std::bit_cast<std::uint64_t>(z2[i])) << i;
  EXPECT_GT(r.seconds, 0);
  EXPECT_GT(r.mops, 0);
  const cg::Result ref = cg::serial_reference(cp, a);
  EXPECT_TRUE(ref.verified) << "serial zeta " << ref.zeta << " error " << ref.error;
}

// The product has a loop of its own for each number of waiting siblings a panel's step adds
// (S, W and T have one or two panels: 0 and 1). A's 4 panels need steps that add 0, 1 and 2; the
// portable and the vectorized loops give the same bits there, and A verifies.
TEST(CgRun, ClassAPortableAndVectorizedProductsGiveTheSameBits) {
  if (kSanitized) GTEST_SKIP() << "class A only in optimised builds";
  const cg::ClassParams cp = cg::params('A');
  ASSERT_EQ(cg::panel_count(cp.na), 4);
  const cg::Csr a = cg::make_matrix(cp);
  std::vector<double> zv, zg;
  const cg::Result v = run_on(1, cp, a, &zv);
  const cg::Result g = run_on(1, cp, a, &zg, cg::Product::generic);
  EXPECT_TRUE(v.verified) << "zeta " << v.zeta << " error " << v.error;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(g.zeta), std::bit_cast<std::uint64_t>(v.zeta));
  ASSERT_EQ(zg.size(), zv.size());
  for (std::size_t i = 0; i < zv.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint64_t>(zg[i]), std::bit_cast<std::uint64_t>(zv[i])) << i;
}

// Class A has 4 panels, where the two orders differ (S, W and T have one or two). In either
// order one thread, three threads and two processes give the same bits; the orders themselves
// differ in the last bits of z, and both verify. The default (rows_layout, cg::run) is running.
TEST(CgRun, ClassAInEitherSumOrderGivesTheSameBitsOnEveryShape) {
  if (kSanitized) GTEST_SKIP() << "class A only in optimised builds";
  const cg::ClassParams cp = cg::params('A');
  ASSERT_EQ(cg::panel_count(cp.na), 4);
  const cg::Csr a = cg::make_matrix(cp);
  EXPECT_EQ(cg::rows_layout(a).sum_order, cg::SumOrder::running);
  std::vector<double> z_of[2];
  double zeta_of[2] = {};
  for (const cg::SumOrder order : {cg::SumOrder::tree, cg::SumOrder::running}) {
    const bool tree = order == cg::SumOrder::tree;
    SCOPED_TRACE(tree ? "tree" : "running");
    std::vector<double>& z1 = z_of[tree ? 0 : 1];
    const cg::Result one = run_on(1, cp, a, &z1, cg::Product::automatic, order);
    EXPECT_TRUE(one.verified) << "zeta " << one.zeta << " error " << one.error;
    zeta_of[tree ? 0 : 1] = one.zeta;
    std::vector<double> z3, zp;
    const cg::Result three = run_on(3, cp, a, &z3, cg::Product::automatic, order);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(three.zeta), std::bit_cast<std::uint64_t>(one.zeta));
    for (const cg::Result& r : run_loopback(cp, {2, 1}, &zp, order))
      EXPECT_EQ(std::bit_cast<std::uint64_t>(r.zeta), std::bit_cast<std::uint64_t>(one.zeta));
    ASSERT_EQ(z3.size(), z1.size());
    ASSERT_EQ(zp.size(), z1.size());
    for (std::size_t i = 0; i < z1.size(); ++i) {
      ASSERT_EQ(std::bit_cast<std::uint64_t>(z3[i]), std::bit_cast<std::uint64_t>(z1[i])) << i;
      ASSERT_EQ(std::bit_cast<std::uint64_t>(zp[i]), std::bit_cast<std::uint64_t>(z1[i])) << i;
    }
  }
  std::size_t differ = 0;
  for (std::size_t i = 0; i < z_of[0].size(); ++i) {
    differ += z_of[0][i] != z_of[1][i];
    EXPECT_NEAR(z_of[0][i], z_of[1][i], 1e-12 * std::fabs(z_of[1][i]) + 1e-300) << i;
  }
  EXPECT_GT(differ, 0u) << "the tree and running orders gave the same z";
  EXPECT_NEAR(zeta_of[0], zeta_of[1], 1e-13 * zeta_of[1]);
  const auto by_default = [&] {
    ct::TeamOptions o;
    o.threads = 1;
    ct::Team team(host(), o);
    return cg::run(team, cp);
  }();
  EXPECT_EQ(std::bit_cast<std::uint64_t>(by_default.zeta),
            std::bit_cast<std::uint64_t>(zeta_of[1]));
}

// The running order needs every panel: over part of them (a grid's block) it is refused, where
// the tree's order is taken.
TEST(CgDecomposition, TheRunningOrderNeedsEveryPanel) {
  const cg::ClassParams cp = cg::params('W');
  ASSERT_EQ(cg::panel_count(cp.na), 2);
  cg::Layout l = cg::grid_layout(cp.na, {2, 2}, 1);  // row block 0, column block 1
  const auto [lo, hi] = cg::grid_block(cp.na, 2, 0);
  cg::Csr block = cg::make_matrix(cp, lo, hi);
  cg::keep_columns(block, l.vector_lo, l.vector_hi);
  cg::TeamExchange exchange;
  EXPECT_EQ(l.sum_order, cg::SumOrder::tree);
  EXPECT_NO_THROW(cg::Solver(cp, block, exchange, l));
  l.sum_order = cg::SumOrder::running;
  try {
    cg::Solver solver(cp, block, exchange, l);
    ADD_FAILURE() << "the running order over panel 1 of 2 was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("running sum order over panels [1, 2) of 2"),
              std::string::npos)
        << e.what();
  }
}

TEST(CgRun, ClassTMatchesTheSerialReferenceAndConverges) {
  const cg::ClassParams cp = cg::params('T');
  const cg::Result ref = cg::serial_reference(cp, matrix('T'));
  EXPECT_TRUE(ref.verified) << "serial zeta " << ref.zeta << " error " << ref.error;
  const cg::Result r = run_on(2, cp, matrix('T'));
  EXPECT_TRUE(r.verified) << "zeta " << r.zeta << " error " << r.error;
  const auto& h = r.zeta_history;
  ASSERT_GE(h.size(), 2u);
  EXPECT_LE(std::fabs(h.back() - h[h.size() - 2]), 1e-12 * h.back());
  EXPECT_LT(r.rnorm, 1e-10);
  // Through the team convenience too.
  ct::TeamOptions o;
  o.threads = 2;
  o.allow_oversubscribe = 2 > host().pus();
  ct::Team team(host(), o);
  const cg::Result viaTeam = cg::run(team, cp);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(viaTeam.zeta), std::bit_cast<std::uint64_t>(r.zeta));
}

TEST(CgRun, CorruptedMatrixFailsVerification) {
  const cg::ClassParams cp = cg::params('S');
  cg::Csr a = matrix('S');
  // One off-diagonal value of a middle row, changed by a tenth of a percent.
  const std::size_t row = 700;
  std::size_t k = static_cast<std::size_t>(a.rowstr[row]);
  if (a.colidx[k] == static_cast<std::int32_t>(row)) ++k;
  a.values[k] *= 1.001;
  const cg::Result r = run_on(2, cp, a);
  EXPECT_FALSE(r.verified) << "zeta " << r.zeta << " error " << r.error;
  EXPECT_GT(r.error, cg::kEpsilon);
  EXPECT_FALSE(cg::verify(cp, std::nan("")));
}

TEST(CgModel, NpbOperationCountAndIterationModel) {
  // 2 niter na (3 + nonzer (nonzer + 1) + 25 (5 + nonzer (nonzer + 1)) + 3) for S: 7 * 8 = 56.
  EXPECT_EQ(cg::npb_flops(cg::params('S')), 2.0 * 15 * 1400 * (3 + 56 + 25 * (5 + 56) + 3));
  const cg::IterationModel m = cg::inner_iteration_model(1400, 700, 40000);
  EXPECT_EQ(m.flops, 2.0 * 40000 + 10 * 700);
  EXPECT_EQ(m.matrix_bytes, 12.0 * 40000 + 8 * 701);
  EXPECT_EQ(m.vector_bytes, 8.0 * 1400 + 80 * 700);
  EXPECT_GT(m.intensity(), 0);
  const cg::Csr& a = matrix('S');
  EXPECT_EQ(cg::inner_iteration_model(a).flops, 2.0 * static_cast<double>(a.nnz()) + 10 * 1400);
  EXPECT_EQ(a.bytes(), 12.0 * static_cast<double>(a.nnz()) + 8 * 1401);
}

// Not a pass/fail test: times classes for reports. Run with (environment defaults shown)
//   COMPAS_CG_CLASSES=SWA COMPAS_CG_THREADS=1,2 COMPAS_CG_REPEATS=3 build/release/bin/
//   kernels_test_cg --gtest_also_run_disabled_tests --gtest_filter='*Timing*'
// Prints, per class and thread count, the median of the repeats (seconds of the timed part and
// NPB Mop/s) and the model's bandwidth; fails only when a run does not verify.
TEST(CgTiming, DISABLED_Classes) {
  const auto env = [](const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return std::string(v && *v ? v : fallback);
  };
  const std::string classes = env("COMPAS_CG_CLASSES", "SWA");
  std::vector<int> thread_counts;
  {
    const std::string list = env("COMPAS_CG_THREADS", "1,2");
    std::size_t pos = 0;
    while (pos < list.size()) {
      const std::size_t comma = std::min(list.find(',', pos), list.size());
      thread_counts.push_back(std::stoi(list.substr(pos, comma - pos)));
      pos = comma + 1;
    }
  }
  const int repeats = std::max(1, std::stoi(env("COMPAS_CG_REPEATS", "3")));
  for (char cls : classes) {
    const cg::ClassParams cp = cg::params(cls);
    const auto t0 = std::chrono::steady_clock::now();
    const cg::Csr a = cg::make_matrix(cp);
    const double setup =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("class %c: na %lld, nnz %lld, matrix %.1f MB, generated in %.2f s\n", cp.cls,
                static_cast<long long>(cp.na), static_cast<long long>(a.nnz()), a.bytes() / 1e6,
                setup);
    const cg::IterationModel m = cg::inner_iteration_model(a);
    // Inner iterations of the timed part: niter x (25 + the residual's product, counted as one).
    const double inner = cp.niter * (cg::kCgIterations + 1.0);
    for (int threads : thread_counts) {
      std::vector<cg::Result> runs;
      for (int k = 0; k < repeats; ++k) runs.push_back(run_on(threads, cp, a));
      std::sort(runs.begin(), runs.end(),
                [](const cg::Result& x, const cg::Result& y) { return x.seconds < y.seconds; });
      const cg::Result& r = runs[runs.size() / 2];
      EXPECT_TRUE(r.verified) << cp.cls << " on " << threads << " threads: zeta " << r.zeta;
      std::printf(
          "  T=%d: %.3f s (min %.3f, max %.3f), %.1f Mop/s, model %.1f GB/s %.2f flop/B, zeta "
          "%.13f, error %.1e, %s\n",
          threads, r.seconds, runs.front().seconds, runs.back().seconds, r.mops,
          inner * m.bytes() / r.seconds / 1e9, m.intensity(), r.zeta, r.error,
          r.verified ? "verified" : "NOT VERIFIED");
    }
  }
}
