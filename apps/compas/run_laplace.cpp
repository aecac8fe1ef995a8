// compas run laplace: explicit Jacobi, halos by put_signal (kernels/laplace.hpp).
#include <fmt/core.h>

#include <memory>
#include <string>

#include "compas/kernels/laplace.hpp"
#include "run_common.hpp"

namespace compas::app {

namespace {

struct LaplaceArgs {
  RunFlags run;
  kernels::laplace::Params p;
  std::string stores = "auto";
  std::string schedule = "dynamic";
};

int run_laplace(LaplaceArgs& a) {
  a.p.stores = a.stores == "cached"      ? kernels::laplace::Stores::cached
               : a.stores == "streaming" ? kernels::laplace::Stores::streaming
                                         : kernels::laplace::Stores::automatic;
  a.p.schedule = kernels::laplace::parse_schedule(a.schedule);
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
                      job_params(rt, {{"kernel", "laplace"},
                                      {"nodes", rt.nodes()},
                                      {"threads", rt.threads()},
                                      {"n", a.p.n},
                                      {"iters", a.p.iters},
                                      {"tol", a.p.tol},
                                      {"bootstrap", rt.bootstrap().kind()}}));
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
                    {"stores_calibrated", r.stores_calibrated},
                    {"stores_reason", r.stores_reason},
                    {"schedule", kernels::laplace::to_string(a.p.schedule)},
                    {"moved", r.moved},
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
    if (a.p.schedule == kernels::laplace::Schedule::dynamic && rt.threads() > 1)
      fmt::print(
          "dynamic schedule: {:.1f}% of the point updates made by a thread other than the "
          "rows' owner\n",
          100 * r.moved);
  }
  fmt::print("{}: {}\n", r.verified ? "verified" : "VERIFICATION FAILED", r.verification);
  return r.verified ? 0 : 1;
}

}  // namespace

RunKernel add_run_laplace(CLI::App& run) {
  auto la = std::make_shared<LaplaceArgs>();
  auto* lap = run.add_subcommand(
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
                  "auto (beyond the caches below the last level, time both kinds over the first 25 "
                  "sweeps, in blocks of 6 with the first 3 untimed, and keep the one with the "
                  "faster median sweep) | cached | streaming")
      ->check(CLI::IsMember({"auto", "cached", "streaming"}));
  lap->add_option("--schedule", la->schedule,
                  "dynamic (threads that finish their rows take groups of rows the others on "
                  "their socket have not started) | fixed (each thread its own block)")
      ->check(CLI::IsMember({"dynamic", "fixed", "static"}));
  lap->add_flag("--inject-fault", la->p.test.inject_fault,
                "perturb one value before verification (to see verification fail)")
      ->group("");
  add_run_flags(*lap, la->run);

  return {lap, [la] { return run_laplace(*la); }};
}

}  // namespace compas::app
