// Shared pieces of `compas run KERNEL`: the job flags every kernel takes, the Runtime built from
// them, the job-level region table, and the registry of kernels (one run_<kernel>.cpp each).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>

#include "common.hpp"
#include "compas/perf/region.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas::app {

struct RunFlags {
  int threads = 0;
  std::string bind;
  std::string wait;
  bool oversubscribe = false;
  bool report_bindings = false;
  std::string events;
  OutputFlags out;
};

// --threads --bind --wait --oversubscribe --report-bindings --events and the output flags.
void add_run_flags(CLI::App& cmd, RunFlags& f);
RuntimeOptions runtime_options(const RunFlags& f);

// The wait policy the job's threads use and why (auto's choice: a CPU per thread or not, and
// whether a yield hands the CPU over here, which is timed once per process), for the JSON:
// {"wait": "auto", "wait_backoff": "...", "wait_reason": "..."}.
perf::json wait_json(threads::WaitPolicy asked, bool oversubscribed);
// A kernel's report parameters `params` with the job's: the wait policy and why.
perf::json job_params(Runtime& rt, perf::json params);

// Collective: every process's regions, aggregated; rank 0 prints the table when `print`. Returns
// {region: {mean_seconds, max_seconds, threads, counters, derived}}.
perf::json region_json(Runtime& rt, const perf::EventChoice& events, bool print,
                       const std::map<std::string, perf::WorkModel>& models = {});

// A kernel's subcommand under `compas run` and the function that runs it once parsed.
struct RunKernel {
  CLI::App* app = nullptr;
  std::function<int()> run;
};
RunKernel add_run_laplace(CLI::App& run);
RunKernel add_run_cg(CLI::App& run);
RunKernel add_run_gemm(CLI::App& run);
RunKernel add_run_sort(CLI::App& run);

}  // namespace compas::app
