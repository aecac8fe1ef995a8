// GEMM, local part: compas::kernels::gemm::multiply against OpenBLAS cblas_dgemm for every
// micro-kernel this CPU can run (generic, AVX2, AVX-512), over shapes from 0 to 300 (tiny, odd,
// prime, non-square, tall and flat), tight and padded leading dimensions, overwrite and
// accumulate, on the calling thread alone and on teams of 1, 2 and 3 threads (3 oversubscribe a
// 2-PU machine). A deliberately small blocking sends the same shapes through many A panels, B
// blocks and depth steps. Results must agree within 1e-12 * k of max |C| (max norm), the padding
// of C must be untouched, and for a given ISA and blocking the bits must not depend on the
// number of threads (each element sees the same operations in the same order).
#include <cblas.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/kernels/gemm_local.hpp"
#include "compas/threads/team.hpp"

namespace gemm = compas::kernels::gemm;
namespace ct = compas::threads;

namespace {

constexpr double kPadding = 12345.5;  // value of C's padding columns, must survive

const ct::Topology& host() {
  static const ct::Topology t = ct::Topology::host();
  return t;
}

// One team per thread count, made once (pinning threads is not free).
ct::Team& team_of(int threads) {
  const ct::Topology& topo = host();  // made first, so it outlives the teams
  static std::map<int, std::unique_ptr<ct::Team>> teams;
  auto& t = teams[threads];
  if (!t) {
    ct::TeamOptions o;
    o.threads = threads;
    o.allow_oversubscribe = threads > host().pus();
    t = std::make_unique<ct::Team>(topo, o);
  }
  return *t;
}

struct Shape {
  std::size_t m, n, k;
};

std::string describe(const Shape& s, std::size_t lda, std::size_t ldb, std::size_t ldc,
                     bool accumulate, int threads) {
  std::ostringstream o;
  o << "m=" << s.m << " n=" << s.n << " k=" << s.k << " lda=" << lda << " ldb=" << ldb
    << " ldc=" << ldc << (accumulate ? " accumulate" : " overwrite")
    << " threads=" << (threads == 0 ? std::string("serial") : std::to_string(threads));
  return o.str();
}

// Operands of one product, filled from a seed; C holds the starting values (NaN when the
// product overwrites it, to show they are never read) and kPadding beyond column n.
struct Problem {
  Shape s;
  std::size_t lda, ldb, ldc;
  bool accumulate;
  std::vector<double> A, B, C0;

  Problem(Shape shape, std::size_t pad, bool acc, std::uint64_t seed)
      : s(shape),
        lda(std::max<std::size_t>(1, shape.k + pad)),
        ldb(std::max<std::size_t>(1, shape.n + pad / 2)),
        ldc(std::max<std::size_t>(1, shape.n + pad / 3 + (pad ? 1 : 0))),
        accumulate(acc) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    A.resize(std::max<std::size_t>(1, s.m * lda));
    B.resize(std::max<std::size_t>(1, s.k * ldb));
    C0.resize(std::max<std::size_t>(1, s.m * ldc));
    for (double& x : A) x = u(rng);
    for (double& x : B) x = u(rng);
    for (std::size_t i = 0; i < s.m; ++i)
      for (std::size_t j = 0; j < ldc; ++j)
        C0[i * ldc + j] = j >= s.n ? kPadding
                          : acc    ? u(rng)
                                   : std::numeric_limits<double>::quiet_NaN();
  }

  std::vector<double> reference() const {
    std::vector<double> R = C0;
    for (std::size_t i = 0; i < s.m; ++i)
      for (std::size_t j = 0; j < s.n; ++j)
        if (!accumulate) R[i * ldc + j] = 0.0;
    if (s.m && s.n && s.k)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s.m),
                  static_cast<int>(s.n), static_cast<int>(s.k), 1.0, A.data(),
                  static_cast<int>(lda), B.data(), static_cast<int>(ldb), accumulate ? 1.0 : 0.0,
                  R.data(), static_cast<int>(ldc));
    return R;
  }

  // threads 0: the serial overload; otherwise a team of that many threads.
  std::vector<double> run(int threads, gemm::Workspace& ws) const {
    std::vector<double> C = C0;
    if (threads == 0) {
      gemm::multiply(s.m, s.n, s.k, A.data(), lda, B.data(), ldb, C.data(), ldc, accumulate, ws);
    } else {
      team_of(threads).run([&](ct::ThreadCtx& t) {
        gemm::multiply(t, s.m, s.n, s.k, A.data(), lda, B.data(), ldb, C.data(), ldc, accumulate,
                       ws);
      });
    }
    return C;
  }
};

// Max-norm error relative to max |reference| within 1e-12 * k (exact when the reference is 0),
// and the padding columns unchanged.
::testing::AssertionResult agrees(const Problem& p, const std::vector<double>& C,
                                  const std::vector<double>& R) {
  double err = 0, scale = 0;
  for (std::size_t i = 0; i < p.s.m; ++i) {
    for (std::size_t j = 0; j < p.ldc; ++j) {
      const double c = C[i * p.ldc + j], r = R[i * p.ldc + j];
      if (j >= p.s.n) {
        if (std::memcmp(&c, &kPadding, sizeof c) != 0)
          return ::testing::AssertionFailure()
                 << "padding of C changed at (" << i << ", " << j << "): " << c;
        continue;
      }
      const double d = std::abs(c - r);
      if (!(d <= err)) err = d;  // NaN sticks
      scale = std::max(scale, std::abs(r));
    }
  }
  const double tol = 1e-12 * static_cast<double>(std::max<std::size_t>(1, p.s.k)) * scale;
  if (err <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max |C - reference| = " << err << " > " << tol
                                       << " (max |reference| = " << scale << ")";
}

std::vector<gemm::Isa> isas_here() {
  std::vector<gemm::Isa> out{gemm::Isa::generic};
  if (gemm::isa_supported(gemm::Isa::avx2)) out.push_back(gemm::Isa::avx2);
  if (gemm::isa_supported(gemm::Isa::avx512)) out.push_back(gemm::Isa::avx512);
  return out;
}

// Every shape x leading dimensions x accumulate x thread configuration, against OpenBLAS.
void check_shapes(gemm::Workspace& ws, const std::vector<Shape>& shapes,
                  const std::vector<int>& thread_counts) {
  std::uint64_t seed = 1;
  int index = 0;
  for (const Shape& s : shapes) {
    for (bool acc : {false, true}) {
      // Alternate tight and padded leading dimensions so both appear for every size class.
      const std::size_t pad = (index++ % 2) ? 5 : 0;
      const Problem p(s, pad, acc, seed++);
      const std::vector<double> R = p.reference();
      for (int threads : thread_counts) {
        const std::vector<double> C = p.run(threads, ws);
        ASSERT_TRUE(agrees(p, C, R)) << describe(s, p.lda, p.ldb, p.ldc, acc, threads) << " isa "
                                     << compas::base::to_string(ws.blocking().isa);
      }
    }
  }
}

std::vector<Shape> cross(const std::vector<std::size_t>& v) {
  std::vector<Shape> out;
  for (std::size_t m : v)
    for (std::size_t n : v)
      for (std::size_t k : v) out.push_back({m, n, k});
  return out;
}

// Shapes with the larger sizes: squares, every mix of a few large sizes, tall and flat.
std::vector<Shape> large_shapes() {
  std::vector<Shape> out;
  for (std::size_t s : {31, 64, 97, 128, 255, 300}) out.push_back({s, s, s});
  for (const std::vector<std::size_t>& sizes :
       {std::vector<std::size_t>{31, 97, 300}, std::vector<std::size_t>{8, 64, 128, 255}})
    for (const Shape& s : cross(sizes))
      if (!(s.m == s.n && s.n == s.k)) out.push_back(s);
  for (std::size_t s : {64, 128, 255}) {
    out.push_back({s, 1, s});
    out.push_back({1, s, s});
    out.push_back({s, s, 1});
    out.push_back({s, 9, 300});
    out.push_back({9, s, 300});
    out.push_back({300, s, 7});
  }
  return out;
}

class GemmIsa : public ::testing::TestWithParam<gemm::Isa> {
 protected:
  void SetUp() override {
    if (!gemm::isa_supported(GetParam()))
      GTEST_SKIP() << "this CPU cannot run " << compas::base::to_string(GetParam());
  }
  gemm::Blocking blocking() const { return gemm::choose_blocking(GetParam()); }
  // Tiny cache blocks, so that sizes up to 300 go through many panels and blocks, and an odd kc
  // so that depth steps end inside the micro-kernel's unrolled loop.
  gemm::Blocking small_blocking() const {
    gemm::Blocking b = blocking();
    b.kc = 13;
    b.mc = 3 * b.mr;
    b.nc = 2 * b.nr;
    return b;
  }
};

TEST_P(GemmIsa, SmallShapesMatchOpenBlas) {
  gemm::Workspace ws(blocking());
  ASSERT_EQ(ws.blocking().isa, GetParam());
  check_shapes(ws, cross({0, 1, 2, 3, 7, 8, 9, 17}), {0, 2});
  check_shapes(ws, cross({0, 1, 5, 9, 25}), {1, 3});
}

TEST_P(GemmIsa, LargeShapesMatchOpenBlas) {
  gemm::Workspace ws(blocking());
  check_shapes(ws, large_shapes(), {0, 2, 3});
}

TEST_P(GemmIsa, ManyPanelsAndBlocksMatchOpenBlas) {
  gemm::Workspace ws(small_blocking());
  std::vector<Shape> shapes = {{97, 97, 97}, {64, 31, 255}, {31, 300, 64}, {255, 17, 9},
                               {9, 255, 31}, {8, 24, 13},   {7, 23, 26},   {300, 1, 27}};
  check_shapes(ws, shapes, {0, 1, 2, 3});
}

// The same bits whatever the thread count: every element is reduced in the same order.
TEST_P(GemmIsa, ThreadCountDoesNotChangeBits) {
  for (const gemm::Blocking& b : {blocking(), small_blocking()}) {
    gemm::Workspace ws(b);
    for (const Shape& s : std::vector<Shape>{{97, 255, 300}, {300, 31, 64}, {17, 97, 128}}) {
      const Problem p(s, 3, true, 42);
      const std::vector<double> serial = p.run(0, ws);
      for (int threads : {1, 2, 3})
        ASSERT_EQ(p.run(threads, ws), serial)
            << describe(s, p.lda, p.ldb, p.ldc, true, threads) << " kc " << b.kc;
    }
  }
}

// A workspace grown by a large product serves a smaller one, and a new thread count, correctly.
TEST_P(GemmIsa, WorkspaceIsReusedAcrossSizesAndTeams) {
  gemm::Workspace ws(blocking());
  check_shapes(ws, {{255, 300, 255}}, {2});
  const std::size_t grown = ws.bytes();
  EXPECT_GT(grown, 0u);
  check_shapes(ws, {{17, 9, 31}, {97, 64, 128}}, {3, 0, 1});
  check_shapes(ws, {{255, 300, 255}}, {2});
  EXPECT_GE(ws.bytes(), grown);
}

std::string isa_name(const ::testing::TestParamInfo<gemm::Isa>& info) {
  return compas::base::to_string(info.param);
}

INSTANTIATE_TEST_SUITE_P(Isa, GemmIsa,
                         ::testing::Values(gemm::Isa::generic, gemm::Isa::avx2, gemm::Isa::avx512),
                         isa_name);

// ---- ISA choice and blocking ------------------------------------------------------------------

class EnvGuard {
 public:
  explicit EnvGuard(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) saved_ = v, had_ = true;
  }
  ~EnvGuard() {
    if (had_)
      setenv(name_, saved_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::string saved_;
  bool had_ = false;
};

TEST(GemmIsaChoice, AutomaticPicksTheBestSupported) {
  EnvGuard guard("COMPAS_GEMM_ISA");
  unsetenv("COMPAS_GEMM_ISA");
  const gemm::Isa best = gemm::isa_supported(gemm::Isa::avx512) ? gemm::Isa::avx512
                         : gemm::isa_supported(gemm::Isa::avx2) ? gemm::Isa::avx2
                                                                : gemm::Isa::generic;
  EXPECT_EQ(gemm::resolve_isa(), best);
  EXPECT_EQ(gemm::isa_used(), compas::base::to_string(best));
  EXPECT_EQ(gemm::Workspace().blocking().isa, best);
}

TEST(GemmIsaChoice, EnvironmentForcesEverySupportedIsa) {
  EnvGuard guard("COMPAS_GEMM_ISA");
  for (gemm::Isa isa : isas_here()) {
    setenv("COMPAS_GEMM_ISA", compas::base::to_string(isa), 1);
    EXPECT_EQ(gemm::isa_used(), compas::base::to_string(isa));
    gemm::Workspace ws;
    EXPECT_EQ(ws.blocking().isa, isa);
    const Problem p({31, 97, 64}, 0, false, 7);
    EXPECT_TRUE(agrees(p, p.run(2, ws), p.reference())) << compas::base::to_string(isa);
  }
  // An explicit ISA wins over the environment.
  setenv("COMPAS_GEMM_ISA", "generic", 1);
  EXPECT_EQ(gemm::resolve_isa(isas_here().back()), isas_here().back());
}

TEST(GemmIsaChoice, BadNamesAndUnsupportedIsasAreRejected) {
  EnvGuard guard("COMPAS_GEMM_ISA");
  EXPECT_THROW(gemm::parse_isa("sse9"), std::invalid_argument);
  EXPECT_EQ(gemm::parse_isa("avx2"), gemm::Isa::avx2);
  EXPECT_EQ(gemm::parse_isa("auto"), std::nullopt);
  EXPECT_THROW(gemm::parse_isa("sse2"), std::invalid_argument);  // no sse2 kernel
  EXPECT_FALSE(gemm::isa_supported(gemm::Isa::sse2));
  setenv("COMPAS_GEMM_ISA", "sse9", 1);
  EXPECT_THROW(gemm::isa_used(), std::invalid_argument);
  for (gemm::Isa isa : {gemm::Isa::avx2, gemm::Isa::avx512}) {
    if (gemm::isa_supported(isa)) continue;
    setenv("COMPAS_GEMM_ISA", compas::base::to_string(isa), 1);
    EXPECT_THROW(gemm::isa_used(), std::invalid_argument);
    EXPECT_THROW(gemm::choose_blocking(isa), std::invalid_argument);
  }
}

TEST(GemmBlocking, FitsTheCaches) {
  for (gemm::Isa isa : isas_here()) {
    const gemm::Blocking b = gemm::choose_blocking(host(), isa);
    SCOPED_TRACE(compas::base::to_string(isa));
    EXPECT_EQ(b.isa, isa);
    EXPECT_GT(b.mr * b.nr, 0u);
    EXPECT_EQ(b.mc % b.mr, 0u);
    EXPECT_EQ(b.nc % b.nr, 0u);
    const std::uint64_t l1 = host().cache_bytes(1), l2 = host().cache_bytes(2);
    if (l1) {
      EXPECT_LE(b.mr * b.kc * sizeof(double), l1 / 2);
    }
    if (l2) {
      EXPECT_LE(b.kc * b.nc * sizeof(double), l2);
    }
  }
  // A machine with small caches gets small blocks.
  const ct::Topology small = ct::Topology::synthetic(
      "pack:1 l3:1(size=4MB) l2:2(size=256KB) l1d:2(size=32KB) core:2 pu:1");
  const gemm::Blocking b = gemm::choose_blocking(small, gemm::Isa::generic);
  EXPECT_LE(b.mr * b.kc * sizeof(double), 16u << 10);
  EXPECT_LE(b.kc * b.nc * sizeof(double), 256u << 10);
  EXPECT_LT(b.kc, gemm::choose_blocking(host(), gemm::Isa::generic).kc);
}

TEST(GemmBlocking, WorkspaceRejectsAMismatchedMicroTile) {
  gemm::Blocking b = gemm::choose_blocking(gemm::Isa::generic);
  b.nr += 1;
  EXPECT_THROW(gemm::Workspace{b}, std::invalid_argument);
  b = gemm::choose_blocking(gemm::Isa::generic);
  b.kc = 0;
  EXPECT_THROW(gemm::Workspace{b}, std::invalid_argument);
}

TEST(GemmArguments, TooSmallLeadingDimensionsAreRejected) {
  gemm::Workspace ws;
  std::vector<double> A(64, 1.0), B(64, 1.0), C(64, 0.0);
  EXPECT_THROW(gemm::multiply(4, 4, 4, A.data(), 3, B.data(), 4, C.data(), 4, false, ws),
               std::invalid_argument);
  EXPECT_THROW(gemm::multiply(4, 4, 4, A.data(), 4, B.data(), 3, C.data(), 4, false, ws),
               std::invalid_argument);
  EXPECT_THROW(gemm::multiply(4, 4, 4, A.data(), 4, B.data(), 4, C.data(), 3, false, ws),
               std::invalid_argument);
  // Thrown on every thread of a team, none left waiting.
  EXPECT_THROW(team_of(2).run([&](ct::ThreadCtx& t) {
    gemm::multiply(t, 4, 4, 4, A.data(), 4, B.data(), 4, C.data(), 2, false, ws);
  }),
               std::invalid_argument);
  // Nothing to do is not an error, whatever the leading dimensions.
  EXPECT_NO_THROW(gemm::multiply(0, 4, 4, A.data(), 0, B.data(), 4, C.data(), 4, false, ws));
}

TEST(GemmModel, Flops) {
  EXPECT_EQ(gemm::flops(3, 5, 7), 210.0);
}

}  // namespace
