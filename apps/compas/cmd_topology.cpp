// compas topology: the machine as hwloc sees it and the placement --threads/--bind would give
// (COMPaS Fig. 1).
#include <fmt/core.h>

#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/topology.hpp"

namespace compas::app {

namespace {

std::string human_bytes(std::uint64_t b) {
  if (b >= (1ull << 30) && b % (1ull << 30) == 0) return fmt::format("{} GiB", b >> 30);
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= (1ull << 10) && b % (1ull << 10) == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

struct TopologyArgs {
  int threads = 0;  // 0: one per core
  std::string bind = "compact";
  std::string synthetic;
  bool oversubscribe = false;
  OutputFlags out;
};

int run_topology(const TopologyArgs& a) {
  check_outputs(a.out);
  const auto topo = load_topology(a.synthetic);
  const auto spec = threads::BindSpec::parse(a.bind);
  const int nthreads = a.threads > 0 ? a.threads : topo.cores();
  const auto placement = threads::place_threads(topo, nthreads, spec, a.oversubscribe);

  report::Report report("topology", report::machine_json(topo),
                        {{"threads", nthreads}, {"bind", spec.to_string()}});
  for (int t = 0; t < nthreads; ++t) {
    const int cpu = placement.pu_of_thread[static_cast<std::size_t>(t)];
    const auto& pu = topo.pu_list()[static_cast<std::size_t>(topo.find_pu(cpu))];
    report.add({{"thread", t},
                {"cpu", cpu},
                {"core", pu.core},
                {"socket", pu.socket},
                {"numa_node", pu.numa},
                {"smt", pu.smt}});
  }
  write_outputs(report, a.out);
  if (a.out.quiet) return 0;

  fmt::print("machine   {}\n", topo.cpu_model());
  fmt::print("          {} socket(s), {} NUMA node(s), {} core(s), {} PU(s){}\n", topo.sockets(),
             topo.numa_nodes(), topo.cores(), topo.pus(),
             topo.is_synthetic() ? " [synthetic: " + topo.description() + "]" : "");
  for (const auto& c : topo.caches())
    fmt::print("          L{} {:<11} {:>8} x{:<3} shared by {} PU(s){}\n", c.level, c.type,
               human_bytes(c.size_bytes), c.count, c.shared_by,
               c.line_bytes ? fmt::format(", {} B lines", c.line_bytes) : "");
  fmt::print("placement {} thread(s), bind {}{}\n", nthreads, spec.to_string(),
             placement.oversubscribed ? " (oversubscribed: threads share PUs)" : "");
  fmt::print("  {:>6} {:>5} {:>5} {:>7} {:>5} {:>4}\n", "thread", "cpu", "core", "socket", "numa",
             "smt");
  for (const auto& r : report.results())
    fmt::print("  {:>6} {:>5} {:>5} {:>7} {:>5} {:>4}\n", r["thread"].get<int>(),
               r["cpu"].get<int>(), r["core"].get<int>(), r["socket"].get<int>(),
               r["numa_node"].get<int>(), r["smt"].get<int>());
  return 0;
}

}  // namespace

Command setup_topology(CLI::App& app) {
  auto args = std::make_shared<TopologyArgs>();
  auto* cmd = app.add_subcommand("topology", "the machine as seen and the placement chosen");
  cmd->add_option("--threads", args->threads, "threads to place (default: one per core)")
      ->envname("COMPAS_THREADS")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--bind", args->bind, "compact | scatter | sockets | cpu list (0,2,4-7)")
      ->envname("COMPAS_BIND");
  cmd->add_flag("--oversubscribe", args->oversubscribe, "allow more threads than PUs")
      ->envname("COMPAS_OVERSUBSCRIBE");
  cmd->add_option("--topology", args->synthetic,
                  "an hwloc synthetic topology to use instead of this machine, "
                  "e.g. \"pack:2 core:8 pu:2\"");
  add_output_flags(*cmd, args->out);
  return {cmd, [args] { return run_topology(*args); }};
}

}  // namespace compas::app
