// bench_pingpong: the cost of one cache-line round trip between two PUs, the unit every compas
// barrier and wait is built from. Thread A (the benchmark thread) and thread B are pinned to two
// different PUs. A writes sequence number n to line X; B waits until it sees n and writes n to
// line Y; A waits until it sees n on Y. One benchmark iteration is one such round trip.
//
// Variants:
//   separate_lines: X and Y each on a 64-byte aligned line of its own (two lines travel).
//   shared_line:    X and Y in the same line (one line bounces, with false sharing on the way).
// Pairs: the first two cores (always registered; skipped with an error below 2 PUs), plus SMT
// siblings of one core and two sockets when this machine has them.
//
// Counter ns_per_round_trip: wall-clock nanoseconds per round trip measured by thread A.
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "compas/threads/topology.hpp"
#include "compas/threads/wait.hpp"

namespace {

using compas::threads::Topology;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kStop = ~std::uint64_t{0};

struct alignas(64) Line {
  std::atomic<std::uint64_t> value{0};
};

struct SeparateLines {
  Line x, y;
  std::atomic<std::uint64_t>& ping() { return x.value; }
  std::atomic<std::uint64_t>& pong() { return y.value; }
};
static_assert(sizeof(SeparateLines) == 128);

struct alignas(64) SharedLine {
  std::atomic<std::uint64_t> x{0}, y{0};
  std::atomic<std::uint64_t>& ping() { return x; }
  std::atomic<std::uint64_t>& pong() { return y; }
};
static_assert(sizeof(SharedLine) == 64);

const Topology& host() {
  static const Topology topo = Topology::host();
  return topo;
}

// A pinned to cpu_a (OS index), B to cpu_b; -1 means "this machine has fewer than 2 PUs".
template <class Flags>
void BM_PingPong(benchmark::State& state, int cpu_a, int cpu_b, const std::string& label) {
  if (cpu_a < 0 || cpu_b < 0) {
    state.SkipWithError("ping-pong needs two PUs; this process may use fewer");
    for (auto _ : state) {
    }
    return;
  }
  const Topology& topo = host();
  const std::vector<int> original = topo.current_thread_binding();
  const std::vector<int> got = topo.bind_current_thread(cpu_a);
  if (got.size() != 1 || got[0] != cpu_a) {
    topo.bind_current_thread(original);
    state.SkipWithError(("cannot bind thread A to cpu " + std::to_string(cpu_a)).c_str());
    for (auto _ : state) {
    }
    return;
  }

  Flags flags;
  std::atomic<bool> b_ready{false}, b_bound{false};
  std::thread b([&] {
    const auto mine = topo.bind_current_thread(cpu_b);
    b_bound.store(mine.size() == 1 && mine[0] == cpu_b, std::memory_order_relaxed);
    b_ready.store(true, std::memory_order_release);
    std::uint64_t seen = 0;
    for (;;) {
      std::uint64_t v;
      while ((v = flags.ping().load(std::memory_order_acquire)) == seen)
        compas::threads::cpu_relax();
      if (v == kStop) return;
      seen = v;
      flags.pong().store(v, std::memory_order_release);
    }
  });
  while (!b_ready.load(std::memory_order_acquire)) compas::threads::cpu_relax();

  if (!b_bound.load(std::memory_order_relaxed)) {
    state.SkipWithError(("cannot bind thread B to cpu " + std::to_string(cpu_b)).c_str());
    for (auto _ : state) {
    }
  } else {
    // Warm up: both lines in place, both threads running.
    std::uint64_t n = 0;
    for (int i = 0; i < 1000; ++i) {
      flags.ping().store(++n, std::memory_order_release);
      while (flags.pong().load(std::memory_order_acquire) != n) compas::threads::cpu_relax();
    }
    // Timed as a whole (a clock read per round trip would cost as much as the round trip).
    const auto t0 = Clock::now();
    for (auto _ : state) {
      flags.ping().store(++n, std::memory_order_release);
      while (flags.pong().load(std::memory_order_acquire) != n) compas::threads::cpu_relax();
    }
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    state.counters["ns_per_round_trip"] =
        state.iterations() ? ns / static_cast<double>(state.iterations()) : 0.0;
    state.SetLabel(label + " cpu" + std::to_string(cpu_a) + "<->cpu" + std::to_string(cpu_b));
  }
  flags.ping().store(kStop, std::memory_order_release);
  b.join();
  topo.bind_current_thread(original);
}

struct Pair {
  std::string name;  // cross_core, smt, cross_socket
  int a = -1, b = -1;
};

// The PU pairs to measure on this machine. The first is always present (cpus -1 when there are
// fewer than two PUs).
std::vector<Pair> choose_pairs(const Topology& topo) {
  const auto& pus = topo.pu_list();
  std::vector<Pair> pairs;
  Pair first{"cross_core"};
  // Two PUs on different cores of one socket if possible, else on different cores, else any two.
  auto find = [&](auto accept) -> std::optional<std::pair<int, int>> {
    for (std::size_t i = 0; i < pus.size(); ++i)
      for (std::size_t j = i + 1; j < pus.size(); ++j)
        if (accept(pus[i], pus[j])) return std::make_pair(pus[i].os_index, pus[j].os_index);
    return std::nullopt;
  };
  using compas::threads::Pu;
  auto same_socket_cores =
      find([](const Pu& p, const Pu& q) { return p.core != q.core && p.socket == q.socket; });
  auto other_cores = find([](const Pu& p, const Pu& q) { return p.core != q.core; });
  auto any = find([](const Pu&, const Pu&) { return true; });
  if (same_socket_cores)
    std::tie(first.a, first.b) = *same_socket_cores;
  else if (other_cores)
    std::tie(first.a, first.b) = *other_cores;
  else if (any) {
    first.name = "smt";
    std::tie(first.a, first.b) = *any;
  }
  pairs.push_back(first);
  if (first.name != "smt")
    if (auto smt = find([](const Pu& p, const Pu& q) { return p.core == q.core; }))
      pairs.push_back({"smt", smt->first, smt->second});
  if (auto sock = find([](const Pu& p, const Pu& q) { return p.socket != q.socket; }))
    if (first.a != sock->first || first.b != sock->second)
      pairs.push_back({"cross_socket", sock->first, sock->second});
  return pairs;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::vector<Pair> pairs;
  try {
    pairs = choose_pairs(host());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_pingpong: cannot read the topology: %s\n", e.what());
    return 1;
  }
  for (const auto& p : pairs) {
    benchmark::RegisterBenchmark(("pingpong/separate_lines/" + p.name).c_str(),
                                 BM_PingPong<SeparateLines>, p.a, p.b, p.name)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("pingpong/shared_line/" + p.name).c_str(),
                                 BM_PingPong<SharedLine>, p.a, p.b, p.name)
        ->UseRealTime();
  }
  const std::size_t ran = benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return ran > 0 ? 0 : 1;  // a filter that matches nothing is an error (the CTest smoke tests)
}
