// Shared pieces of `compas run KERNEL`: the job flags every kernel takes, the Runtime built from
// them, the job-level region table, and the harness every kernel's run goes through.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>

#include "common.hpp"
#include "compas/perf/region.hpp"
#include "compas/runtime/runtime.hpp"
#include "kernel_table.hpp"

namespace compas::app {

struct RunFlags {
  int threads = 0;
  std::string bind;
  std::string wait;
  bool oversubscribe = false;
  bool report_bindings = false;
  std::string events;
  double min_seconds = 0;  // --min-seconds: the timed part lasts at least this (0: as asked)
  int work_factor = 1;     // hidden --work-factor: the first run's iterations multiplied by it
  OutputFlags out;
};

// --threads --bind --wait --oversubscribe --report-bindings --events and the output flags.
void add_run_flags(CLI::App& cmd, RunFlags& f);
RuntimeOptions runtime_options(const RunFlags& f);

// The wait policy the job's threads use and why (auto's choice: a CPU per thread or not, and
// whether a yield hands the CPU over here, which is timed once per process), for the JSON:
// {"wait": "auto", "wait_backoff": "...", "wait_reason": "..."}.
report::json wait_json(threads::WaitPolicy asked, bool oversubscribed);
// A kernel's report parameters `params` with the job's: the wait policy and why.
report::json job_params(Runtime& rt, report::json params);

// Collective: every process's regions, aggregated; rank 0 prints the table when `print`. Returns
// {region: {mean_seconds, max_seconds, threads, counters, derived}}.
report::json region_json(Runtime& rt, const perf::EventChoice& events, bool print,
                         const std::map<std::string, perf::WorkModel>& models = {});

// What one run did, in the kernel's own unit (a sweep, a multiply, an iteration, a sort): every
// figure the study and compare derive for a run comes from this record and the timed seconds
// (README, "What `seconds` means"). The rate field's value over the whole timed part is
// rate_per_unit x units / timed seconds.
struct Work {
  std::string unit;           // singular: "sweep", "multiply", "iteration", "sort"
  double units = 0;           // how many were timed together
  double rate_per_unit = 0;   // the rate field's amount in one unit (MLUP per sweep, ...)
  double bytes_per_unit = 0;  // the kernel's byte model for one unit (0: it has none)
  double cpu_seconds = 0;     // CPU time of all processes over the timed part
};

// What a kernel's run gives the harness (run_kernel).
struct KernelRun {
  bool verified = false;
  std::string verification;
  report::json params =
      report::json::object();  // the report's parameters after kernel, processes, threads
  report::json record =
      report::json::object();  // the result's fields after kernel, processes, threads
  // What rank 0 prints after the report is written (unless --quiet), given the job's regions.
  std::function<std::string(const report::json& regions)> summary;
  // The region holding the whole solve, if the kernel has one: "compute" is then added as it
  // minus communicate and synchronize (means over threads).
  std::string whole_region;
  // How long the timed part lasted (all its iterations), the same on every process, and whether
  // the kernel can run more iterations to reach --min-seconds (CG cannot: NPB's class fixes
  // them).
  double timed_seconds = 0;
  bool scalable = false;
  Work work;  // what the timed part did, written to the record as "work"
};

// A kernel's run with its iterations multiplied by `factor` (1: as asked).
using KernelRunner = std::function<KernelRun(Runtime&, int factor)>;

// One kernel on this job with what every kernel does around its own work: the Runtime from the
// job flags; `check` (the parameters against the job: bad input before any work); the output
// paths checked on rank 0; the regions reset before `run` and gathered after it (the table
// printed on rank 0); then on rank 0 the report (machine; kernel, processes, threads, the params,
// bootstrap and wait policy; the record and its regions) written, the summary and the verdict
// printed. Returns 0 when verified, else 1 (on every process).
// With --min-seconds S, a run whose timed part lasted less than S runs again with its iterations
// multiplied to reach it (the factor agreed by every process; at most 6 tries), and the report
// says so (min_seconds, iteration_factor, timed_seconds).
int run_kernel(const std::string& kernel, const RunFlags& flags,
               const std::function<void(Runtime&)>& check, const KernelRunner& run);

}  // namespace compas::app
