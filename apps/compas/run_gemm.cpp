// compas run gemm: C = A * B by SUMMA over the processes (a ring when P is prime), the local
// products blocked and tiled on each team (kernels/gemm_job.hpp), verified by Freivalds' check.
#include <fmt/core.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/kernels/test_hooks.hpp"
#include "compas/kernels/gemm_job.hpp"
#include "run_common.hpp"

namespace compas::app {

namespace {

struct GemmArgs {
  RunFlags run;
  kernels::gemm::JobParams p;
  kernels::detail::TestHooks hooks;  // --inject-fault
};

std::string gemm_summary(const kernels::gemm::JobResult& r, int processes, int threads,
                         const report::json& regions) {
  const char* algorithm = processes == 1 ? "local" : r.ring ? "ring" : "summa";
  std::string text = fmt::format(
      "\ngemm n={} on {} process(es) x {} thread(s), grid {}x{} ({}, {} panel step(s)), {} "
      "micro-kernel: {:.4f} s per multiplication (median of {}; fastest {:.4f} s), {:.2f} "
      "GFLOP/s\n",
      r.n, processes, threads, r.grid_rows, r.grid_cols, algorithm, r.steps, r.isa, r.seconds,
      r.iters, r.seconds_min, r.gflops);
  auto per_multiply = [&](const char* name) {
    return regions.contains(name) ? regions[name].value("max_seconds", 0.0) / r.iters : 0.0;
  };
  text += fmt::format(
      "per multiplication (slowest thread, all iterations' mean): compute {:.4f} s, "
      "communicate {:.4f} s, synchronize {:.4f} s\n",
      per_multiply("compute"), per_multiply("communicate"), per_multiply("synchronize"));
  if (processes > 1)
    text += fmt::format("panels put between processes: {:.1f} MB per multiplication\n",
                        r.panel_bytes / 1e6);
  return text;
}

KernelRun gemm_run(Runtime& rt, const GemmArgs& a) {
  kernels::gemm::JobParams p = a.p;
  p.test = &a.hooks;
  const auto r = kernels::gemm::run(rt, p);
  KernelRun out;
  out.verified = r.verified;
  out.verification = r.verification;
  out.params = {{"n", a.p.n}, {"iters", a.p.iters}};
  out.record = {{"n", r.n},
                {"grid", fmt::format("{}x{}", r.grid_rows, r.grid_cols)},
                {"algorithm", rt.processes() == 1 ? "local"
                              : r.ring            ? "ring"
                                                  : "summa"},
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
                {"tolerance", r.tolerance}};
  out.summary = [r, processes = rt.processes(),
                 threads = rt.threads()](const report::json& regions) {
    return gemm_summary(r, processes, threads, regions);
  };
  for (double s : r.iter_seconds) out.timed_seconds += s;
  out.scalable = true;
  out.work = {"multiply", static_cast<double>(r.iter_seconds.size()), r.flops / 1e9, 0.0,
              r.cpu_seconds};
  return out;
}

int run_gemm(const GemmArgs& a) {
  try {
    kernels::gemm::resolve_isa();  // a bad COMPAS_GEMM_ISA is bad input, said before anything runs
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (what.find("COMPAS_GEMM_ISA") != std::string::npos) throw;
    throw std::invalid_argument("COMPAS_GEMM_ISA: " + what);
  }
  auto check = [&](Runtime& rt) { kernels::gemm::check(a.p, rt.processes(), rt.processes_here()); };
  return run_kernel("gemm", a.run, check, [&](Runtime& rt, int factor) {
    GemmArgs more = a;
    more.p.iters = static_cast<int>(std::min<long long>(1 << 20, 1ll * a.p.iters * factor));
    return gemm_run(rt, more);
  });
}

// COMPaS Table 6 used n = 1800; a small size shows the per-panel overheads.
std::vector<StudySize> gemm_study_sizes(double scale) {
  const std::string big = scale >= 0.3 ? "1800" : "600";
  return {{"n=256", {"--n", "256", "--iters", "3"}, 0.2},
          {"n=" + big, {"--n", big, "--iters", "3"}, scale >= 0.3 ? 2.5 : 0.5}};
}

// n grows by sqrt(p): n^2 matrix elements, the same per core (the work grows by p^1.5).
WeakSeries gemm_weak_series(double scale) {
  const int n0 = scale >= 0.3 ? 800 : 300;
  const double s1 = scale >= 0.3 ? 0.5 : 0.05;
  return {"n=" + std::to_string(n0) + "*sqrt(p)", [=](int p) {
            const std::string n = scaled_by_sqrt(n0, p);
            return StudySize{"n=" + n, {"--n", n, "--iters", "3"}, s1 * std::pow(p, 1.5)};
          }};
}

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
  cmd->add_flag("--inject-fault", a->hooks.inject_fault,
                "perturb one element of C before verification (to see verification fail)")
      ->group("");
  add_run_flags(*cmd, a->run);
  return {cmd, [a] { return run_gemm(*a); }};
}

}  // namespace

KernelSpec gemm_kernel() {
  return {"gemm", "gflops", "load", add_run_gemm, gemm_study_sizes, gemm_weak_series};
}

}  // namespace compas::app
