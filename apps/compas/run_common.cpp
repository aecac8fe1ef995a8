#include "run_common.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/core.h>

#include "compas/threads/barrier.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/wait.hpp"
#include "job_load.hpp"

namespace compas::app {

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
  // COMPAS_REPORT_BINDING is read by the Runtime itself (an empty value is bad input there).
  cmd.add_flag("--report-bindings", f.report_bindings,
               "every process prints its cpus and each thread's cpu on stderr at start "
               "(COMPAS_REPORT_BINDING=1)");
  add_events_flag(cmd, f.events);
  cmd.add_option("--min-seconds", f.min_seconds,
                 "run more iterations until the timed part lasts at least this long (seconds; "
                 "0: the iterations asked; CG, whose class fixes its iterations, repeats the whole "
                 "benchmark)")
      ->check(CLI::Range(0.0, 3600.0));
  // The study's --vary-work (its tests): runs of one point made to do different work.
  cmd.add_option("--work-factor", f.work_factor, "multiply the iterations asked by this")
      ->check(CLI::Range(1, 1000))
      ->group("");
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
  o.report_binding = f.report_bindings;
  o.events = f.events;
  return o;
}

// Job-level region table and the per-region JSON (seconds: mean and max over all threads).
report::json region_json(Runtime& rt, const perf::EventChoice& events, bool print,
                         const std::map<std::string, perf::WorkModel>& models) {
  const auto summaries = perf::aggregate(rt.job_samples(), 64, models);
  report::json regions = report::json::object();
  for (const auto& s : summaries) {
    report::json r = {
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

namespace {

// "spin 32768 pauses, then yield 16 times, then sleep on a futex"
std::string backoff_text(const threads::Backoff& b) {
  std::string t = b.spins > 0 ? "spin " + std::to_string(b.spins) + " pauses" : "no spin";
  if (b.yields == std::numeric_limits<int>::max())
    t += ", then yield for as long as it takes";
  else if (b.yields > 0)
    t += ", then yield " + std::to_string(b.yields) + " times";
  if (b.sleep) t += ", then sleep on a futex";
  return t;
}

}  // namespace

report::json wait_json(threads::WaitPolicy asked, bool oversubscribed) {
  const threads::Backoff b = threads::resolve(asked, oversubscribed);
  std::string reason;
  if (asked != threads::WaitPolicy::automatic)
    reason = "asked for (--wait or COMPAS_WAIT)";
  else if (!oversubscribed)
    reason = "auto: every thread of the job has a CPU of its own, so waits spin long";
  else
    reason = std::string(
                 "auto: the job has more threads than CPUs, so waits spin briefly and "
                 "sleep; ") +
             (threads::yields_hand_over()
                  ? "they yield first because a yield hands the CPU over at once here (timed: "
                    "two threads on one CPU took 64 turns within 5 ms)"
                  : "they do not yield because a yield does not hand the CPU over at once here "
                    "(timed: two threads on one CPU did not take 64 turns within 5 ms)");
  return {{"wait", threads::to_string(asked)},
          {"wait_backoff", backoff_text(b)},
          {"wait_reason", reason}};
}

report::json job_params(Runtime& rt, report::json params) {
  params.update(wait_json(rt.options().wait, rt.team().oversubscribed()));
  return params;
}

namespace {

// compute = whole - communicate - synchronize per thread, so the mean over threads is the
// difference of the means (the maxima belong to different threads and do not subtract).
void add_compute(report::json& regions, const std::string& whole) {
  if (whole.empty() || !regions.contains(whole)) return;
  auto mean = [&](const std::string& name) {
    return regions.contains(name) ? regions[name].value("mean_seconds", 0.0) : 0.0;
  };
  regions["compute"] = {
      {"mean_seconds", std::max(0.0, mean(whole) - mean("communicate") - mean("synchronize"))},
      {"derived", whole + " - communicate - synchronize, mean over threads"}};
}

report::json job_fields(const std::string& kernel, Runtime& rt) {
  return {{"kernel", kernel}, {"processes", rt.processes()}, {"threads", rt.threads()}};
}

// The factor that takes `timed` seconds past `min` (10% to spare), the largest any process asks.
int next_factor(Runtime& rt, int factor, double timed, double min) {
  const double want = timed > 0 ? std::ceil(factor * min / timed * 1.1) : factor * 1000.0;
  long long mine = static_cast<long long>(std::min(want, 1e6));
  long long agreed = 0;
  rt.run([&](threads::ThreadCtx& t) {
    const long long v = rt.allreduce(t, t.is_leader() ? mine : 0LL, op::max{});
    if (t.is_leader()) agreed = v;
  });
  return static_cast<int>(std::max<long long>(agreed, factor + 1));
}

// Runs of a kernel --min-seconds may take: the first run's times include its cold start (a first
// iteration many times slower), so the first estimate of the factor can fall short.
constexpr int kMinTries = 6;

// Runs the kernel, again with more iterations while its timed part is under --min-seconds.
KernelRun run_to_minimum(Runtime& rt, const RunFlags& flags, const KernelRunner& run, int& factor) {
  factor = flags.work_factor;
  KernelRun r = run(rt, factor);
  for (int tries = 1; tries < kMinTries && r.scalable && r.timed_seconds < flags.min_seconds;
       ++tries) {
    factor = next_factor(rt, factor, r.timed_seconds, flags.min_seconds);
    rt.profile().reset();
    r = run(rt, factor);
  }
  return r;
}

// The run's work record (run_common.hpp, Work): what the study and compare read.
report::json work_json(const std::string& kernel, const KernelRun& r) {
  const Work& w = r.work;
  const double s = r.timed_seconds;
  const KernelSpec* spec = find_kernel(kernel);
  const auto per = [&](double amount) { return s > 0 ? amount * w.units / s : 0.0; };
  return {{"unit", w.unit},
          {"units", w.units},
          {"seconds", s},
          {"seconds_per_unit", w.units > 0 ? s / w.units : 0.0},
          {"rate_field", spec ? spec->rate_field : std::string()},
          {"rate", per(w.rate_per_unit)},
          {"rate_per_unit", w.rate_per_unit},
          {"bytes_per_unit", w.bytes_per_unit},
          {"gbs", per(w.bytes_per_unit) / 1e9},
          {"cpu_seconds", w.cpu_seconds}};
}

}  // namespace

int run_kernel(const std::string& kernel, const RunFlags& flags,
               const std::function<void(Runtime&)>& check, const KernelRunner& run) {
  Runtime rt(runtime_options(flags));
  check(rt);
  const bool leader = rt.process() == 0;
  if (leader) check_outputs(flags.out);
  const auto& events = rt.profile().events();
  rt.profile().reset();
  int factor = 1;
  KernelRun r = run_to_minimum(rt, flags, run, factor);
  report::json regions = region_json(rt, events, leader && !flags.out.quiet);
  count_job_cpu(rt.bootstrap());
  if (!leader) return r.verified ? 0 : 1;
  add_compute(regions, r.whole_region);
  const std::string summary = !flags.out.quiet && r.summary ? r.summary(regions) : "";
  report::json params = job_fields(kernel, rt);
  params.update(r.params);
  params["bootstrap"] = rt.bootstrap().kind();
  report::json record = job_fields(kernel, rt);
  record.update(r.record);
  record["timed_seconds"] = r.timed_seconds;
  record["work"] = work_json(kernel, r);
  record["min_seconds"] = flags.min_seconds;
  record["iteration_factor"] = factor;
  if (flags.min_seconds > 0 && r.timed_seconds < flags.min_seconds)
    record["min_seconds_note"] = r.scalable ? fmt::format("not reached after {} tries", kMinTries)
                                            : "not applied: the kernel's iterations are fixed";
  record["regions"] = std::move(regions);
  report::Report report("run", report::machine_json(rt.topology()),
                        job_params(rt, std::move(params)));
  report.add(std::move(record));
  write_outputs(report, flags.out);
  fmt::print("{}", summary);
  fmt::print("{}: {}\n", r.verified ? "verified" : "VERIFICATION FAILED", r.verification);
  return r.verified ? 0 : 1;
}

}  // namespace compas::app
