// compas run laplace: explicit Jacobi, halos by put_signal (kernels/laplace.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "compas/kernels/test_hooks.hpp"
#include "compas/kernels/laplace.hpp"
#include "run_common.hpp"

namespace compas::app {

namespace {

struct LaplaceArgs {
  RunFlags run;
  kernels::laplace::Params p;
  kernels::detail::TestHooks hooks;  // --inject-fault
  std::string stores = "auto";
  std::string schedule = "dynamic";
};

KernelRun laplace_run(Runtime& rt, const LaplaceArgs& a) {
  kernels::laplace::Params p = a.p;
  p.test = &a.hooks;
  const auto r = kernels::laplace::run(rt, p);
  const double gbs = r.seconds > 0 ? r.bytes / r.seconds / 1e9 : 0.0;
  KernelRun out;
  out.verified = r.verified;
  out.verification = r.verification;
  out.params = {{"n", a.p.n}, {"iters", a.p.iters}, {"tol", a.p.tol}};
  out.record = {{"n", a.p.n},
                {"iters", a.p.iters},
                {"sweeps", r.sweeps},
                {"seconds", r.seconds},
                {"cpu_seconds", r.cpu_seconds},
                {"verified", r.verified},
                {"verification", r.verification},
                {"max_error", r.max_error},
                {"mlups", r.mlups()},
                {"gflops", r.seconds > 0 ? r.flops / r.seconds / 1e9 : 0.0},
                {"model_gbs", gbs},
                {"field_hash", fmt::format("{:016x}", r.field_hash)},
                {"streaming_stores", r.streaming_stores},
                {"stores_calibrated", r.stores_calibrated},
                {"stores_reason", r.stores_reason},
                {"schedule", kernels::laplace::to_string(a.p.schedule)},
                {"moved", r.moved}};
  std::string text = fmt::format(
      "\nlaplace n={} on {} process(es) x {} thread(s): {} sweeps in {:.4f} s, {:.1f} "
      "MLUP/s, {:.2f} GB/s by the kernel's byte model\n"
      "CPU time {:.4f} s over wallclock {:.4f} s; field hash {:016x}\n",
      a.p.n, rt.processes(), rt.threads(), r.sweeps, r.seconds, r.mlups(), gbs, r.cpu_seconds,
      r.seconds, r.field_hash);
  if (a.p.schedule == kernels::laplace::Schedule::dynamic && rt.threads() > 1)
    text += fmt::format(
        "dynamic schedule: {:.1f}% of the point updates made by a thread other than the "
        "rows' owner\n",
        100 * r.moved);
  out.summary = [text](const report::json&) { return text; };
  out.timed_seconds = r.seconds;
  out.scalable = true;
  const double sweeps = std::max(r.sweeps, 1);
  out.work = {"sweep", static_cast<double>(r.sweeps), r.flops / 4 / 1e6 / sweeps, r.bytes / sweeps,
              r.cpu_seconds};
  return out;
}

int run_laplace(LaplaceArgs& a) {
  a.p.stores = base::parse_stores("--stores", a.stores, false);
  a.p.schedule = kernels::laplace::parse_schedule(a.schedule);
  return run_kernel(
      "laplace", a.run,
      [&](Runtime& rt) { kernels::laplace::check(a.p, rt.processes(), rt.processes_here()); },
      [&](Runtime& rt, int factor) {
        LaplaceArgs more = a;
        more.p.iters = static_cast<int>(std::min<long long>(1ll << 30, 1ll * a.p.iters * factor));
        return laplace_run(rt, more);
      });
}

// The paper's n = 640 and a field well beyond the caches.
std::vector<StudySize> laplace_study_sizes(double scale) {
  const int iters = std::max(10, static_cast<int>(std::lround(2000 * scale)));
  const int big_iters = std::max(2, static_cast<int>(std::lround(20 * scale)));
  const std::string big = scale >= 0.3 ? "4096" : "1024";
  return {{"n=640", {"--n", "640", "--iters", std::to_string(iters)}, iters * 0.4e-3},
          {"n=" + big, {"--n", big, "--iters", std::to_string(big_iters)}, big_iters * 0.03}};
}

// n grows by sqrt(p): n^2 points, the same per core.
WeakSeries laplace_weak_series(double scale) {
  const int n0 = scale >= 0.3 ? 1024 : 512;
  const int iters = std::max(10, static_cast<int>(std::lround(200 * scale)));
  const double s1 = iters * (scale >= 0.3 ? 2.5e-3 : 0.6e-3);
  return {"n=" + std::to_string(n0) + "*sqrt(p)", [=](int p) {
            const std::string n = scaled_by_sqrt(n0, p);
            return StudySize{"n=" + n, {"--n", n, "--iters", std::to_string(iters)}, s1 * p};
          }};
}

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
  lap->add_flag("--inject-fault", la->hooks.inject_fault,
                "perturb one value before verification (to see verification fail)")
      ->group("");
  add_run_flags(*lap, la->run);

  return {lap, [la] { return run_laplace(*la); }};
}

}  // namespace

KernelSpec laplace_kernel() {
  return {"laplace", "mlups", "copy", add_run_laplace, laplace_study_sizes, laplace_weak_series};
}

}  // namespace compas::app
