// bench_barrier: the latency of one team barrier episode, for every compas barrier algorithm
// (central, dissemination, tree) x wait policy (spin, yield, block, auto) at 2 and 4 threads,
// beside libgomp's `#pragma omp barrier` with the same pinning. 4 threads oversubscribe a
// 2-PU machine, so the teams are built with allow_oversubscribe.
//
// One benchmark iteration is one barrier episode, timed on thread 0 (manual time):
//   - the Team (or the OpenMP team) is created once per benchmark run; inside one team.run,
//     thread 0 drives the benchmark loop in batches of K barriers (state.KeepRunningBatch(K)),
//     and reports the time of each batch with state.SetIterationTime;
//   - before each batch thread 0 publishes K (or 0 = stop) and all threads meet in one untimed
//     barrier, after which the other threads read K and run exactly K barriers as well;
//   - K is chosen from a warm-up so that one batch lasts ~0.2 ms (a few barriers when they are
//     slow, thousands when they are fast), so a short --benchmark_min_time stays short.
// Counter ns_per_barrier: nanoseconds per barrier, the same number as the manual time.
//
// OpenMP: libgomp reads OMP_WAIT_POLICY once, at start-up, so its active/passive behaviour must
// be chosen in the environment of this process, e.g.
//   OMP_WAIT_POLICY=active  ./bench_barrier --benchmark_filter=omp
//   OMP_WAIT_POLICY=passive ./bench_barrier --benchmark_filter=omp
// The benchmark name carries the policy seen ("default" when unset). `compas barrier` measures
// both in one run by starting a child process per policy. Each OpenMP thread binds itself to the
// PU the compas Team places the thread with the same number on (place_threads with the default
// BindSpec). The OpenMP cases are registered last: once a parallel region has run, libgomp's idle
// threads may keep spinning (OMP_WAIT_POLICY=active) and would disturb later compas cases.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "compas/threads/barrier.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/topology.hpp"
#include "compas/threads/wait.hpp"

namespace {

namespace ct = compas::threads;
using Clock = std::chrono::steady_clock;

constexpr int kWarmup = 64;
constexpr double kBatchTargetNs = 200e3;
constexpr long kMaxBatch = 8192;

const ct::Topology& host() {
  static const ct::Topology topo = ct::Topology::host();
  return topo;
}

double ns_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count();
}

long batch_size(double ns_per_barrier) {
  return std::clamp(static_cast<long>(kBatchTargetNs / std::max(ns_per_barrier, 1.0)), 1L,
                    kMaxBatch);
}

// The batch size thread 0 publishes before each batch; 0 tells the other threads to stop.
struct alignas(64) BatchControl {
  std::atomic<long> size{0};
};

// The whole protocol, for any barrier: `barrier()` is the barrier being measured, `leader` says
// whether this is thread 0 (the only one that touches `state`).
template <class BarrierFn>
void run_protocol(benchmark::State& state, bool leader, BatchControl& ctl, double& total_ns,
                  BarrierFn barrier) {
  for (int i = 0; i < kWarmup; ++i) barrier();
  const auto w0 = Clock::now();
  for (int i = 0; i < kWarmup; ++i) barrier();
  const double warm_ns = ns_between(w0, Clock::now()) / kWarmup;
  if (leader) {
    const long k = batch_size(warm_ns);
    while (state.KeepRunningBatch(k)) {
      ctl.size.store(k, std::memory_order_relaxed);
      barrier();  // untimed: publishes k
      const auto t0 = Clock::now();
      for (long i = 0; i < k; ++i) barrier();
      const double ns = ns_between(t0, Clock::now());
      state.SetIterationTime(ns * 1e-9);
      total_ns += ns;
    }
    ctl.size.store(0, std::memory_order_relaxed);
    barrier();
  } else {
    for (;;) {
      barrier();
      const long k = ctl.size.load(std::memory_order_relaxed);
      if (k == 0) break;
      for (long i = 0; i < k; ++i) barrier();
    }
  }
}

void report(benchmark::State& state, double total_ns, const std::string& label) {
  state.counters["ns_per_barrier"] =
      state.iterations() ? total_ns / static_cast<double>(state.iterations()) : 0.0;
  state.SetLabel(label);
}

void BM_CompasBarrier(benchmark::State& state, ct::BarrierAlgorithm algorithm,
                      ct::WaitPolicy policy, int nthreads) {
  ct::TeamOptions o;
  o.threads = nthreads;
  o.barrier = algorithm;
  o.wait = policy;
  o.allow_oversubscribe = true;
  std::string error;
  try {
    ct::Team team(host(), o);
    BatchControl ctl;
    double total_ns = 0;
    team.run([&](ct::ThreadCtx& c) {
      run_protocol(state, c.is_leader(), ctl, total_ns, [&c] { c.barrier(); });
    });
    report(state, total_ns,
           team.placement().describe() + (team.oversubscribed() ? " oversubscribed" : ""));
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!error.empty()) state.SkipWithError(error.c_str());
}

std::string omp_wait_policy() {
  const char* p = std::getenv("OMP_WAIT_POLICY");
  return p && *p ? p : "default";
}

void BM_OmpBarrier(benchmark::State& state, int nthreads) {
  std::vector<int> cpus;
  std::string label;
  try {
    const auto placement = ct::place_threads(host(), nthreads, ct::BindSpec{}, true);
    cpus = placement.pu_of_thread;
    label = placement.describe() + (placement.oversubscribed ? " oversubscribed" : "") +
            " OMP_WAIT_POLICY=" + omp_wait_policy();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  const auto original = host().current_thread_binding();
  BatchControl ctl;
  double total_ns = 0;
  std::atomic<int> bind_failures{0};
  int team_size = 0;
  omp_set_dynamic(0);
#pragma omp parallel num_threads(nthreads)
  {
    const int tid = omp_get_thread_num();
#pragma omp master
    team_size = omp_get_num_threads();
    const int cpu = cpus[static_cast<std::size_t>(tid)];
    const auto got = host().bind_current_thread(cpu);
    if (got.size() != 1 || got[0] != cpu) bind_failures.fetch_add(1);
#pragma omp barrier
    // Every thread sees the same verdict, so all take the same path through the protocol.
    if (bind_failures.load() == 0 && team_size == nthreads) {
      run_protocol(state, tid == 0, ctl, total_ns, [] {
#pragma omp barrier
      });
    }
  }
  host().bind_current_thread(original);
  if (team_size != nthreads)
    state.SkipWithError(("OpenMP gave " + std::to_string(team_size) + " threads").c_str());
  else if (bind_failures.load() != 0)
    state.SkipWithError("an OpenMP thread could not be bound to its PU");
  else
    report(state, total_ns, label);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  try {
    host();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_barrier: cannot read the topology: %s\n", e.what());
    return 1;
  }
  const std::vector<int> thread_counts = {2, 4};
  const ct::BarrierAlgorithm algorithms[] = {ct::BarrierAlgorithm::central,
                                             ct::BarrierAlgorithm::dissemination,
                                             ct::BarrierAlgorithm::tree};
  const ct::WaitPolicy policies[] = {ct::WaitPolicy::spin, ct::WaitPolicy::yield,
                                     ct::WaitPolicy::block, ct::WaitPolicy::automatic};
  for (int t : thread_counts)
    for (auto a : algorithms)
      for (auto p : policies)
        benchmark::RegisterBenchmark(("barrier/" + ct::to_string(a) + "/" + ct::to_string(p) +
                                      "/threads:" + std::to_string(t))
                                         .c_str(),
                                     BM_CompasBarrier, a, p, t)
            ->UseManualTime();
  for (int t : thread_counts)
    benchmark::RegisterBenchmark(
        ("barrier/omp/" + omp_wait_policy() + "/threads:" + std::to_string(t)).c_str(),
        BM_OmpBarrier, t)
        ->UseManualTime();
  const std::size_t ran = benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return ran > 0 ? 0 : 1;  // a filter that matches nothing is an error (the CTest smoke tests)
}
