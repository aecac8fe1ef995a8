// compas run gemm: C = A * B by SUMMA over the processes (a ring when P is prime), the local
// products blocked and tiled on each team (kernels/gemm_job.hpp), verified by Freivalds' check.
#include <fmt/core.h>
#include <unistd.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "compas/kernels/gemm_job.hpp"
#include "run_common.hpp"

namespace compas::app {

namespace {

struct GemmArgs {
  RunFlags run;
  kernels::gemm::JobParams p;
};

int run_gemm(const GemmArgs& a) {
  try {
    kernels::gemm::resolve_isa();  // a bad COMPAS_GEMM_ISA is bad input, said before anything runs
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (what.find("COMPAS_GEMM_ISA") != std::string::npos) throw;
    throw std::invalid_argument("COMPAS_GEMM_ISA: " + what);
  }
  Runtime rt(runtime_options(a.run));
  kernels::gemm::check(a.p, rt.nodes());
  // A, B and C alone take 24 n^2 / P bytes per process: refuse what cannot fit in this host.
  const double need = 24.0 * static_cast<double>(a.p.n) * static_cast<double>(a.p.n) / rt.nodes();
  const double have =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (have > 0 && need > have)
    throw std::invalid_argument(fmt::format(
        "--n {}: A, B and C need {:.1f} GiB per process ({} process(es)), more than this host's "
        "{:.1f} GiB",
        a.p.n, need / (1 << 30), rt.nodes(), have / (1 << 30)));
  const bool leader = rt.node() == 0;
  if (leader) check_outputs(a.run.out);
  const auto& events = rt.profile().events();
  rt.profile().reset();
  const auto r = kernels::gemm::run(rt, a.p);
  const perf::json regions = region_json(rt, events, leader && !a.run.out.quiet);
  if (!leader) return r.verified ? 0 : 1;

  const std::string grid = fmt::format("{}x{}", r.grid_rows, r.grid_cols);
  const char* algorithm = rt.nodes() == 1 ? "local" : r.ring ? "ring" : "summa";
  perf::Report report("run", perf::machine_json(rt.topology()),
                      job_params(rt, {{"kernel", "gemm"},
                                      {"nodes", rt.nodes()},
                                      {"threads", rt.threads()},
                                      {"n", a.p.n},
                                      {"iters", a.p.iters},
                                      {"bootstrap", rt.bootstrap().kind()}}));
  report.add({{"kernel", "gemm"},
              {"nodes", rt.nodes()},
              {"threads", rt.threads()},
              {"n", r.n},
              {"grid", grid},
              {"algorithm", algorithm},
              {"isa", r.isa},
              {"iters", r.iters},
              {"steps", r.steps},
              {"seconds", r.seconds},
              {"seconds_min", r.seconds_min},
              {"iter_seconds", r.iter_seconds},
              {"cpu_seconds", r.cpu_seconds},
              {"flops", r.flops},
              {"gflops", r.gflops},
              {"panel_bytes", r.panel_bytes},
              {"verified", r.verified},
              {"verification", r.verification},
              {"error", r.error},
              {"tolerance", r.tolerance},
              {"regions", regions}});
  write_outputs(report, a.run.out);
  if (!a.run.out.quiet) {
    fmt::print(
        "\ngemm n={} on {} process(es) x {} thread(s), grid {} ({}, {} panel step(s)), {} "
        "micro-kernel: {:.4f} s per multiplication (median of {}; fastest {:.4f} s), {:.2f} "
        "GFLOP/s\n",
        r.n, rt.nodes(), rt.threads(), grid, algorithm, r.steps, r.isa, r.seconds, r.iters,
        r.seconds_min, r.gflops);
    auto per_multiply = [&](const char* name) {
      return regions.contains(name) ? regions[name].value("max_seconds", 0.0) / r.iters : 0.0;
    };
    fmt::print(
        "per multiplication (slowest thread, all iterations' mean): compute {:.4f} s, "
        "communicate {:.4f} s, synchronize {:.4f} s\n",
        per_multiply("compute"), per_multiply("communicate"), per_multiply("synchronize"));
    if (rt.nodes() > 1)
      fmt::print("panels put between processes: {:.1f} MB per multiplication\n",
                 r.panel_bytes / 1e6);
  }
  fmt::print("{}: {}\n", r.verified ? "verified" : "VERIFICATION FAILED", r.verification);
  return r.verified ? 0 : 1;
}

}  // namespace

RunKernel add_run_gemm(CLI::App& run) {
  auto a = std::make_shared<GemmArgs>();
  auto* cmd = run.add_subcommand(
      "gemm",
      "C = A * B (doubles): SUMMA over a process grid (a ring when P is prime), blocked local "
      "multiply on each team (COMPaS 5.2)");
  cmd->add_option("--n", a->p.n, "matrix order (A, B and C are n x n)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  cmd->add_option("--iters", a->p.iters, "multiplications timed (the median is reported)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_flag("--inject-fault", a->p.test.inject_fault,
                "perturb one element of C before verification (to see verification fail)")
      ->group("");
  add_run_flags(*cmd, a->run);
  return {cmd, [a] { return run_gemm(*a); }};
}

}  // namespace compas::app
