// compas study's report (study_report.hpp).
#include "study_report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compas/perf/report.hpp"
#include "study_models.hpp"

namespace compas::app {

namespace {

namespace fs = std::filesystem;
using json = perf::json;

// ---- the report
// ----------------------------------------------------------------------------------

std::optional<json> load(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  try {
    return json::parse(in);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string f2(double v) {
  return fmt::format("{:.2f}", v);
}

struct KernelRow {
  const Step* step;
  json rec;
};

// `text` in a fenced code block, its fence longer than any run of backticks in it.
std::string code_block(const std::string& text) {
  std::size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  return fence + "\n" + text + (text.empty() || text.back() != '\n' ? "\n" : "") + fence + "\n";
}

std::string failed_run_entry(const std::string& title, const std::string& reason,
                             const std::string& log, const std::string& tail) {
  return fmt::format("### {}\n\n{}; log: `{}`\n\n{}\n", title, reason, log,
                     code_block(tail.empty() ? "(the log is empty)" : tail));
}

// The runs that did not finish (their failure records) and those that failed verification.
std::string failed_runs_section(const fs::path& dir, const std::vector<Step>& plan,
                                const RunBook& book) {
  std::string md;
  for (const auto& s : plan) {
    const std::string log = "logs/" + s.id + ".log";
    if (const auto f = book.failed.find(s.id); f != book.failed.end()) {
      md += failed_run_entry(s.title, f->second.value("reason", std::string()),
                             f->second.value("log", log), f->second.value("log_tail", ""));
    } else if (const auto d = book.done.find(s.id);
               d != book.done.end() && d->second.value("exit", 0) != 0) {
      md += failed_run_entry(
          s.title, fmt::format("verification failed (exit {})", d->second.value("exit", 0)), log,
          log_tail(log_path(dir, s.id)));
    }
  }
  return md.empty() ? md : "## Failed runs\n\n" + md;
}

// Each repetition's seconds of a kernel timed several times (GEMM, sort), else none.
std::vector<double> repetitions_of(const json& r) {
  for (const char* k : {"iter_seconds", "iteration_seconds"})
    if (r.contains(k) && r[k].is_array() && r[k].size() > 1) {
      std::vector<double> v;
      for (const auto& x : r[k])
        if (x.is_number()) v.push_back(x.get<double>());
      return v;
    }
  return {};
}

// "laplace n=640" -> "laplace_n640"
std::string file_name_of(const std::string& kernel_size) {
  std::string out;
  for (char c : kernel_size)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += c;
    else if (c == ' ')
      out += '_';
  return out;
}

// The measurements in Extra-P's text format, one file per kernel size in extrap/, and a line in
// the report saying where.
void write_extrap_files(const fs::path& dir, const std::map<std::string, std::string>& files,
                        std::ostringstream& md) {
  if (files.empty()) return;
  fs::create_directories(dir / "extrap");
  for (const auto& [name, text] : files)
    perf::write_file_atomic((dir / "extrap" / (name + ".txt")).string(), text);
  md << "\nThe kernels' times are in `extrap/` in Extra-P's text format (parameters processes "
        "and threads, metric time), one file per kernel size, to model them there.\n";
}

}  // namespace

int count_in(const std::vector<Step>& plan, const std::map<std::string, json>& runs) {
  return static_cast<int>(
      std::count_if(plan.begin(), plan.end(), [&](const Step& s) { return runs.count(s.id) > 0; }));
}

void write_report(const StudyArgs& a, const std::vector<Step>& plan, const RunBook& book,
                  bool complete) {
  const fs::path dir = a.out;
  const auto& runs = book.done;
  std::ostringstream md;
  json study = {
      {"command", "study"},
      {"version", perf::version()},
      {"machine", json::object()},
      {"params", {{"complete", complete}, {"budget_minutes", a.budget}, {"grid", a.grid}}},
      {"results", json::array()},
      {"kernels", json::object()}};
  md << "# compas study\n\n";
  md << (complete ? "All planned runs finished.\n\n"
                  : "**Partial report**: the study was stopped or some runs failed; rerun "
                    "`compas study` with the same --out to finish it.\n\n");
  const int failed = count_in(plan, book.failed);
  md << fmt::format(
      "{} of {} runs finished{}. Raw JSON in `raw/`, logs in `logs/`, the run list in "
      "`runs.jsonl`.\n\n",
      count_in(plan, runs), plan.size(),
      failed ? fmt::format("; {} failed (see Failed runs)", failed) : "");

  auto raw = [&](const std::string& id) -> std::optional<json> {
    if (!runs.count(id)) return std::nullopt;
    return load(dir / "raw" / (id + ".json"));
  };

  // Machine.
  if (auto t = raw("topology")) {
    const json& m = (*t)["machine"];
    study["machine"] = m;
    md << "## Machine\n\n";
    for (const auto& key : {"cpu_model", "packages", "numa_nodes", "cores", "pus", "compiler"})
      if (m.contains(key)) md << "- " << key << ": " << m[key].dump() << "\n";
    if (m.contains("caches"))
      for (const auto& c : m["caches"])
        md << fmt::format("- L{} {}: {} KiB\n", c.value("level", 0), c.value("type", ""),
                          c.value("size_bytes", 0ull) / 1024);
    md << "\n";
  }

  // Memory bandwidth.
  double saturation_gbs = 0;
  if (auto m = raw("membw")) {
    md << "## Memory bandwidth (COMPaS Tables 1-2)\n\n| kernel | threads | total GB/s | per "
          "thread GB/s |\n|---|---|---|---|\n";
    for (const auto& r : (*m)["results"]) {
      if (!r.contains("threads") || !r["threads"].is_number()) continue;
      md << fmt::format("| {} | {} | {} | {} |\n", r.value("kernel", ""), r.value("threads", 0),
                        f2(r.value("bandwidth_gbs", 0.0)), f2(r.value("per_thread_gbs", 0.0)));
      if (r.value("kernel", "") == "triad")
        saturation_gbs = std::max(saturation_gbs, r.value("bandwidth_gbs", 0.0));
    }
    md << "\n";
    for (const auto& r : (*m)["results"]) {
      if (!r.contains("saturated")) continue;
      if (r.value("saturated", false))
        md << fmt::format(
            "- {}: the bus saturates after {} thread(s) (total grows < 10% beyond); "
            "peak {} GB/s\n",
            r.value("kernel", ""), r["saturation_threads"].dump(),
            f2(r.value("peak_bandwidth_gbs", 0.0)));
      else
        md << fmt::format("- {}: no saturation up to {} threads (peak {} GB/s at {})\n",
                          r.value("kernel", ""), r.value("max_threads", 0),
                          f2(r.value("peak_bandwidth_gbs", 0.0)), r.value("peak_threads", 0));
    }
    md << "\nCOMPaS 1998 (Pentium Pro, 4 CPUs on one bus): read 203.5, write 97.9, copy 70.5 "
          "MB/s; bcopy total 71.3 / 74.1 / 74.3 / 74.2 MB/s for 1-4 threads (each thread gets "
          "1/T of the bus).\n\n";
    study["params"]["triad_saturation_gbs"] = saturation_gbs;
  }

  // Cache.
  if (auto c = raw("cache")) {
    md << "## Cache working sets (COMPaS Fig. 12)\n\n";
    bool knees = false;
    for (const auto& r : (*c)["results"])
      if (r.value("pattern", "") == "knee") {
        if (!knees)
          md << "| knee between | ns before | ns after | hwloc cache |\n|---|---|---|---|\n";
        knees = true;
        const std::string cache = r.value("cache", std::string());
        md << fmt::format(
            "| {} - {} KiB | {} | {} | {} |\n", r.value("plateau_end_bytes", 0ull) / 1024,
            r.value("plateau_start_bytes", 0ull) / 1024, f2(r.value("ns_before", 0.0)),
            f2(r.value("ns_after", 0.0)),
            cache.empty() ? std::string("none near (TLB reach or a shared level?)")
                          : fmt::format("{} ({} KiB)", cache, r.value("cache_bytes", 0ull) / 1024));
      }
    if (!knees) md << "No knee found in the range measured.\n";
    md << "\n| working set KiB | ns per dependent load | ns per streamed load |\n|---|---|---|\n";
    std::map<unsigned long long, std::pair<double, double>> curve;
    for (const auto& r : (*c)["results"]) {
      const std::string pat = r.value("pattern", "");
      if (pat != "chase" && pat != "stream") continue;
      auto& cell = curve[r.value("size_bytes", 0ull)];
      (pat == "chase" ? cell.first : cell.second) = r.value("ns_per_load", 0.0);
    }
    for (const auto& [bytes, ns] : curve)
      md << fmt::format("| {} | {} | {} |\n", bytes / 1024, f2(ns.first), f2(ns.second));
    md << "\nCOMPaS 1998 read the Pentium Pro's counters for its Fig. 12; compas times the loads "
          "(and counts them with PAPI where the machine has counters).\n\n";
  }

  // Barriers.
  if (auto b = raw("barrier_threads")) {
    std::map<std::string, std::map<int, double>> cells;
    std::set<int> ts;
    for (const auto& r : (*b)["results"]) {
      cells[r.value("algorithm", "") + " / " + r.value("policy", "")][r.value("threads", 0)] =
          r.value("ns_per_barrier", 0.0);
      ts.insert(r.value("threads", 0));
    }
    md << "## Thread barrier (COMPaS Table 3), ns per barrier\n\n| algorithm / policy |";
    for (int t : ts) md << " T=" << t << " |";
    md << "\n|---|";
    for (std::size_t i = 0; i < ts.size(); ++i) md << "---|";
    md << "\n";
    for (const auto& [row, byt] : cells) {
      md << "| " << row << " |";
      for (int t : ts) md << (byt.count(t) ? fmt::format(" {:.0f} |", byt.at(t)) : " - |");
      md << "\n";
    }
    md << "\nCOMPaS 1998 spin barrier: 1222 / 1761 / 1960 ns for 2 / 3 / 4 threads; Solaris "
          "mutexes about 180 us for 4.\n\n";
  }
  bool any_p = false;
  for (int p : {2, 4})
    if (auto b = raw("barrier_p" + std::to_string(p))) {
      if (!any_p)
        md << "## Process barrier (COMPaS Tables 4-5)\n\n| processes | algorithm | ns "
              "|\n|---|---|---|\n";
      any_p = true;
      for (const auto& r : (*b)["results"])
        md << fmt::format("| {} | {}{} | {:.0f} |\n", r.value("processes", 0),
                          r.value("algorithm", ""), r.value("chosen", false) ? " (chosen)" : "",
                          r.value("ns_per_barrier", 0.0));
    }
  if (any_p)
    md << "\nCOMPaS 1998: NICAM on Myrinet 23.79 / 31.45 / 38.67 us for 2 / 4 / 8 nodes; MPICH on "
          "100Base-T 493 / 1066 / 1645 us.\n\n";

  if (auto pp = raw("pingpong")) {
    md << "## Put latency and bandwidth (COMPaS Fig. 2)\n\n| op | bytes | one-way us | MB/s "
          "|\n|---|---|---|---|\n";
    for (const auto& r : (*pp)["results"])
      md << fmt::format("| {} | {} | {:.3f} | {:.1f} |\n", r.value("op", ""),
                        r.value("bytes", 0ull), r.value("latency_us", 0.0),
                        r.value("bandwidth_mbs", 0.0));
    md << "\nCOMPaS 1998 (NICAM, Myrinet): about 16 us minimum latency, 82.5 MB/s peak.\n\n";
  }

  // Kernels.
  std::map<std::string, std::vector<KernelRow>> by_kernel_size;
  std::map<std::string, std::string> extrap_files;  // file name -> Extra-P text
  std::ostringstream csv;
  csv << "kernel,size,procs,threads,oversubscribed,seconds,speedup,efficiency,rate_field,rate,"
         "compute_s,communicate_s,synchronize_s,cpu_seconds,verified\n";
  for (const auto& s : plan) {
    if (s.kind != "kernel") continue;
    auto r = raw(s.id);
    if (!r || (*r)["results"].empty()) continue;
    by_kernel_size[s.kernel + " " + s.size].push_back({&s, (*r)["results"][0]});
  }
  for (const auto& [name, rows] : by_kernel_size) {
    md << "## " << name << "\n\n";
    // Kernels timed over several repetitions (GEMM, sort) report each one's time: the table
    // uses the median, and region and CPU times per repetition.
    auto reps_of = [](const json& r) -> double {
      for (const char* k : {"iter_seconds", "iteration_seconds"})
        if (r.contains(k) && r[k].is_array() && !r[k].empty())
          return static_cast<double>(r[k].size());
      return 1.0;
    };
    auto seconds_of = [](const json& r) {
      return r.value("median_seconds", r.value("seconds", 0.0));
    };
    double base = 0;
    for (const auto& kr : rows)
      if (kr.step->procs == 1 && kr.step->threads == 1) base = seconds_of(kr.rec);
    const std::string rate_name = rate_field(rows.front().step->kernel);
    md << "| P x T | seconds | speedup | efficiency | " << rate_name
       << " | compute s | communicate s | "
          "synchronize s | CPU / wall | verified |\n|---|---|---|---|---|---|---|---|---|---|\n";
    bool repeated = false;
    for (const auto& kr : rows) repeated = repeated || reps_of(kr.rec) > 1;
    std::vector<std::pair<double, double>> points;
    std::vector<ScalingPoint> scaling;
    json jrows = json::array();
    bool superlinear = false;
    double best_gbs = 0, best_rate = 0;
    std::vector<std::pair<int, double>> comm_share;
    for (const auto& kr : rows) {
      const json& r = kr.rec;
      const double sec = seconds_of(r);
      const double reps = reps_of(r);
      // The kernel's rate and byte model refer to its own "seconds" (the best, for sort).
      const double scale = sec > 0 ? r.value("seconds", 0.0) / sec : 0.0;
      const int n = kr.step->procs * kr.step->threads;
      const double speedup = base > 0 && sec > 0 ? base / sec : 0;
      const double eff = n > 0 ? speedup / n : 0;
      // Mean over threads (per thread, the three regions add up to its time in the kernel).
      auto region = [&](const char* reg) {
        if (!r.contains("regions") || !r["regions"].contains(reg)) return 0.0;
        const json& g = r["regions"][reg];
        return g.value("mean_seconds", g.value("max_seconds", 0.0)) / reps;
      };
      const double comp = region("compute"), com = region("communicate"),
                   syn = region("synchronize");
      const double cpu = r.value("cpu_seconds", 0.0) / reps;
      const double rate = r.value(rate_name, 0.0) * scale;
      md << fmt::format(
          "| {} x {}{} | {:.4f} | {} | {} | {:.1f} | {:.4f} | {:.4f} | {:.4f} | {} | "
          "{} |\n",
          kr.step->procs, kr.step->threads, kr.step->oversubscribed ? " (over)" : "", sec,
          f2(speedup), f2(eff), rate, comp, com, syn, sec > 0 ? f2(cpu / sec) : "-",
          r.value("verified", false) ? "yes" : "NO");
      if (!kr.step->oversubscribed && n > 1 && speedup > 0) points.push_back({n, speedup});
      scaling.push_back(
          {kr.step->procs, kr.step->threads, kr.step->oversubscribed, sec, repetitions_of(r)});
      if (!kr.step->oversubscribed && eff > 1.05 && n > 1) superlinear = true;
      best_gbs = std::max(best_gbs, r.value("model_gbs", 0.0) * scale);
      if (!kr.step->oversubscribed) best_rate = std::max(best_rate, rate);
      const double total = comp + com + syn;
      if (kr.step->procs > 1 && total > 0) comm_share.push_back({kr.step->procs, com / total});
      study["results"].push_back({{"kernel_size", name},
                                  {"procs", kr.step->procs},
                                  {"threads", kr.step->threads},
                                  {"oversubscribed", kr.step->oversubscribed},
                                  {"seconds", sec},
                                  {"speedup", speedup},
                                  {"efficiency", eff}});
      csv << fmt::format(
          "{},{},{},{},{},{:.6g},{:.6g},{:.6g},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{}\n",
          kr.step->kernel, kr.step->size, kr.step->procs, kr.step->threads,
          kr.step->oversubscribed ? 1 : 0, sec, speedup, eff, rate_name, rate, comp, com, syn, cpu,
          r.value("verified", false) ? 1 : 0);
      jrows.push_back({{"procs", kr.step->procs},
                       {"threads", kr.step->threads},
                       {"oversubscribed", kr.step->oversubscribed},
                       {"seconds", sec},
                       {"speedup", speedup},
                       {"efficiency", eff},
                       {"rate", rate},
                       {"cpu_seconds", cpu},
                       {"verified", r.value("verified", false)}});
    }
    md << "\nRegion times are means over threads";
    if (repeated)
      md << "; seconds is the median of the repetitions, region and CPU times are per repetition";
    md << ". CPU / wall: CPU time of all processes over wallclock.\n";
    const auto summary = scaling_summary(points, scaling);
    md << summary.markdown;
    if (const auto text = extrap_export(name, scaling); !text.empty())
      extrap_files[file_name_of(name)] = text;
    std::sort(comm_share.begin(), comm_share.end());
    const bool comm_grows = comm_share.size() >= 2 && comm_share.back().second > 0.2 &&
                            comm_share.back().second > comm_share.front().second;
    std::string verdict;
    if (saturation_gbs > 0 && best_gbs > 1.2 * saturation_gbs)
      verdict = fmt::format(
          "cache-resident: {:.1f} GB/s by the kernel's byte model is {:.0f}% of the triad "
          "saturation bandwidth {:.1f} GB/s, more than memory delivers: its working set is "
          "served from cache",
          best_gbs, 100 * best_gbs / saturation_gbs, saturation_gbs);
    else if (saturation_gbs > 0 && best_gbs >= 0.8 * saturation_gbs)
      verdict = fmt::format(
          "memory-bound: {:.1f} GB/s by the kernel's byte model is {:.0f}% of "
          "the triad saturation bandwidth {:.1f} GB/s",
          best_gbs, 100 * best_gbs / saturation_gbs, saturation_gbs);
    else if (superlinear)
      verdict =
          "cache-resident: parallel efficiency above 1 (the per-thread share fits in cache, "
          "as COMPaS Figs. 7 and 11)";
    else if (comm_grows)
      verdict = fmt::format("communication-bound: the communicate share reaches {:.0f}% at P={}",
                            100 * comm_share.back().second, comm_share.back().first);
    else if (best_gbs > 0)
      verdict = fmt::format(
          "compute-bound: {:.1f} GB/s is {:.0f}% of the triad saturation "
          "bandwidth, efficiency stays at or below 1, communication stays small",
          best_gbs, saturation_gbs > 0 ? 100 * best_gbs / saturation_gbs : 0.0);
    else
      verdict = fmt::format(
          "compute-bound: up to {:.1f} {} with no memory-traffic model to compare, efficiency "
          "stays at or below 1, communication stays small",
          best_rate, rate_name);
    md << "\nVerdict: " << verdict << ".\n\n";
    study["kernels"][name] = {{"rows", jrows}, {"rate_field", rate_name}, {"verdict", verdict}};
    study["kernels"][name].update(summary.json);
  }
  if (by_kernel_size.count("laplace n=640") || by_kernel_size.count("laplace n=4096"))
    md << "COMPaS 1998, Laplace n=640 on 4 nodes x 4 threads: see the paper's Figs. 5-6 (speedup "
          "against total threads per node count), for comparison of the curves' shapes.\n";

  for (const auto& [name, rows] : by_kernel_size)
    if (name.rfind("gemm ", 0) == 0) {
      md << "COMPaS 1998, GEMM n=1800 (Table 6, hybrid, Myrinet): efficiency 1.00 / 0.99 / 0.97 "
            "on 1 node with 1 / 2 / 4 threads, 0.94 / 0.89 / 0.80 on 8 nodes; on 8 nodes the "
            "local multiply took 17.09 / 8.59 / 4.46 s and the communication 0.83 s whatever "
            "the thread count.\n";
      break;
    }
  if (by_kernel_size.count("cg class=T"))
    md << "COMPaS 1998, CG class T (about 1 MB) against a larger class: Fig. 11 shows the small "
          "problem's superlinear speedup once each thread's share fits in cache.\n";

  if (const std::string section = failed_runs_section(dir, plan, book); !section.empty())
    md << "\n" << section;
  write_extrap_files(dir, extrap_files, md);
  perf::write_file_atomic((dir / "report.md").string(), md.str());
  perf::write_file_atomic((dir / "study.json").string(), study.dump(2) + "\n");
  perf::write_file_atomic((dir / "study.csv").string(), csv.str());
}

}  // namespace compas::app
