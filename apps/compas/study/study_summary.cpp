// The head of compas study's report (study_summary.hpp).
#include "study_summary.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <vector>

#include "compas/base/memory.hpp"
#include "../ratio_interval.hpp"
#include "study_load.hpp"

namespace compas::app {

namespace {

using json = report::json;

std::string text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.is_null() ? "-" : v.dump();
}

std::string joined(const json& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + text(w);
  return out;
}

// One split of the machine's cores: the median of its runs' seconds per unit of work, and each
// run's.
struct Split {
  int procs = 0, threads = 0;
  double seconds = 0;
  std::vector<double> samples;
  double busy = 0;  // the most other processes took of the CPU time in one of its runs
};

std::vector<Split> splits_at(const json& rows, int cores) {
  std::vector<Split> out;
  for (const auto& r : rows) {
    if (r.value("oversubscribed", false) || r.value("seconds_per_unit", 0.0) <= 0) continue;
    const int p = r.value("procs", 0), t = r.value("threads", 0);
    if (p * t != cores) continue;
    Split s{p, t, r.value("seconds_per_unit", 0.0), {}, r.value("busy_share", 0.0)};
    const json samples = r.value("seconds_per_unit_samples", json::array());
    for (const auto& x : samples)
      if (x.is_number() && x.get<double>() > 0) s.samples.push_back(x.get<double>());
    if (s.samples.empty()) s.samples.push_back(s.seconds);
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(),
            [](const Split& a, const Split& b) { return a.seconds < b.seconds; });
  return out;
}

std::string split_name(const Split& s) {
  return fmt::format("{} x {}", s.procs, s.threads);
}

// The fastest split against the next, for the table and study.json.
json best_split(const std::vector<Split>& splits, std::string& cell, std::string& noise) {
  const Split& best = splits[0];
  json j = {{"procs", best.procs}, {"threads", best.threads}, {"seconds_per_unit", best.seconds}};
  if (splits.size() < 2) {
    cell = split_name(best) + " (the only split measured)";
    noise = "-";
    return j;
  }
  const Split& next = splits[1];
  const double by = next.seconds / best.seconds;
  const RatioInterval r = ratio_interval(best.samples, next.samples, 0.9);
  j["next"] = {
      {"procs", next.procs}, {"threads", next.threads}, {"seconds_per_unit", next.seconds}};
  j["faster_by"] = by;
  cell = fmt::format("{}, {:.2f}x faster than {}", split_name(best), by, split_name(next));
  const double busy = std::max(best.busy, next.busy);
  j["busy_share"] = busy;
  if (r.bounded) {
    j["interval"] = {r.lo, r.hi};
    j["beyond_noise"] = r.lo > 1;
    noise = fmt::format("{} (90% interval of the ratio {:.2f} - {:.2f})", r.lo > 1 ? "yes" : "no",
                        r.lo, r.hi);
    if (busy >= kBusyShare)
      noise += fmt::format(
          "; **busy machine**: other processes used up to {:.0f}% of the CPU time during these "
          "runs",
          100 * busy);
  } else {
    j["beyond_noise"] = nullptr;
    noise = fmt::format("not tested ({} and {} runs; 3 each needed)", best.samples.size(),
                        next.samples.size());
  }
  return j;
}

}  // namespace

std::string run_metadata_md(const json& run, const StudyArgs& a) {
  std::string md = "## Run\n\n";
  const auto line = [&md](const std::string& what, const std::string& value) {
    md += "- " + what + ": " + value + "\n";
  };
  line("date (UTC)", text(run.value("date", json())));
  line("compas", text(run.value("compas_version", json())) + ", commit " +
                     text(run.value("git_commit", json())));
  line("command line", "`" + joined(run.value("command_line", json::array())) + "`");
  const json b = run.value("build", json::object());
  line("build", text(b.value("type", json())) + ", " + text(b.value("compiler", json())) +
                    ", flags `" + text(b.value("flags", json())) + "`");
  std::string libs;
  const json l = run.value("libraries", json::object());
  for (auto it = l.begin(); it != l.end(); ++it)
    libs += (libs.empty() ? "" : ", ") + it.key() + " " + text(it.value());
  line("libraries", libs);
  line("memory", base::bytes_text(run.value("memory_bytes", std::uint64_t{0})));
  const json f = run.value("cpu_frequency", json::object());
  line("CPU frequency", "governor " + text(f.value("governor", json())) + ", driver " +
                            text(f.value("driver", json())) + ", boost " +
                            text(f.value("boost", json())));
  line("virtual machine", run.value("virtual_machine", false)
                              ? "yes (" + text(run.value("hypervisor", json())) + ")"
                              : "no");
  line("budget", fmt::format("{:g} minutes, {} run{} of every kernel point", a.budget,
                             study_repeats(a), study_repeats(a) == 1 ? "" : "s"));
  return md + "\n";
}

std::string summary_md(json& study, int cores) {
  json summary = json::array();
  std::string md = fmt::format(
      "## Summary\n\nPer kernel size: the verdict, and which split P x T of the machine's {} "
      "cores is fastest, by how much over the next fastest, and whether that is beyond the "
      "noise (the 90% Mann-Whitney interval of the ratio of their runs' times per unit of work "
      "excludes 1).\n\n"
      "| kernel size | fastest split at {} cores | beyond the noise | verdict "
      "|\n|---|---|---|---|\n",
      cores, cores);
  const json kernels = study.value("kernels", json::object());
  for (auto it = kernels.begin(); it != kernels.end(); ++it) {
    const std::string verdict = it.value().value("verdict", std::string("-"));
    const auto splits = splits_at(it.value().value("rows", json::array()), cores);
    std::string cell = fmt::format("no split of {} cores measured", cores), noise = "-";
    json entry = {{"kernel_size", it.key()}, {"verdict", verdict}, {"cores", cores}};
    entry["fastest"] = splits.empty() ? json(nullptr) : best_split(splits, cell, noise);
    summary.push_back(entry);
    md += fmt::format("| {} | {} | {} | {} |\n", it.key(), cell, noise, verdict);
  }
  study["summary"] = summary;
  return md + "\n";
}

}  // namespace compas::app
