// compas study: the main job (DESIGN.md, "The main job"). Characterizes the machine (topology,
// memory bandwidth, cache, thread and process barriers, put latency and bandwidth), then runs the
// kernels over a processes x threads grid, and writes a report directory:
//   runs.jsonl      one line per finished run, appended (and synced) the moment it finishes
//   raw/ID.json     every run's own JSON report;  logs/ID.log  its output
//   report.md       tables, speedups, Amdahl fits, verdicts, the paper's figures beside ours
//   study.json      the numbers behind report.md; study.csv: the kernel tables, one row per run;
//   plots/*.png when matplotlib is present
// Every run is a child process: this program itself, or compas-run / the user's launcher around
// it, supervised by study_child.cpp (a timeout per run; nothing outlives the study). A run that
// fails is recorded as failed and the sweep goes on; a rerun skips the runs runs.jsonl holds as
// finished (study_runs.cpp) and tries the failed ones again (--fresh starts over). Ctrl-C stops
// the running child and the sweep (a second Ctrl-C kills the child at once), and leaves a report
// of what finished.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "compas/perf/report.hpp"
#include "compas/perf/scaling.hpp"
#include "compas/threads/topology.hpp"
#include "plot.hpp"
#include "study_child.hpp"
#include "study_models.hpp"
#include "study_runs.hpp"

namespace compas::app {

namespace {

namespace fs = std::filesystem;
using json = perf::json;
using Clock = std::chrono::steady_clock;

struct StudyArgs {
  std::string out = "compas-study";
  std::string kernels = "laplace,gemm,cg,sort";
  std::string grid = "auto";
  std::string launcher;
  double budget = 10;        // minutes
  double run_timeout_s = 0;  // 0: derived from each run's estimate
  bool oversubscribe = false;
  bool fresh = false;
  bool dry_run = false;
  bool quiet = false;
};

struct Step {
  Step() = default;
  Step(std::string i, std::string t, std::string k, std::vector<std::string> a, double e)
      : id(std::move(i)),
        title(std::move(t)),
        kind(std::move(k)),
        argv(std::move(a)),
        estimate_s(e) {}
  std::string id;     // file-name safe, unique
  std::string title;  // for progress and the report
  std::string kind;   // "characterize" or "kernel"
  std::vector<std::string> argv;
  double estimate_s = 1;
  double timeout_s = 0;
  // kernel runs
  std::string kernel;
  int procs = 1, threads = 1;
  bool oversubscribed = false;
  std::string size;  // e.g. "n=640"
};

std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot find this program's path in /proc/self/exe");
  return std::string(buf, static_cast<std::size_t>(n));
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// ---- the plan --------------------------------------------------------------------------------

struct Shape {
  int p = 1, t = 1;
  bool over = false;
};

std::vector<Shape> parse_grid(const std::string& grid, int cores) {
  std::vector<Shape> shapes;
  if (grid == "auto") {
    for (int p = 1; p <= cores; ++p)
      for (int t = 1; p * t <= cores; ++t) shapes.push_back({p, t, false});
    shapes.push_back({2, cores, true});  // one oversubscribed point: 2 x cores threads
    return shapes;
  }
  for (const auto& item : split_list(grid, ',')) {
    const auto x = item.find('x');
    int p = 0, t = 0;
    try {
      if (x == std::string::npos) throw std::invalid_argument("");
      std::size_t a = 0, b = 0;
      p = std::stoi(item.substr(0, x), &a);
      t = std::stoi(item.substr(x + 1), &b);
      if (a != x || b != item.size() - x - 1) throw std::invalid_argument("");
    } catch (const std::exception&) {
      throw std::invalid_argument("--grid '" + grid + "': '" + item +
                                  "' is not PxT (e.g. 1x1,1x2,2x1): allowed is auto or a list of "
                                  "PxT with P, T >= 1");
    }
    if (p < 1 || t < 1 || p > 1024 || t > 1024)
      throw std::invalid_argument("--grid '" + grid + "': '" + item + "' needs 1 <= P, T <= 1024");
    shapes.push_back({p, t, p * t > cores});
  }
  if (shapes.empty()) throw std::invalid_argument("--grid is empty: auto or a list of PxT");
  return shapes;
}

// The kernels a study can sweep, and the record field holding each one's rate.
const std::vector<std::pair<std::string, std::string>>& study_kernels() {
  static const std::vector<std::pair<std::string, std::string>> k = {
      {"laplace", "mlups"}, {"gemm", "gflops"}, {"cg", "mops"}, {"sort", "mkeys_per_s"}};
  return k;
}

std::string study_kernel_names() {
  std::string names;
  for (const auto& [k, rate] : study_kernels()) names += (names.empty() ? "" : ", ") + k;
  return names;
}

std::string rate_field(const std::string& kernel) {
  for (const auto& [k, rate] : study_kernels())
    if (k == kernel) return rate;
  return "seconds";
}

std::vector<std::string> kernel_list(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& k : split_list(text, ',')) {
    if (rate_field(k) == "seconds")
      throw std::invalid_argument("--kernels: '" + k + "' is not a kernel compas study runs: " +
                                  "allowed are " + study_kernel_names());
    out.push_back(k);
  }
  if (out.empty())
    throw std::invalid_argument("--kernels is empty: allowed are " + study_kernel_names());
  return out;
}

void check_launcher(const std::string& launcher) {
  if (launcher.empty()) return;
  if (launcher.find("{P}") == std::string::npos)
    throw std::invalid_argument("--launcher '" + launcher +
                                "' has no {P}: the template must place the process count, e.g. "
                                "\"mpirun -n {P}\" or \"srun -n {P} -c {T}\"");
}

int host_cores(const threads::Topology& topo) {
  return std::max(1, topo.cores());
}

// Under a cluster launcher a P x T beyond this host's cores would oversubscribe nodes like this
// one, and its times would measure the oversubscription: such points run only when asked for.
// Here (compas-run) the one oversubscribed point of an auto grid is part of the study.
bool leaves_out(const StudyArgs& a, const Shape& sh) {
  return sh.over && !a.launcher.empty() && !a.oversubscribe;
}

// The grid points the plan leaves out, each with why.
std::vector<std::string> left_out_points(const StudyArgs& a, int cores) {
  std::vector<std::string> lines;
  for (const auto& sh : parse_grid(a.grid, cores))
    if (leaves_out(a, sh))
      lines.push_back(fmt::format(
          "left out {} x {}: P x T = {} is more than the {} cores of this host (oversubscribed; "
          "--oversubscribe runs it under --launcher)",
          sh.p, sh.t, sh.p * sh.t, cores));
  return lines;
}

// A run far beyond its estimate is stuck: by default it gets 20 times the estimate, 2 minutes
// at least.
double run_timeout(const StudyArgs& a, double estimate_s) {
  return a.run_timeout_s > 0 ? a.run_timeout_s : std::max(120.0, std::ceil(20 * estimate_s));
}

// The command that runs `args` (a compas subcommand) on a P x T job.
std::vector<std::string> job_argv(const StudyArgs& a, const std::string& compas,
                                  const std::string& compas_run, int p, int t,
                                  const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  if (a.launcher.empty()) {
    argv = {compas_run, "-n", std::to_string(p), "-t", std::to_string(t)};
  } else {
    argv = split_words(
        replace_all(replace_all(a.launcher, "{P}", std::to_string(p)), "{T}", std::to_string(t)));
  }
  argv.push_back(compas);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::vector<Step> make_plan(const StudyArgs& a, const threads::Topology& topo) {
  const int cores = host_cores(topo);
  const auto shapes = parse_grid(a.grid, cores);
  const auto kernels = kernel_list(a.kernels);
  const std::string compas = self_exe();
  const std::string compas_run = (fs::path(compas).parent_path() / "compas-run").string();
  const double scale = std::clamp(a.budget / 10.0, 0.02, 100.0);  // 1.0 = the default 10 minutes
  std::vector<Step> plan;
  auto raw = [&](const std::string& id) {
    return (fs::path(a.out) / "raw" / (id + ".json")).string();
  };
  auto add = [&](Step s) { plan.push_back(std::move(s)); };
  const std::string threads_all = "1-" + std::to_string(cores);
  const std::string membw_size = scale >= 1 ? "512MiB" : scale >= 0.3 ? "128MiB" : "16MiB";
  const std::string cache_max = scale >= 1 ? "256MiB" : scale >= 0.3 ? "64MiB" : "4MiB";
  const std::string repeats = scale >= 1 ? "5" : "2";
  add({"topology",
       "topology",
       "characterize",
       {compas, "topology", "--quiet", "--json", raw("topology")},
       1});
  add({"membw",
       "memory bandwidth vs threads",
       "characterize",
       {compas, "membw", "--threads", threads_all, "--size", membw_size, "--repeats", repeats,
        "--quiet", "--json", raw("membw")},
       40 * scale});
  add({"cache",
       "cache working-set curve",
       "characterize",
       {compas, "cache", "--max", cache_max, "--repeats", repeats, "--quiet", "--json",
        raw("cache")},
       40 * scale});
  add({"barrier_threads",
       "thread barriers",
       "characterize",
       {compas, "barrier", "--threads", threads_all, "--repeats", repeats, "--target-ms",
        scale >= 1 ? "10" : "2", "--quiet", "--json", raw("barrier_threads")},
       30 * scale});
  for (int p : {2, 4}) {
    if (p > 2 && p > cores) continue;
    Step s{"barrier_p" + std::to_string(p), "process barrier, P=" + std::to_string(p),
           "characterize",
           job_argv(a, compas, compas_run, p, 1,
                    {"barrier", "--repeats", repeats, "--target-ms", scale >= 1 ? "10" : "2",
                     "--quiet", "--json", raw("barrier_p" + std::to_string(p))}),
           5 * scale + 1};
    add(s);
  }
  add({"pingpong", "put latency and bandwidth", "characterize",
       job_argv(a, compas, compas_run, 2, 1,
                {"pingpong", "--max-size", scale >= 1 ? "16MiB" : "1MiB", "--repeats", repeats,
                 "--quiet", "--json", raw("pingpong")}),
       30 * scale + 2});
  for (const auto& k : kernels) {
    // Laplace: the paper's n = 640 (cache-resident here) and a field well beyond the caches.
    struct Size {
      std::string label;
      std::vector<std::string> args;
      double seconds_1x1;
    };
    std::vector<Size> sizes;
    if (k == "laplace") {
      const int iters = std::max(10, static_cast<int>(std::lround(2000 * scale)));
      const int big_iters = std::max(2, static_cast<int>(std::lround(20 * scale)));
      const std::string big = scale >= 0.3 ? "4096" : "1024";
      sizes.push_back({"n=640", {"--n", "640", "--iters", std::to_string(iters)}, iters * 0.4e-3});
      sizes.push_back(
          {"n=" + big, {"--n", big, "--iters", std::to_string(big_iters)}, big_iters * 0.03});
    } else if (k == "cg") {
      // COMPaS Fig. 11: the tiny class (about 1 MB, cache-resident) and one beyond the caches.
      sizes.push_back({"class=T", {"--class", "T"}, 0.1});
      if (scale >= 0.3)
        sizes.push_back({"class=A", {"--class", "A"}, 1.8});
      else
        sizes.push_back({"class=W", {"--class", "W"}, 0.4});
    } else if (k == "gemm") {
      // COMPaS Table 6 used n = 1800; a small size shows the per-panel overheads.
      const std::string big = scale >= 0.3 ? "1800" : "600";
      sizes.push_back({"n=256", {"--n", "256", "--iters", "3"}, 0.2});
      sizes.push_back({"n=" + big, {"--n", big, "--iters", "3"}, scale >= 0.3 ? 2.5 : 0.5});
    } else if (k == "sort") {
      // The paper's 4M keys (its buffers fit the caches of a node of the time), and 16x more.
      const std::string big = scale >= 0.3 ? "64M" : "8M";
      sizes.push_back({"keys=4M", {"--keys", "4M", "--iters", "3"}, 1.0});
      sizes.push_back({"keys=" + big, {"--keys", big, "--iters", "3"}, scale >= 0.3 ? 6.0 : 2.0});
    }
    for (const auto& sz : sizes)
      for (const auto& sh : shapes) {
        if (leaves_out(a, sh)) continue;
        Step s;
        s.id = k + "_" + replace_all(sz.label, "=", "") + "_p" + std::to_string(sh.p) + "t" +
               std::to_string(sh.t);
        s.title = fmt::format("{} {} on {} x {}{}", k, sz.label, sh.p, sh.t,
                              sh.over ? " (oversubscribed)" : "");
        s.kind = "kernel";
        std::vector<std::string> args = {"run", k};
        args.insert(args.end(), sz.args.begin(), sz.args.end());
        for (const auto& x : std::vector<std::string>{"--quiet", "--json", raw(s.id)})
          args.push_back(x);
        if (!a.launcher.empty()) {
          args.push_back("--threads");
          args.push_back(std::to_string(sh.t));
        }
        s.argv = job_argv(a, compas, compas_run, sh.p, sh.t, args);
        s.estimate_s = 0.5 + sz.seconds_1x1 / std::min(sh.p * sh.t, cores);
        s.kernel = k;
        s.procs = sh.p;
        s.threads = sh.t;
        s.oversubscribed = sh.over;
        s.size = sz.label;
        plan.push_back(std::move(s));
      }
  }
  for (auto& s : plan) s.timeout_s = run_timeout(a, s.estimate_s);
  return plan;
}

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

fs::path log_path(const fs::path& dir, const std::string& id) {
  return dir / "logs" / (id + ".log");
}

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

int count_in(const std::vector<Step>& plan, const std::map<std::string, json>& runs) {
  return static_cast<int>(
      std::count_if(plan.begin(), plan.end(), [&](const Step& s) { return runs.count(s.id) > 0; }));
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

// ---- the sweep -------------------------------------------------------------------------------

void print_plan(const StudyArgs& a, const std::vector<Step>& plan,
                const std::vector<std::string>& left_out) {
  double total = 0;
  for (const auto& s : plan) total += s.estimate_s;
  fmt::print("compas study plan: {} runs, about {:.0f} s, results in {}/\n", plan.size(), total,
             a.out);
  for (const auto& s : plan) {
    std::string cmd;
    for (const auto& w : s.argv) cmd += (cmd.empty() ? "" : " ") + w;
    fmt::print("  {:<36} ~{:>5.1f} s  {}\n", s.id, s.estimate_s, cmd);
  }
  fmt::print("Each run is stopped after {}.\n",
             a.run_timeout_s > 0 ? fmt::format("{:g} s (--run-timeout)", a.run_timeout_s)
                                 : std::string("20 times its estimate, 120 s at least"));
  for (const auto& line : left_out) fmt::print("{}\n", line);
}

// Makes --out, or readies it for another pass. Throws std::invalid_argument when it cannot be
// used.
void prepare_out_dir(const StudyArgs& a) {
  const fs::path dir = a.out;
  std::error_code ec;
  // --fresh deletes raw/ and logs/: only in a directory a study made (its marker, or the
  // runs.jsonl of a study from before the marker), never in one that merely has such folders.
  const fs::path marker = dir / ".compas-study";
  if (a.fresh && fs::is_directory(dir) && !fs::is_empty(dir, ec) && !fs::exists(marker) &&
      !fs::exists(dir / "runs.jsonl"))
    throw std::invalid_argument("--out '" + a.out +
                                "' is not a compas study directory (no .compas-study in it): "
                                "--fresh deletes files only in a study's own directory");
  if (a.fresh) {
    fs::remove(dir / "runs.jsonl", ec);
    fs::remove_all(dir / "raw", ec);
    fs::remove_all(dir / "logs", ec);
  }
  fs::create_directories(dir / "raw", ec);
  fs::create_directories(dir / "logs", ec);
  if (ec || !fs::is_directory(dir / "raw"))
    throw std::invalid_argument("--out '" + a.out + "' cannot be created as a directory");
  if (!fs::exists(marker)) std::ofstream(marker) << "compas study\n";
}

// The progress line on a terminal: which run, how far, about how long is left.
class Progress {
 public:
  Progress(const StudyArgs& a, const std::vector<Step>& plan, const RunBook& book)
      : tty_(::isatty(STDERR_FILENO) && !a.quiet), t0_(Clock::now()) {
    for (const auto& s : plan)
      if (!book.done.count(s.id)) ++todo_, left_s_ += s.estimate_s;
  }
  ~Progress() {
    if (tty_) fmt::print(stderr, "\n");
  }
  void starting(const Step& s) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0_).count();
    if (tty_)
      fmt::print(stderr, "\r\033[K[{}/{}] {}  (elapsed {:.0f} s, about {:.0f} s left)", ++started_,
                 todo_, s.title, elapsed, left_s_);
  }
  void ended(const Step& s) { left_s_ = std::max(0.0, left_s_ - s.estimate_s); }
  // What goes before a line of its own on stderr: the end of the progress line.
  const char* line_break() const { return tty_ ? "\n" : ""; }

 private:
  bool tty_;
  Clock::time_point t0_;
  int todo_ = 0, started_ = 0;
  double left_s_ = 0;
};

// Exit 1 from `compas run` with its JSON written is a verification failure: a finished run,
// reported as such.
bool finished(const fs::path& dir, const Step& s, const ChildOutcome& o) {
  const bool verification_failed = s.kind == "kernel" && o.started && !o.timed_out &&
                                   o.signal == 0 && o.exit_code == 1 &&
                                   fs::exists(dir / "raw" / (s.id + ".json"));
  return o.ok() || verification_failed;
}

json run_record(const Step& s, const ChildOutcome& o) {
  return {{"id", s.id},         {"title", s.title},     {"kind", s.kind},
          {"exit", o.status()}, {"seconds", o.seconds}, {"json", "raw/" + s.id + ".json"}};
}

json failure_record(const fs::path& dir, const Step& s, const ChildOutcome& o) {
  json rec = run_record(s, o);
  rec["failed"] = true;
  rec["reason"] = o.reason();
  rec["log"] = "logs/" + s.id + ".log";
  rec["log_tail"] = log_tail(log_path(dir, s.id));
  return rec;
}

ChildOutcome run_step(const fs::path& dir, const Step& s, ChildSupervisor& children) {
  // The "exit 1 with its JSON" rule must see this attempt's JSON, never one an earlier left.
  std::error_code ec;
  fs::remove(dir / "raw" / (s.id + ".json"), ec);
  return children.run(s.argv, log_path(dir, s.id), s.timeout_s);
}

void record_outcome(const StudyArgs& a, const Step& s, const ChildOutcome& o, RunBook& book,
                    const Progress& progress) {
  const fs::path dir = a.out;
  const bool ok = finished(dir, s, o);
  const json rec = ok ? run_record(s, o) : failure_record(dir, s, o);
  append_run(dir / "runs.jsonl", rec);
  book.record(rec);
  if (!ok && !a.quiet)
    fmt::print(stderr, "{}compas study: {} failed ({}); see {}\n", progress.line_break(), s.id,
               o.reason(), log_path(dir, s.id).string());
}

// Runs what is not done yet, in plan order. Returns true when a stop request ended it.
bool sweep(const StudyArgs& a, const std::vector<Step>& plan, RunBook& book,
           ChildSupervisor& children) {
  Progress progress(a, plan, book);
  for (const auto& s : plan) {
    if (book.done.count(s.id)) continue;
    if (children.stop_requests() > 0) return true;
    progress.starting(s);
    const ChildOutcome o = run_step(a.out, s, children);
    progress.ended(s);
    if (o.interrupted) return true;  // stopped on request: not a failure, run again next time
    record_outcome(a, s, o, book, progress);
  }
  return false;
}

// Plots: every raw report and the study summary, when matplotlib is there.
void make_plots(const StudyArgs& a, const std::vector<Step>& plan, const RunBook& book,
                ChildSupervisor& children, bool interrupted) {
  constexpr double kPlotTimeoutS = 300;
  const fs::path dir = a.out;
  std::vector<std::string> files;
  for (const auto& s : plan)
    if (book.done.count(s.id) && s.kind == "characterize")
      files.push_back((dir / "raw" / (s.id + ".json")).string());
  files.push_back((dir / "study.json").string());
  const std::string python = plot_python();
  if (python.empty() && !a.quiet)
    fmt::print(stderr,
               "compas study: no plots: python3 with matplotlib is needed (Debian: "
               "apt-get install python3-matplotlib)\n");
  if (python.empty() || interrupted) return;
  std::vector<std::string> argv = {python, plot_script_path()};
  argv.insert(argv.end(), files.begin(), files.end());
  argv.push_back("--out");
  argv.push_back((dir / "plots").string());
  const fs::path log = dir / "logs" / "plots.log";
  if (!children.run(argv, log, kPlotTimeoutS).ok() && !a.quiet)
    fmt::print(stderr, "compas study: no plots (see {}; plots need python3-matplotlib)\n",
               log.string());
}

// Whether every run of the plan finished and passed.
bool all_passed(const std::vector<Step>& plan, const RunBook& book) {
  return std::all_of(plan.begin(), plan.end(), [&](const Step& s) {
    const auto d = book.done.find(s.id);
    return d != book.done.end() && d->second.value("exit", 0) == 0;
  });
}

// The last lines: where the report is, how much of the plan is done, what failed. A study whose
// runs failed still wrote its report: it exits 0 and says so on stderr.
void print_summary(const StudyArgs& a, const std::vector<Step>& plan, const RunBook& book,
                   bool interrupted) {
  if (a.quiet) return;
  const int failed = count_in(plan, book.failed);
  fmt::print("compas study: {} in {}/report.md ({} of {} runs done{}{})\n",
             interrupted ? "stopped; partial report" : "report", a.out, count_in(plan, book.done),
             plan.size(), failed ? fmt::format("; {} failed", failed) : "",
             interrupted ? "; rerun to finish" : "");
  if (failed)
    fmt::print(stderr, "compas study: {} {} failed; see {}/report.md (a rerun tries {} again)\n",
               failed, failed == 1 ? "run" : "runs", a.out, failed == 1 ? "it" : "them");
}

int run_study(const StudyArgs& a) {
  check_launcher(a.launcher);
  if (!(a.budget > 0)) throw std::invalid_argument("--budget must be > 0 minutes");
  const auto topo = threads::Topology::host();
  const auto plan = make_plan(a, topo);
  const auto left_out = left_out_points(a, host_cores(topo));
  if (a.dry_run) {
    print_plan(a, plan, left_out);
    return 0;
  }
  prepare_out_dir(a);
  if (!a.quiet)
    for (const auto& line : left_out) fmt::print(stderr, "compas study: {}\n", line);
  RunBook book = read_runs(fs::path(a.out) / "runs.jsonl");
  ChildSupervisor children;
  const bool interrupted = sweep(a, plan, book, children);
  write_report(a, plan, book, !interrupted && all_passed(plan, book));
  make_plots(a, plan, book, children, interrupted);
  print_summary(a, plan, book, interrupted);
  return interrupted ? 130 : 0;
}

// --run-timeout: seconds, more than 0; at most 1e6 (11 days), which keeps the deadline
// arithmetic in range.
CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& v) {
        double s = 0;
        std::size_t used = 0;
        try {
          s = std::stod(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (v.empty() || used != v.size() || !(s > 0) || s > 1e6)
          return "'" + v + "' is not allowed: a number of seconds > 0 (at most 1000000)";
        return std::string();
      },
      "SECONDS>0", "positive seconds");
}

}  // namespace

Command setup_study(CLI::App& app) {
  auto a = std::make_shared<StudyArgs>();
  auto* cmd = app.add_subcommand(
      "study", "the main job: characterize this machine, run the kernels over P x T, report");
  cmd->add_option("--out", a->out, "report directory (default compas-study)");
  cmd->add_option("--kernels", a->kernels,
                  "kernels to sweep, comma-separated: " + study_kernel_names());
  cmd->add_option("--grid", a->grid,
                  "auto (every P x T <= cores, plus one oversubscribed point) or PxT,PxT,...; "
                  "under --launcher, points beyond this host's cores need --oversubscribe");
  cmd->add_option("--launcher", a->launcher,
                  "launcher template for a cluster, e.g. \"mpirun -n {P} --map-by ppr:1:node\" or "
                  "\"srun -n {P} -c {T}\" (default: compas-run on this host)");
  cmd->add_flag("--oversubscribe", a->oversubscribe,
                "with --launcher: also run grid points whose P x T exceeds this host's cores "
                "(left out by default)");
  cmd->add_option("--budget", a->budget, "minutes the study should take (scales sizes and repeats)")
      ->check(CLI::Range(0.1, 10000.0));
  cmd->add_option("--run-timeout", a->run_timeout_s,
                  "seconds a run may take; then it gets SIGTERM (SIGKILL 3 s later), is recorded "
                  "as failed and the sweep goes on (default: 20 times the run's estimate, 120 s "
                  "at least)")
      ->check(positive_seconds());
  cmd->add_flag("--fresh", a->fresh, "forget earlier runs in --out and start over");
  cmd->add_flag("--dry-run", a->dry_run, "print the plan and its estimated time, run nothing");
  cmd->add_flag("--quiet", a->quiet, "no progress or summary lines");
  return {cmd, [a] { return run_study(*a); }};
}

}  // namespace compas::app
