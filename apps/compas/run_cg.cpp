// compas run cg: NAS CG (kernels/cg.hpp, cg_job.hpp), NPB's classes and verification values.
#include <fmt/core.h>

#include <algorithm>
#include <memory>
#include <string>

#include "compas/kernels/cg_job.hpp"
#include "run_common.hpp"

namespace compas::app {

namespace {

struct CgArgs {
  RunFlags run;
  std::string cls = "S";
  std::string decomposition = "auto";
  bool inject_fault = false;
};

int run_cg(const CgArgs& a) {
  if (a.cls.size() != 1) throw std::invalid_argument("--class '" + a.cls + "': one of S W A B C T");
  const auto cp = kernels::cg::params(a.cls[0]);  // std::invalid_argument for a bad class
  Runtime rt(runtime_options(a.run));
  if (kernels::cg::chunk_count(cp.na) < rt.nodes())
    throw std::invalid_argument(
        fmt::format("--class {} has {} row chunks, fewer than the {} "
                    "processes",
                    a.cls, kernels::cg::chunk_count(cp.na), rt.nodes()));
  const bool leader = rt.node() == 0;
  if (leader) check_outputs(a.run.out);
  const auto& events = rt.profile().events();
  rt.profile().reset();
  kernels::cg::JobParams jp;
  jp.cls = cp.cls;
  jp.test.inject_fault = a.inject_fault;
  jp.decomposition = a.decomposition == "rows"   ? kernels::cg::Decomposition::rows
                     : a.decomposition == "grid" ? kernels::cg::Decomposition::grid
                                                 : kernels::cg::Decomposition::automatic;
  const auto r = kernels::cg::run(rt, jp);
  perf::json regions = region_json(rt, events, leader && !a.run.out.quiet);
  if (!leader) return r.verified ? 0 : 1;
  // "solve" holds everything; what is neither communication nor synchronization is compute.
  // Per thread, compute = solve - communicate - synchronize, so the mean over threads is the
  // difference of the means (the maxima belong to different threads and do not subtract).
  if (regions.contains("solve")) {
    auto mean = [&](const char* name) {
      return regions.contains(name) ? regions[name].value("mean_seconds", 0.0) : 0.0;
    };
    regions["compute"] = {
        {"mean_seconds", std::max(0.0, mean("solve") - mean("communicate") - mean("synchronize"))},
        {"derived", "solve - communicate - synchronize, mean over threads"}};
  }
  const double iterations = static_cast<double>(cp.niter) * kernels::cg::kCgIterations;
  const double gbs = r.seconds > 0 ? r.bytes_per_iteration * iterations / r.seconds / 1e9 : 0.0;
  perf::Report report("run", perf::machine_json(rt.topology()),
                      job_params(rt, {{"kernel", "cg"},
                                      {"nodes", rt.nodes()},
                                      {"threads", rt.threads()},
                                      {"class", a.cls},
                                      {"bootstrap", rt.bootstrap().kind()}}));
  report.add({{"kernel", "cg"},
              {"nodes", rt.nodes()},
              {"threads", rt.threads()},
              {"class", std::string(1, cp.cls)},
              {"na", r.na},
              {"nnz", r.nnz},
              {"niter", cp.niter},
              {"seconds", r.seconds},
              {"cpu_seconds", r.cpu_seconds},
              {"verified", r.verified},
              {"verification", r.verification},
              {"zeta", r.zeta},
              {"zeta_verify", r.zeta_verify},
              {"official_zeta", r.official},
              {"error", r.error},
              {"rnorm", r.rnorm},
              {"mops", r.mops},
              {"model_gbs", gbs},
              {"decomposition", r.grid.columns > 1 ? "grid" : "rows"},
              {"grid", {r.grid.rows, r.grid.columns}},
              {"comm_bytes_per_iteration", r.comm_bytes_per_iteration},
              {"regions", regions}});
  write_outputs(report, a.run.out);
  if (!a.run.out.quiet)
    fmt::print(
        "\ncg class {} (na {}, {} nonzeros) on {} process(es) x {} thread(s): {:.4f} s, "
        "{:.1f} Mop/s (NPB), {:.2f} GB/s by the byte model; CPU {:.4f} s\n",
        cp.cls, r.na, r.nnz, rt.nodes(), rt.threads(), r.seconds, r.mops, gbs, r.cpu_seconds);
  if (!a.run.out.quiet && rt.nodes() > 1)
    fmt::print("decomposition: {}; {:.0f} bytes sent per process and inner iteration (largest)\n",
               r.grid.columns > 1 ? fmt::format("grid {} x {}", r.grid.rows, r.grid.columns)
                                  : std::string("rows"),
               r.comm_bytes_per_iteration);
  fmt::print("{}: {}\n", r.verified ? "verified" : "VERIFICATION FAILED", r.verification);
  return r.verified ? 0 : 1;
}

}  // namespace

RunKernel add_run_cg(CLI::App& run) {
  auto a = std::make_shared<CgArgs>();
  auto* cmd = run.add_subcommand(
      "cg", "NAS CG: inverse power iteration with conjugate gradients, NPB classes (COMPaS 5.3)");
  cmd->add_option("--class", a->cls,
                  "S, W, A, B, C (NPB's sizes and verification values) or T (tiny, ~1 MB matrix)");
  cmd->add_option("--decomposition", a->decomposition,
                  "rows (each process sends its rows of p to all), grid (C x C processes, C a "
                  "power of two: NPB's 2-D one) or auto (grid from 16 processes on)")
      ->check(CLI::IsMember({"auto", "rows", "grid"}));
  cmd->add_flag("--inject-fault", a->inject_fault, "perturb one matrix value (to see it fail)")
      ->group("");
  add_run_flags(*cmd, a->run);
  return {cmd, [a] { return run_cg(*a); }};
}

}  // namespace compas::app
