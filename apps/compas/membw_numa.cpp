// compas membw --numa-matrix (membw_numa.hpp): one membw point per (threads' node, memory's
// node) pair, the memory bound with hwloc before its first touch.
#include "membw_numa.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "compas/probes/cache_probe.hpp"
#include "compas/probes/loaded_latency.hpp"
#include "compas/report/report.hpp"
#include "compas/threads/domain.hpp"
#include "compas/threads/topology.hpp"

namespace compas::app {

namespace {

report::json cell_json(const threads::NumaCell& c, const probes::MembwRecord& r) {
  return {{"kernel", probes::to_string(r.kernel)},
          {"threads_on", fmt::format("M{}", c.threads_on)},
          {"memory_on", fmt::format("M{}", c.memory_on)},
          {"threads", r.threads},
          {"cpus", r.cpus},
          {"bandwidth_gbs", r.bandwidth_gbs},
          {"min_bandwidth_gbs", r.min_bandwidth_gbs},
          {"max_bandwidth_gbs", r.max_bandwidth_gbs},
          {"repeats", r.repeats},
          {"verified", r.verified}};
}

// The dependent-load latency with the chaser on the cell's first PU and the chase's buffer (far
// beyond the caches) on the cell's memory node.
report::json latency_json(const threads::Topology& topo, const threads::NumaCell& c,
                          std::uint64_t bytes, int repeats) {
  probes::CacheProbeOptions o;
  o.min_bytes = o.max_bytes = bytes;
  o.cpu = c.pus.front();
  o.repeats = repeats;
  o.memory_numa = c.memory_on;
  const probes::CacheProbeResult r = probes::run_cache_probe(topo, o);
  const probes::CacheRecord& chase = r.records.front();
  return {{"kernel", "latency"},
          {"threads_on", fmt::format("M{}", c.threads_on)},
          {"memory_on", fmt::format("M{}", c.memory_on)},
          {"threads", 1},
          {"cpus", std::to_string(c.pus.front())},
          {"size_bytes", r.sizes.front()},
          {"latency_ns", chase.ns_per_load},
          {"min_latency_ns", chase.min_ns_per_load},
          {"max_latency_ns", chase.max_ns_per_load},
          {"repeats", chase.repeats}};
}

void print_matrix(const std::vector<report::json>& records, int nodes) {
  std::map<std::pair<std::string, std::string>, double> value;  // (kernel, "MiMj")
  std::vector<std::string> kernels;
  for (const auto& r : records) {
    const std::string k = r["kernel"];
    if (std::find(kernels.begin(), kernels.end(), k) == kernels.end()) kernels.push_back(k);
    value[{k, r["threads_on"].get<std::string>() + r["memory_on"].get<std::string>()}] =
        k == "latency" ? r["latency_ns"].get<double>() : r["bandwidth_gbs"].get<double>();
  }
  for (const auto& k : kernels) {
    fmt::print("{}: {}, threads on the row's NUMA node, memory on the column's\n  {:>8}", k,
               k == "latency" ? "ns per dependent load" : "GB/s", "");
    for (int j = 0; j < nodes; ++j) fmt::print(" {:>8}", fmt::format("mem M{}", j));
    fmt::print("\n");
    for (int i = 0; i < nodes; ++i) {
      fmt::print("  {:>8}", fmt::format("M{}", i));
      for (int j = 0; j < nodes; ++j)
        fmt::print(" {:>8.2f}", value[{k, fmt::format("M{}M{}", i, j)}]);
      fmt::print("\n");
    }
  }
}

}  // namespace

int run_numa_matrix(const NumaMatrixArgs& a) {
  const auto topo = threads::Topology::host();
  const auto cells = threads::numa_matrix_cells(topo, a.threads);
  check_outputs(a.out);
  std::vector<report::json> records;
  for (const auto& c : cells) {
    probes::MembwOptions o;
    o.kernels = a.kernels;
    o.size_bytes = a.size_bytes;
    o.repeats = a.repeats;
    o.huge_pages = a.huge_pages;
    o.threads = {static_cast<int>(c.pus.size())};
    o.bind = threads::BindSpec{threads::BindPolicy::list, c.pus};
    o.memory_numa = c.memory_on;
    for (const auto& r : probes::run_membw(topo, o).records) records.push_back(cell_json(c, r));
  }
  const std::uint64_t chase = a.chase_bytes ? a.chase_bytes : probes::default_chase_bytes(topo);
  for (const auto& c : cells) records.push_back(latency_json(topo, c, chase, a.repeats));
  const int nodes = threads::domain_count(topo, 'M');
  report::Report report(
      "membw-numa", report::machine_json(topo),
      {{"numa_nodes", nodes},
       {"size_bytes", a.size_bytes},
       {"threads_per_cell",
        a.threads ? report::json(a.threads) : report::json("one per core of the node")},
       {"repeats", a.repeats},
       {"memory", "bound to the column's node with hwloc before the first touch"}});
  for (auto& r : records) report.add(std::move(r));
  write_outputs(report, a.out);
  if (!a.out.quiet) print_matrix(report.results(), nodes);
  return 0;
}

}  // namespace compas::app
