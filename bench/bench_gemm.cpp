// bench_gemm: compas's local GEMM (compas::kernels::gemm::multiply on a pinned team) against the
// system BLAS's cblas_dgemm (OpenBLAS on Debian), C = A * B, square n x n row-major doubles, at
// n = 256, 1024, 1800 with 1 and 2 threads each. Counter GFLOP: 2 n^3 / 1e9 per iteration, shown
// as a rate (GFLOP/s).
//
// The machine is shared and noisy, so the comparison is made in rounds: every round measures each
// (n, threads) for both libraries back to back, the order alternating from round to round
// (--rounds=N, default 5). Before a benchmark whose library or thread count differs from the one
// just measured, the process pauses 0.3 s (OpenBLAS's idle workers spin for a while after a call
// and would steal the core from the other library's threads) and makes one untimed call. At the
// end a summary gives, per (n, threads), the median GFLOP/s of each library over the rounds, the
// ratio of the medians and the median of the per-round ratios, and how far the two products
// differ (max norm, relative).
//
// OpenBLAS reads OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE at start-up; when they are set (some
// environments force a slow generic kernel with them) the run says so. For a fair run:
//   env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE build/release/bin/bench_gemm
// OpenBLAS gets the same thread count as compas (openblas_set_num_threads).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "compas/base/statistics.hpp"
#include "compas/kernels/gemm_local.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/topology.hpp"

namespace {

namespace ct = compas::threads;
namespace gemm = compas::kernels::gemm;

const std::vector<std::size_t> kSizes = {256, 1024, 1800};
const std::vector<int> kThreads = {1, 2};

const ct::Topology& host() {
  static const ct::Topology topo = ct::Topology::host();
  return topo;
}

struct Operands {
  std::size_t n;
  std::vector<double> A, B, C;
  explicit Operands(std::size_t size) : n(size), A(n * n), B(n * n), C(n * n) {
    std::mt19937_64 rng(n);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (double& x : A) x = u(rng);
    for (double& x : B) x = u(rng);
  }
};

Operands& operands(std::size_t n) {
  static std::map<std::size_t, std::unique_ptr<Operands>> all;
  auto& p = all[n];
  if (!p) p = std::make_unique<Operands>(n);
  return *p;
}

struct Compas {
  std::unique_ptr<ct::Team> team;
  gemm::Workspace ws;
};

Compas& compas_for(int threads) {
  const ct::Topology& topo = host();  // outlives the teams
  static std::map<int, std::unique_ptr<Compas>> all;
  auto& c = all[threads];
  if (!c) {
    c = std::make_unique<Compas>();
    ct::TeamOptions o;
    o.threads = threads;
    o.allow_oversubscribe = threads > topo.pus();
    c->team = std::make_unique<ct::Team>(topo, o);
  }
  return *c;
}

void compas_multiply(Operands& x, int threads) {
  Compas& c = compas_for(threads);
  const std::size_t n = x.n;
  c.team->run([&](ct::ThreadCtx& t) {
    gemm::multiply(t, n, n, n, x.A.data(), n, x.B.data(), n, x.C.data(), n, false, c.ws);
  });
}

void blas_threads(int threads) {
#ifdef OPENBLAS_VERSION
  openblas_set_num_threads(threads);
#else
  (void)threads;
#endif
}

void blas_multiply(Operands& x) {
  const int n = static_cast<int>(x.n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, x.A.data(), n, x.B.data(), n,
              0.0, x.C.data(), n);
}

// Largest |compas - blas| relative to max |blas| for n, once per n (printed with the summary).
std::map<std::size_t, double> g_difference;

double relative_difference(std::size_t n) {
  std::map<std::size_t, double>& done = g_difference;
  auto it = done.find(n);
  if (it != done.end()) return it->second;
  Operands& x = operands(n);
  blas_threads(1);
  blas_multiply(x);
  const std::vector<double> ref = x.C;
  compas_multiply(x, 1);
  double err = 0, scale = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    err = std::max(err, std::abs(x.C[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return done[n] = scale > 0 ? err / scale : err;
}

// The library and thread count measured last: a change pauses before the next measurement.
std::string g_last;

void settle(const std::string& who) {
  if (g_last == who) return;
  g_last = who;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

void bm_compas(benchmark::State& state, std::size_t n, int threads) {
  Operands& x = operands(n);
  relative_difference(n);
  settle("compas/" + std::to_string(threads));
  compas_multiply(x, threads);  // warm: workspace sized, pages touched, team awake
  for (auto _ : state) {
    compas_multiply(x, threads);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP"] = benchmark::Counter(gemm::flops(n, n, n) * 1e-9,
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void bm_blas(benchmark::State& state, std::size_t n, int threads) {
  Operands& x = operands(n);
  settle("blas/" + std::to_string(threads));
  blas_threads(threads);
  blas_multiply(x);
  for (auto _ : state) {
    blas_multiply(x);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP"] = benchmark::Counter(gemm::flops(n, n, n) * 1e-9,
                                               benchmark::Counter::kIsIterationInvariantRate);
}

// Keeps every run's GFLOP/s for the summary, and prints as the console reporter does.
class Collector : public benchmark::ConsoleReporter {
 public:
  // (library, n, threads) -> GFLOP/s per round
  std::map<std::tuple<std::string, std::size_t, int>, std::map<int, double>> rates;

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const std::string name = r.benchmark_name();
      char lib[16] = {};
      unsigned long n = 0;
      int threads = 0, round = 0;
      if (std::sscanf(name.c_str(), "gemm/%15[a-z]/n:%lu/threads:%d/round:%d", lib, &n, &threads,
                      &round) != 4)
        continue;
      auto it = r.counters.find("GFLOP");
      if (it != r.counters.end()) rates[{lib, n, threads}][round] = it->second.value;
    }
  }
};

using compas::base::median;

void print_summary(const Collector& c) {
  std::printf("\nmedians over rounds (GFLOP/s); ratio = compas / blas\n");
  std::printf("%6s %7s %7s %9s %9s %12s %16s\n", "n", "threads", "rounds", "compas", "blas",
              "ratio(med)", "med(ratio/round)");
  for (std::size_t n : kSizes) {
    for (int t : kThreads) {
      auto a = c.rates.find({"compas", n, t});
      auto b = c.rates.find({"blas", n, t});
      if (a == c.rates.end() || b == c.rates.end()) continue;
      std::vector<double> ca, cb, ratio;
      for (const auto& [round, v] : a->second) {
        ca.push_back(v);
        auto o = b->second.find(round);
        if (o != b->second.end() && o->second > 0) ratio.push_back(v / o->second);
      }
      for (const auto& [round, v] : b->second) cb.push_back(v);
      const double ma = median(ca), mb = median(cb);
      std::printf("%6zu %7d %7zu %9.1f %9.1f %12.3f %16.3f\n", n, t, ratio.size(), ma, mb,
                  mb > 0 ? ma / mb : 0.0, ratio.empty() ? 0.0 : median(ratio));
    }
  }
  for (const auto& [n, d] : g_difference)
    std::printf("n = %zu: max |C_compas - C_blas| / max |C_blas| = %.2e\n", n, d);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  // --rounds=N is ours; everything else goes to Google Benchmark.
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--rounds=", 9) == 0)
      rounds = std::max(1, std::atoi(argv[i] + 9));
    else
      argv[out++] = argv[i];
  }
  argc = out;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  const gemm::Blocking bl = gemm::choose_blocking();
  std::printf("compas gemm: isa %s, mr x nr = %zu x %zu, kc %zu, mc %zu, nc %zu\n",
              compas::base::to_string(bl.isa), bl.mr, bl.nr, bl.kc, bl.mc, bl.nc);
#ifdef OPENBLAS_VERSION
  std::printf("blas: %s, core %s\n", openblas_get_config(), openblas_get_corename());
#endif
  for (const char* v : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"})
    if (const char* s = std::getenv(v))
      std::printf(
          "warning: %s=%s is set and may force a slow OpenBLAS kernel; run under "
          "`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE` for a fair comparison\n",
          v, s);
  std::fflush(stdout);

  for (int r = 0; r < rounds; ++r) {
    for (std::size_t n : kSizes) {
      for (int t : kThreads) {
        const std::string suffix = "/n:" + std::to_string(n) + "/threads:" + std::to_string(t) +
                                   "/round:" + std::to_string(r);
        auto add_compas = [&] {
          benchmark::RegisterBenchmark(("gemm/compas" + suffix).c_str(), bm_compas, n, t)
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond);
        };
        auto add_blas = [&] {
          benchmark::RegisterBenchmark(("gemm/blas" + suffix).c_str(), bm_blas, n, t)
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond);
        };
        if (r % 2 == 0) {
          add_compas();
          add_blas();
        } else {
          add_blas();
          add_compas();
        }
      }
    }
  }
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  print_summary(collector);
  benchmark::Shutdown();
  return 0;
}
