// bench_sort: compas's radix sort (kernels/sort.hpp) of 64M uniform 32-bit keys against std::sort
// on one thread, and its model bandwidth against the STREAM triad bandwidth measured in the same
// run (probes::run_membw, the `compas membw` probe): the roofline of a memory-bound sort is the
// triad bandwidth, so model GB/s / triad GB/s says how close the passes come to it.
//
//   sort/radix11/threads:T      radix sort, 11-bit digits, automatic method (buckets here: a pass
//                               on the top digit, then each bucket sorted in the L2) on T threads;
//                               counters: Mkeys/s, model GB/s (Stats::bytes / time)
//   sort/radix11lsd/threads:T   the same with every pass over all keys (LSD, 3 passes)
//   sort/radix8lsd/threads:T    LSD with 8-bit digits (4 passes)
//   sort/std/threads:1          std::sort of the same keys
//   triad/threads:T             triad bandwidth (GB/s) on T threads, 3 x 256 MiB working set
//
// Each iteration sorts a fresh copy of the same keys; only the sort is timed (manual time). The
// machine is shared and noisy, so everything runs in rounds (--rounds=N, default 5), the order of
// the benchmarks alternating from round to round, and the summary gives medians over the rounds
// and the median of the per-round ratios: radix / std::sort (speed-up on one thread) and model
// GB/s / triad GB/s (fraction of the roofline) per thread count. --keys=N (default 64M, K/M/G
// suffixes) and --threads=LIST (default 1,2) change the size and thread counts.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "compas/base/statistics.hpp"
#include "compas/kernels/sort.hpp"
#include "compas/probes/membw.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/topology.hpp"

namespace {

namespace ct = compas::threads;
namespace rs = compas::kernels::sort;

std::size_t g_keys = std::size_t{64} << 20;
std::vector<int> g_threads = {1, 2};

const ct::Topology& host() {
  static const ct::Topology topo = ct::Topology::host();
  return topo;
}

struct Data {
  rs::KeyBuffer input, work, tmp;
  std::vector<std::uint32_t> sorted;  // std::sort's result, to check the radix sort against
};

Data& data() {
  static std::unique_ptr<Data> d;
  if (!d) {
    d = std::make_unique<Data>();
    d->input = rs::KeyBuffer(g_keys);
    d->work = rs::KeyBuffer(g_keys);
    d->tmp = rs::KeyBuffer(g_keys);
    rs::generate(rs::Dist::uniform, g_keys, 0, d->input.span());
    std::memset(d->work.data(), 0, g_keys * 4);  // first touch outside the timed code
    std::memset(d->tmp.data(), 0, g_keys * 4);
  }
  return *d;
}

ct::Team& team_of(int threads) {
  const ct::Topology& topo = host();
  static std::map<int, std::unique_ptr<ct::Team>> teams;
  auto& t = teams[threads];
  if (!t) {
    ct::TeamOptions o;
    o.threads = threads;
    o.allow_oversubscribe = threads > topo.pus();
    t = std::make_unique<ct::Team>(topo, o);
  }
  return *t;
}

using Clock = std::chrono::steady_clock;

const std::tuple<const char*, int, rs::Method> kVariants[] = {
    {"radix11", 11, rs::Method::automatic},
    {"radix11lsd", 11, rs::Method::lsd},
    {"radix8lsd", 8, rs::Method::lsd}};

void bm_radix(benchmark::State& state, int bits, rs::Method method, int threads) {
  Data& d = data();
  ct::Team& team = team_of(threads);
  rs::Workspace ws;
  rs::Options o;
  o.digit_bits = bits;
  o.method = method;
  o.bucket_bytes = rs::bucket_cache_bytes(host());
  o.cache_bytes = rs::cache_bytes(host());
  o.calibrate_bytes = compas::threads::nt_threshold(host(), team.placement());
  rs::Stats st;
  bool ok = true;
  for (auto _ : state) {
    std::memcpy(d.work.data(), d.input.data(), g_keys * 4);
    std::span<std::uint32_t> out;
    const auto t0 = Clock::now();
    team.run([&](ct::ThreadCtx& t) {
      auto r = rs::sort(t, d.work.span(), d.tmp.span(), ws, o, &st);
      if (t.is_leader()) out = r;
    });
    const auto t1 = Clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    if (!d.sorted.empty()) ok = ok && std::equal(out.begin(), out.end(), d.sorted.begin());
  }
  if (!ok) state.SkipWithError("radix sort disagrees with std::sort");
  state.counters["Mkeys"] = benchmark::Counter(static_cast<double>(g_keys) * 1e-6,
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GB"] =
      benchmark::Counter(st.bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["streaming"] = st.streaming ? 1 : 0;
}

void bm_std(benchmark::State& state) {
  Data& d = data();
  for (auto _ : state) {
    std::memcpy(d.work.data(), d.input.data(), g_keys * 4);
    const auto t0 = Clock::now();
    std::sort(d.work.data(), d.work.data() + g_keys);
    const auto t1 = Clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
  if (d.sorted.empty()) d.sorted.assign(d.work.data(), d.work.data() + g_keys);
  state.counters["Mkeys"] = benchmark::Counter(static_cast<double>(g_keys) * 1e-6,
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void bm_triad(benchmark::State& state, int threads) {
  compas::probes::MembwOptions o;
  o.threads = {threads};
  o.kernels = {compas::probes::MembwKernel::triad};
  o.size_bytes = std::size_t{768} << 20;
  o.repeats = 3;
  o.oversubscribe = threads > host().pus();
  double gbs = 0;
  for (auto _ : state) {
    const auto r = compas::probes::run_membw(host(), o);
    gbs = r.records.at(0).bandwidth_gbs;
    state.SetIterationTime(r.records.at(0).seconds);
  }
  state.counters["GBs"] = gbs;
}

// Every run's rate, kept for the summary: (name, threads) -> round -> value.
class Collector : public benchmark::ConsoleReporter {
 public:
  std::map<std::tuple<std::string, int>, std::map<int, double>> values;

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const std::string name = r.benchmark_name();
      char what[32] = {};
      int threads = 0, round = 0;
      if (std::sscanf(name.c_str(), "%31[^/]/%*[^/]/threads:%d/round:%d", what, &threads, &round) ==
              3 &&
          std::strcmp(what, "triad") != 0) {
        char kind[32] = {};
        std::sscanf(name.c_str(), "sort/%31[^/]", kind);
        store(std::string(kind) + " Mkeys/s", threads, round, r, "Mkeys");
        store(std::string(kind) + " GB/s", threads, round, r, "GB");
      } else if (std::sscanf(name.c_str(), "triad/threads:%d/round:%d", &threads, &round) == 2) {
        store("triad GB/s", threads, round, r, "GBs");
      }
    }
  }

 private:
  void store(const std::string& key, int threads, int round, const Run& r, const char* counter) {
    auto it = r.counters.find(counter);
    if (it != r.counters.end()) values[{key, threads}][round] = it->second.value;
  }
};

using compas::base::median;

// Median over rounds of a / b, and the medians of a and b.
void ratio_line(const Collector& c, const std::string& a, int ta, const std::string& b, int tb,
                const char* label) {
  auto ia = c.values.find({a, ta});
  auto ib = c.values.find({b, tb});
  if (ia == c.values.end() || ib == c.values.end()) return;
  std::vector<double> va, vb, ratio;
  for (const auto& [round, v] : ia->second) {
    va.push_back(v);
    auto o = ib->second.find(round);
    if (o != ib->second.end() && o->second > 0) ratio.push_back(v / o->second);
  }
  for (const auto& [round, v] : ib->second) vb.push_back(v);
  std::printf("%-44s %10.1f %10.1f %8zu %10.3f\n", label, median(va), median(vb), ratio.size(),
              ratio.empty() ? 0.0 : median(ratio));
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--rounds=", 9) == 0) {
      rounds = std::max(1, std::atoi(argv[i] + 9));
    } else if (std::strncmp(argv[i], "--keys=", 7) == 0) {
      g_keys = rs::parse_keys(argv[i] + 7);
    } else if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      g_threads.clear();
      for (const char* p = argv[i] + 10; *p;) {
        g_threads.push_back(std::max(1, std::atoi(p)));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
      }
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::printf("keys %zu (uniform), last-level cache %zu bytes\n", g_keys, rs::cache_bytes(host()));
  std::fflush(stdout);

  for (int r = 0; r < rounds; ++r) {
    std::string round = "/round:";
    round += std::to_string(r);
    std::vector<std::function<void()>> adds;
    adds.push_back([&] {
      benchmark::RegisterBenchmark(("sort/std/threads:1" + round).c_str(), bm_std)
          ->UseManualTime()
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    });
    for (int t : g_threads) {
      for (const auto& [kind, bits, method] : kVariants) {
        adds.push_back([=] {
          std::string name = "sort/";
          name += kind;
          name += "/threads:";
          name += std::to_string(t);
          name += round;
          benchmark::RegisterBenchmark(name.c_str(), bm_radix, bits, method, t)
              ->UseManualTime()
              ->Iterations(3)
              ->Unit(benchmark::kMillisecond);
        });
      }
      adds.push_back([=] {
        std::string name = "triad/threads:";
        name += std::to_string(t);
        name += round;
        benchmark::RegisterBenchmark(name.c_str(), bm_triad, t)
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMillisecond);
      });
    }
    if (r % 2) std::reverse(adds.begin(), adds.end());
    for (auto& add : adds) add();
  }
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);

  std::printf("\nmedians over rounds; ratio = median of the per-round ratios a / b\n");
  std::printf("%-44s %10s %10s %8s %10s\n", "a / b", "a", "b", "rounds", "ratio");
  for (const auto& v : kVariants) {
    const std::string k = std::get<0>(v);
    ratio_line(collector, k + " Mkeys/s", 1, "std Mkeys/s", 1,
               (k + " 1 thread / std::sort (Mkeys/s)").c_str());
  }
  for (int t : g_threads)
    ratio_line(collector, "radix11 Mkeys/s", t, "radix11lsd Mkeys/s", t,
               ("radix11 / radix11lsd, " + std::to_string(t) + " thread(s) (Mkeys/s)").c_str());
  for (int t : g_threads)
    for (const auto& v : kVariants) {
      const std::string k = std::get<0>(v);
      ratio_line(collector, k + " GB/s", t, "triad GB/s", t,
                 (k + " model / triad, " + std::to_string(t) + " thread(s) (GB/s)").c_str());
    }
  benchmark::Shutdown();
  return 0;
}
