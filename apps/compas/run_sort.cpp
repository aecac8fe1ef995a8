// compas run sort: radix sort of 32-bit keys over the job (kernels/sort_job.hpp).
#include <fmt/core.h>

#include <memory>
#include <string>
#include <vector>

#include "compas/kernels/test_hooks.hpp"
#include "compas/kernels/sort_job.hpp"
#include "run_common.hpp"

namespace compas::app {

namespace {

namespace rs = kernels::sort;

struct SortArgs {
  RunFlags run;
  std::string keys = "4M";
  std::string dist = "uniform";
  int iters = 5;
  int digit_bits = rs::Options{}.digit_bits;
  std::string stores = "auto";
  std::string method = "auto";
  bool inject_fault = false;
};

rs::JobParams job_params_of(const SortArgs& a) {
  rs::JobParams jp;
  jp.keys = rs::parse_keys(a.keys);  // std::invalid_argument names the value
  jp.dist = rs::parse_dist(a.dist);
  jp.iters = a.iters;
  jp.local.digit_bits = a.digit_bits;
  jp.local.stores = base::parse_stores("--stores", a.stores, true);
  jp.local.method = rs::parse_method(a.method);
  return jp;
}

KernelRun sort_run(Runtime& rt, const SortArgs& a, const rs::JobParams& params) {
  rs::JobParams jp = params;
  kernels::detail::TestHooks hooks;
  hooks.inject_fault = a.inject_fault;
  jp.test = &hooks;
  const auto r = rs::run(rt, jp);
  KernelRun out;
  out.verified = r.verified;
  out.verification = r.verification;
  out.params = {{"keys", r.keys},     {"dist", rs::to_string(jp.dist)},
                {"iters", jp.iters},  {"digit_bits", jp.local.digit_bits},
                {"stores", a.stores}, {"method", a.method}};
  out.record = {{"keys", r.keys},
                {"dist", rs::to_string(r.dist)},
                {"iters", r.iters},
                {"seconds", r.seconds},
                {"median_seconds", r.median_seconds},
                {"best_seconds", r.best_seconds},
                {"iteration_seconds", r.iteration_seconds},
                {"cpu_seconds", r.cpu_seconds},
                {"verified", r.verified},
                {"verification", r.verification},
                {"mkeys_per_s", r.mkeys_per_s},
                {"model_bytes", r.bytes},
                {"model_gbs", r.model_gbs},
                {"digit_bits", r.digit_bits},
                {"passes", r.passes},
                {"skipped_passes", r.skipped},
                {"streaming_stores", r.streaming},
                {"stores_reason", r.stores_reason},
                {"method", r.method},
                {"min_keys_per_process", r.min_keys},
                {"max_keys_per_process", r.max_keys}};
  const std::string text = fmt::format(
      "\nsort {} keys ({}) on {} process(es) x {} thread(s): median {:.4f} s of {} (best {:.4f} "
      "s); {:.1f} Mkeys/s, {:.2f} GB/s by the byte model; {}, {}-bit digits, {} pass(es) "
      "run, {} skipped{}; keys per process {}..{}\n",
      r.keys, rs::to_string(r.dist), rt.processes(), rt.threads(), r.seconds, r.iters,
      r.best_seconds, r.mkeys_per_s, r.model_gbs, r.method, r.digit_bits, r.passes, r.skipped,
      r.streaming ? ", streaming stores" : "", r.min_keys, r.max_keys);
  out.summary = [text](const report::json&) { return text; };
  for (double s : r.iteration_seconds) out.timed_seconds += s;
  out.scalable = true;
  out.work = {"sort", static_cast<double>(r.iteration_seconds.size()),
              static_cast<double>(r.keys) / 1e6, r.bytes, r.cpu_seconds};
  return out;
}

int run_sort(const SortArgs& a) {
  const rs::JobParams jp = job_params_of(a);
  return run_kernel(
      "sort", a.run, [&](Runtime& rt) { rs::check(jp, rt.processes(), rt.processes_here()); },
      [&](Runtime& rt, int factor) {
        rs::JobParams more = jp;
        more.iters = static_cast<int>(std::min<long long>(1 << 20, 1ll * jp.iters * factor));
        return sort_run(rt, a, more);
      });
}

// The paper's 4M keys (its buffers fit the caches of a node of the time), and 16x more.
std::vector<StudySize> sort_study_sizes(double scale) {
  const std::string big = scale >= 0.3 ? "64M" : "8M";
  return {{"keys=4M", {"--keys", "4M", "--iters", "3"}, 1.0},
          {"keys=" + big, {"--keys", big, "--iters", "3"}, scale >= 0.3 ? 6.0 : 2.0}};
}

// Keys grow by p: the same keys per core.
WeakSeries sort_weak_series(double scale) {
  const int m0 = scale >= 0.3 ? 8 : 2;  // millions of keys per core
  return {"keys=" + std::to_string(m0) + "M*p", [=](int p) {
            const std::string keys = std::to_string(m0 * p) + "M";
            return StudySize{"keys=" + keys, {"--keys", keys, "--iters", "3"}, 0.3 * m0 * p};
          }};
}

RunKernel add_run_sort(CLI::App& run) {
  auto a = std::make_shared<SortArgs>();
  auto* cmd = run.add_subcommand(
      "sort",
      "radix sort of 32-bit keys: sample splitters, alltoallv by put_signal, local radix "
      "passes (LSD, or a top-digit pass into cache-sized buckets)");
  cmd->add_option("--keys", a->keys,
                  "keys to sort over the whole job; K, M, G = 2^10, 2^20, 2^30 (paper: 4M)");
  cmd->add_option("--dist", a->dist, "uniform | npb | equal | sorted | reverse | high");
  cmd->add_option("--iters", a->iters,
                  "sorts of the same keys (the median reported, the best beside it)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--digit-bits", a->digit_bits, "bits per local pass: 8 (4 passes) or 11 (3)")
      ->check(CLI::IsMember({8, 11}));
  cmd->add_option("--stores", a->stores,
                  "scatter stores: auto (streaming past the last-level cache; between it and the "
                  "level below, the first sort times both) | cached | streaming | direct (no "
                  "write-combining buffers)")
      ->check(CLI::IsMember({"auto", "cached", "streaming", "direct"}));
  cmd->add_option("--method", a->method,
                  "local passes: auto (buckets when the keys exceed the caches below the last "
                  "level) | lsd (every pass over all keys) | buckets (one pass on the top digit "
                  "into buckets that fit a core's L2, each then sorted there)")
      ->check(CLI::IsMember({"auto", "lsd", "buckets"}));
  cmd->add_flag("--inject-fault", a->inject_fault,
                "corrupt one sorted key before verification (to see verification fail)")
      ->group("");
  add_run_flags(*cmd, a->run);
  return {cmd, [a] { return run_sort(*a); }};
}

}  // namespace

KernelSpec sort_kernel() {
  return {"sort", "mkeys_per_s", "copy", add_run_sort, sort_study_sizes, sort_weak_series};
}

}  // namespace compas::app
