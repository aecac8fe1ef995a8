// compas run cg: NAS CG (kernels/cg.hpp, cg_job.hpp), NPB's classes and verification values.
#include <fmt/core.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compas/kernels/test_hooks.hpp"
#include "compas/kernels/cg_job.hpp"
#include "run_common.hpp"

namespace compas::app {

namespace {

struct CgArgs {
  RunFlags run;
  std::string cls = "S";
  std::string decomposition = "auto";
  std::string sum_order = "auto";
  bool inject_fault = false;
};

kernels::cg::Decomposition decomposition(const std::string& name) {
  return name == "rows"   ? kernels::cg::Decomposition::rows
         : name == "grid" ? kernels::cg::Decomposition::grid
                          : kernels::cg::Decomposition::automatic;
}

std::optional<kernels::cg::SumOrder> sum_order(const std::string& name) {
  if (name == "tree") return kernels::cg::SumOrder::tree;
  if (name == "running") return kernels::cg::SumOrder::running;
  return std::nullopt;
}

// NPB's class fixes the iterations of one benchmark: --min-seconds repeats the whole benchmark
// (its matrix made again, its untimed first iteration, its timed ones), each verified, and the
// run's seconds, CPU time and rates are over all the repetitions' timed iterations.
KernelRun cg_run(Runtime& rt, const CgArgs& a, const kernels::cg::ClassParams& cp, int repeats) {
  kernels::cg::JobParams jp;
  jp.cls = cp.cls;
  kernels::detail::TestHooks hooks;
  hooks.inject_fault = a.inject_fault;
  jp.test = &hooks;
  jp.decomposition = decomposition(a.decomposition);
  jp.sum_order = sum_order(a.sum_order);
  auto r = kernels::cg::run(rt, jp);
  const double one_mop = r.mops * r.seconds;  // NPB's operations of one benchmark, in millions
  for (int k = 1; k < repeats; ++k) {
    const auto more = kernels::cg::run(rt, jp);
    r.seconds += more.seconds;
    r.cpu_seconds += more.cpu_seconds;
    if (!more.verified && r.verified) {
      r.verified = false;
      r.verification = more.verification;
    }
  }
  r.mops = r.seconds > 0 ? one_mop * repeats / r.seconds : 0.0;
  const double iterations = static_cast<double>(cp.niter) * kernels::cg::kCgIterations * repeats;
  const double gbs = r.seconds > 0 ? r.bytes_per_iteration * iterations / r.seconds / 1e9 : 0.0;
  const std::string decomposition = r.grid.columns > 1 ? "grid" : "rows";
  const std::string order = r.sum_order == kernels::cg::SumOrder::tree ? "tree" : "running";
  KernelRun out;
  out.verified = r.verified;
  out.verification = r.verification;
  out.whole_region = "solve";
  out.params = {{"class", a.cls}};
  out.record = {{"class", std::string(1, cp.cls)},
                {"na", r.na},
                {"nnz", r.nnz},
                {"niter", cp.niter},
                {"repetitions", repeats},
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
                {"decomposition", decomposition},
                {"sum_order", order},
                {"grid", {r.grid.rows, r.grid.columns}},
                {"comm_bytes_per_iteration", r.comm_bytes_per_iteration}};
  std::string text = fmt::format(
      "\ncg class {} (na {}, {} nonzeros) on {} process(es) x {} thread(s): {:.4f} s, "
      "{:.1f} Mop/s (NPB), {:.2f} GB/s by the byte model; CPU {:.4f} s\n",
      cp.cls, r.na, r.nnz, rt.processes(), rt.threads(), r.seconds, r.mops, gbs, r.cpu_seconds);
  if (rt.processes() > 1)
    text += fmt::format(
        "decomposition: {}, panel sums in {} order; {:.0f} bytes sent per process and inner "
        "iteration (largest)\n",
        r.grid.columns > 1 ? fmt::format("grid {} x {}", r.grid.rows, r.grid.columns)
                           : decomposition,
        order, r.comm_bytes_per_iteration);
  else
    text += fmt::format("panel sums in {} order\n", order);
  out.summary = [text](const report::json&) { return text; };
  out.timed_seconds = r.seconds;
  out.scalable = true;  // by repeating the benchmark
  // NPB's iteration: one solve of kCgIterations CG steps and the eigenvalue update.
  out.work = {"iteration", static_cast<double>(cp.niter) * repeats, one_mop / cp.niter,
              r.bytes_per_iteration * kernels::cg::kCgIterations, r.cpu_seconds};
  return out;
}

int run_cg(const CgArgs& a) {
  if (a.cls.size() != 1) throw std::invalid_argument("--class '" + a.cls + "': one of S W A B C T");
  const auto cp = kernels::cg::params(a.cls[0]);  // std::invalid_argument for a bad class
  auto check = [&](Runtime& rt) { kernels::cg::check(cp, rt.processes(), rt.processes_here()); };
  return run_kernel("cg", a.run, check,
                    [&](Runtime& rt, int factor) { return cg_run(rt, a, cp, factor); });
}

// COMPaS Fig. 11: the tiny class (about 1 MB, cache-resident) and one beyond the caches.
std::vector<StudySize> cg_study_sizes(double scale) {
  std::vector<StudySize> sizes = {{"class=T", {"--class", "T"}, 0.1}};
  if (scale >= 0.3)
    sizes.push_back({"class=A", {"--class", "A"}, 1.8});
  else
    sizes.push_back({"class=W", {"--class", "W"}, 0.4});
  return sizes;
}

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
  cmd->add_option(
         "--sum-order", a->sum_order,
         "how a row's (and a dot product's) column panel sums are added: tree (a fixed "
         "binary tree: rows then give a grid's bits), running (left to right: faster "
         "with one thread per process; rows only: it makes --decomposition auto take rows) "
         "or auto (running with rows, tree with a grid)")
      ->check(CLI::IsMember({"auto", "tree", "running"}));
  cmd->add_flag("--inject-fault", a->inject_fault, "perturb one matrix value (to see it fail)")
      ->group("");
  add_run_flags(*cmd, a->run);
  return {cmd, [a] { return run_cg(*a); }};
}

}  // namespace

// NPB fixes CG's sizes in classes: there is no size per core to hold, so no weak series.
KernelSpec cg_kernel() {
  return {"cg", "mops", "load", add_run_cg, cg_study_sizes, nullptr};
}

}  // namespace compas::app
