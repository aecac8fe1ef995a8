// compas run KERNEL: one kernel on the job this process belongs to (alone: 1 process x T threads;
// under compas-run / mpirun / srun: P processes x T threads), verified, timed, with the time split
// into the regions compute / communicate / synchronize (COMPaS Table 6) and counters when asked.
// Rank 0 prints and writes the report. A run that fails verification says why and exits 1.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "compas/kernels/laplace.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas::app {

namespace {

struct RunFlags {
  int threads = 0;
  std::string bind;
  std::string wait;
  bool oversubscribe = false;
  std::string events;
  OutputFlags out;
};

void add_run_flags(CLI::App& cmd, RunFlags& f) {
  cmd.add_option("--threads", f.threads,
                 "threads per process (default: COMPAS_THREADS, else one per core this process "
                 "may use)")
      ->envname("COMPAS_THREADS")
      ->check(CLI::Range(1, 4096));
  cmd.add_option("--bind", f.bind, "compact | scatter | sockets | cpu list (0,2,4-7)")
      ->envname("COMPAS_BIND");
  cmd.add_option("--wait", f.wait, "thread wait policy: spin | yield | block | auto")
      ->envname("COMPAS_WAIT");
  cmd.add_flag("--oversubscribe", f.oversubscribe, "allow more threads than PUs")
      ->envname("COMPAS_OVERSUBSCRIBE");
  add_events_flag(cmd, f.events);
  add_output_flags(cmd, f.out);
}

RuntimeOptions runtime_options(const RunFlags& f) {
  RuntimeOptions o;
  o.threads = f.threads;
  if (!f.bind.empty()) {
    threads::BindSpec::parse(f.bind);
    o.bind = f.bind;
  }
  if (!f.wait.empty()) o.wait = threads::parse_wait_policy(f.wait);
  o.oversubscribe = f.oversubscribe;
  o.events = f.events;
  return o;
}

// Job-level region table and the per-region JSON (seconds: mean and max over all threads).
perf::json region_json(Runtime& rt, const perf::EventChoice& events, bool print,
                       const std::map<std::string, perf::WorkModel>& models = {}) {
  const auto summaries = perf::aggregate(rt.job_samples(), 64, models);
  perf::json regions = perf::json::object();
  for (const auto& s : summaries) {
    perf::json r = {
        {"mean_seconds", s.seconds.mean}, {"max_seconds", s.seconds.max}, {"threads", s.threads}};
    add_counters_json(r, s);
    regions[s.region] = std::move(r);
  }
  if (print) {
    if (events.requested.empty())
      fmt::print("\nregions (time per thread, all processes):\n{}", perf::format_table(summaries));
    else
      print_regions(summaries, events);
  }
  return regions;
}

struct LaplaceArgs {
  RunFlags run;
  kernels::laplace::Params p;
  std::string stores = "auto";
};

int run_laplace(LaplaceArgs& a) {
  a.p.stores = a.stores == "cached"      ? kernels::laplace::Stores::cached
               : a.stores == "streaming" ? kernels::laplace::Stores::streaming
                                         : kernels::laplace::Stores::automatic;
  Runtime rt(runtime_options(a.run));
  kernels::laplace::check(a.p, rt.nodes());
  const bool leader = rt.node() == 0;
  if (leader) check_outputs(a.run.out);
  const auto& events = rt.profile().events();
  rt.profile().reset();
  const auto r = kernels::laplace::run(rt, a.p);
  const perf::json regions = region_json(rt, events, leader && !a.run.out.quiet);
  if (!leader) return r.verified ? 0 : 1;

  perf::Report report("run", perf::machine_json(rt.topology()),
                      {{"kernel", "laplace"},
                       {"nodes", rt.nodes()},
                       {"threads", rt.threads()},
                       {"n", a.p.n},
                       {"iters", a.p.iters},
                       {"tol", a.p.tol},
                       {"bootstrap", rt.bootstrap().kind()}});
  perf::json rec = {{"kernel", "laplace"},
                    {"nodes", rt.nodes()},
                    {"threads", rt.threads()},
                    {"n", a.p.n},
                    {"iters", a.p.iters},
                    {"sweeps", r.sweeps},
                    {"seconds", r.seconds},
                    {"cpu_seconds", r.cpu_seconds},
                    {"verified", r.verified},
                    {"verification", r.verification},
                    {"max_error", r.max_error},
                    {"mlups", r.mlups()},
                    {"gflops", r.seconds > 0 ? r.flops / r.seconds / 1e9 : 0.0},
                    {"model_gbs", r.seconds > 0 ? r.bytes / r.seconds / 1e9 : 0.0},
                    {"field_hash", fmt::format("{:016x}", r.field_hash)},
                    {"streaming_stores", r.streaming_stores},
                    {"regions", regions}};
  report.add(rec);
  write_outputs(report, a.run.out);
  if (!a.run.out.quiet) {
    fmt::print(
        "\nlaplace n={} on {} process(es) x {} thread(s): {} sweeps in {:.4f} s, {:.1f} "
        "MLUP/s, {:.2f} GB/s by the kernel's byte model\n",
        a.p.n, rt.nodes(), rt.threads(), r.sweeps, r.seconds, r.mlups(),
        r.seconds > 0 ? r.bytes / r.seconds / 1e9 : 0.0);
    fmt::print("CPU time {:.4f} s over wallclock {:.4f} s; field hash {:016x}\n", r.cpu_seconds,
               r.seconds, r.field_hash);
  }
  fmt::print("{}: {}\n", r.verified ? "verified" : "VERIFICATION FAILED", r.verification);
  return r.verified ? 0 : 1;
}

}  // namespace

Command setup_run(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "run", "run one kernel (laplace, ...) on this job: verified, timed, per-region times");
  cmd->require_subcommand(0, 1);  // a missing or unknown kernel gets a message naming it

  auto la = std::make_shared<LaplaceArgs>();
  auto* lap = cmd->add_subcommand(
      "laplace", "explicit Jacobi on the 5-point Laplacian, halos by put_signal (COMPaS 5.1)");
  lap->add_option("--n", la->p.n, "interior points per side (paper: 640)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  lap->add_option("--iters", la->p.iters, "sweeps (the most, with --tol)")
      ->check(CLI::Range(1, 1 << 30));
  lap->add_option("--tol", la->p.tol,
                  "stop when the largest change of a sweep is <= TOL (0: fixed sweeps)")
      ->check(CLI::Range(0.0, 1.0));
  lap->add_option("--check-every", la->p.check_every, "sweeps between convergence checks")
      ->check(CLI::Range(1, 1 << 20));
  lap->add_option("--stores", la->stores,
                  "auto (streaming when the field exceeds the caches) | cached | streaming")
      ->check(CLI::IsMember({"auto", "cached", "streaming"}));
  lap->add_flag("--inject-fault", la->p.inject_fault,
                "perturb one value before verification (to see verification fail)")
      ->group("");
  add_run_flags(*lap, la->run);

  return {cmd, [cmd, la, lap]() -> int {
            if (lap->parsed()) return run_laplace(*la);
            throw std::invalid_argument("name a kernel (a subcommand): laplace");
          }};
}

}  // namespace compas::app
