#include "run_common.hpp"

#include <fmt/core.h>

#include "compas/threads/barrier.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/wait.hpp"

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
                       const std::map<std::string, perf::WorkModel>& models) {
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

}  // namespace compas::app
