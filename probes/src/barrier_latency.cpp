// Barrier latency of thread teams and of processes. See compas/probes/barrier_latency.hpp.
#include "compas/probes/barrier_latency.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace compas::probes {

BarrierTiming time_team_barrier(const threads::Topology& topo, const threads::TeamOptions& options,
                                int repeats, double target_ms, bool* oversubscribed) {
  threads::Team team(topo, options);
  if (oversubscribed) *oversubscribed = team.oversubscribed();
  BarrierTiming timing;
  timing.ns.resize(static_cast<std::size_t>(repeats));
  team.run([&](threads::ThreadCtx& c) {
    time_barrier(
        c.is_leader(), timing, repeats, target_ms, [&c] { c.barrier(); },
        [&c](long mine) { return c.broadcast(mine); });
  });
  return timing;
}

std::vector<BarrierTiming> time_process_barriers(comm::Bootstrap& boot,
                                                 const std::vector<std::function<void()>>& variants,
                                                 int repeats, double target_ms) {
  using Clock = std::chrono::steady_clock;
  auto ns_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  };
  std::vector<long> iters;
  for (const auto& barrier : variants) {
    for (int i = 0; i < kBarrierWarmup; ++i) barrier();
    const auto t0 = Clock::now();
    for (int i = 0; i < kBarrierWarmup; ++i) barrier();
    const auto choices = boot.allgather(
        std::to_string(barrier_iterations(ns_since(t0) / kBarrierWarmup, target_ms)));
    iters.push_back(std::stol(choices.at(0)));
  }
  // Every process's times, variant-major, as the bytes of its doubles (the same count everywhere:
  // the variants and repeats are the job's).
  std::vector<double> mine(variants.size() * static_cast<std::size_t>(repeats));
  for (int r = 0; r < repeats; ++r)
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const auto& barrier = variants[v];
      barrier();
      const auto t0 = Clock::now();
      for (long i = 0; i < iters[v]; ++i) barrier();
      mine[v * static_cast<std::size_t>(repeats) + static_cast<std::size_t>(r)] =
          ns_since(t0) / static_cast<double>(iters[v]);
    }
  std::vector<BarrierTiming> out(variants.size());
  for (std::size_t v = 0; v < variants.size(); ++v) {
    out[v].iterations = iters[v];
    out[v].ns.assign(static_cast<std::size_t>(repeats), 0.0);
  }
  const std::string bytes(reinterpret_cast<const char*>(mine.data()), mine.size() * sizeof(double));
  std::vector<double> theirs(mine.size());
  for (const auto& blob : boot.allgather(bytes)) {
    if (blob.size() != bytes.size())
      throw std::runtime_error("time_process_barriers: a process sent " +
                               std::to_string(blob.size()) + " bytes of times, not " +
                               std::to_string(bytes.size()) + " (different variants or repeats)");
    std::memcpy(theirs.data(), blob.data(), blob.size());
    for (std::size_t v = 0; v < variants.size(); ++v)
      for (std::size_t r = 0; r < out[v].ns.size(); ++r)
        out[v].ns[r] = std::max(out[v].ns[r], theirs[v * out[v].ns.size() + r]);
  }
  return out;
}

}  // namespace compas::probes
