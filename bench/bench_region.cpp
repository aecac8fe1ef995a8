// bench_region: the cost of one region (COMPAS_REGION enter + exit) on one thread, by what the
// region reads: nothing (no active profile), time only, PAPI software events, and the `ipc`
// group (hardware counters where the machine has them, else the software fallback). The
// counter ns_per_region is what a region adds to the code it measures.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>

#include "compas/perf/region.hpp"
#include "compas/threads/team.hpp"

namespace {

namespace cp = compas::perf;
namespace ct = compas::threads;

void region_cost(benchmark::State& state, const std::string& events, bool profile_on) {
  static const ct::Topology topo = ct::Topology::host();
  ct::TeamOptions o;
  o.threads = 1;
  ct::Team team(topo, o);
  std::unique_ptr<cp::Profile> profile;
  if (profile_on) profile = std::make_unique<cp::Profile>(team, cp::choose_events(events));
  double ns = 0;
  team.run([&](ct::ThreadCtx& t) {
    const auto t0 = std::chrono::steady_clock::now();
    for (auto _ : state) {
      COMPAS_REGION(t, "bench");
      benchmark::ClobberMemory();
    }
    ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  });
  state.counters["ns_per_region"] = benchmark::Counter(ns, benchmark::Counter::kAvgIterations);
  if (profile) state.SetLabel(cp::to_string(profile->events().source));
}

BENCHMARK_CAPTURE(region_cost, no_profile, std::string(), false);
BENCHMARK_CAPTURE(region_cost, time_only, std::string(), true);
BENCHMARK_CAPTURE(region_cost, software_1_event, std::string("perf::TASK-CLOCK"), true);
BENCHMARK_CAPTURE(region_cost, software_3_events, std::string("soft"), true);
BENCHMARK_CAPTURE(region_cost, ipc_group, std::string("ipc"), true);

}  // namespace

BENCHMARK_MAIN();
