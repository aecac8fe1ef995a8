// compas study: the main job. Characterizes the machine (topology,
// memory bandwidth, cache, thread and process barriers, put latency and bandwidth), then runs the
// kernels over a processes x threads grid, and writes a report directory:
//   runs.jsonl      one line per finished run, appended (and synced) the moment it finishes
//   raw/ID.json     every run's own JSON report;  logs/ID.log  its output
//   report.md       tables, speedups, Amdahl fits, verdicts, the paper's figures beside ours
//   study.json      the numbers behind report.md; study.csv: the kernel tables, one row per run;
//   plots/*.png when matplotlib is present, shown in report.md next to their tables
//   report.html     report.md as one self-contained page, the plots inline
// Every run is a child process: this program itself, or compas-run / the user's launcher around
// it, supervised by study_child.cpp (a timeout per run; nothing outlives the study). A run that
// fails is recorded as failed and the sweep goes on; a rerun skips the runs runs.jsonl holds as
// finished (study_runs.cpp) and tries the failed ones again (--fresh starts over). Ctrl-C stops
// the running child and the sweep (a second Ctrl-C kills the child at once), and leaves a report
// of what finished. --out is a new or empty directory, or a study's own; the study deletes only
// files it wrote and opens none there through a link (study_dir.cpp). A run whose raw JSON is
// damaged (cut short) is recorded as failed and run again.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
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
#include "compas/analysis/scaling.hpp"
#include "compas/base/number.hpp"
#include "compas/report/report.hpp"
#include "compas/threads/topology.hpp"
#include "plot.hpp"
#include "study/study_child.hpp"
#include "study/study_dir.hpp"
#include "study/study_plan.hpp"
#include "study/study_report.hpp"
#include "study/study_runs.hpp"

namespace compas::app {

namespace {

namespace fs = std::filesystem;
using json = report::json;
using Clock = std::chrono::steady_clock;

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

// Makes --out, or readies it for another pass (study_dir.hpp: a new or empty directory, or a
// study's own). Throws std::invalid_argument when it cannot be used.
void prepare_out_dir(const StudyArgs& a) {
  claim_study_dir(a.out);
  if (!a.fresh) return;
  // Starting over deletes the files the study wrote, and only those.
  remove_study_files(a.out, "", "");
  prepare_study_file(a.out, "runs.jsonl");
}

// The progress line on a terminal: which run, how far, about how long is left.
class Progress {
 public:
  Progress(const StudyArgs& a, const std::vector<Step>& plan, const RunBook& book)
      : tty_(::isatty(STDERR_FILENO) && !a.quiet), quiet_(a.quiet), t0_(Clock::now()) {
    for (const auto& s : plan)
      if (!book.done.count(s.id)) ++todo_, left_s_ += s.estimate_s;
  }
  ~Progress() {
    if (tty_) fmt::print(stderr, "\n");
  }
  void starting(const Step& s) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0_).count();
    ++started_;
    if (tty_)
      fmt::print(stderr, "\r\033[K[{}/{}] {}  (elapsed {:.0f} s, about {:.0f} s left)", started_,
                 todo_, s.title, elapsed, left_s_);
  }
  // Without a terminal (a batch log), one line per finished run.
  void ended(const Step& s, const ChildOutcome& o) {
    left_s_ = std::max(0.0, left_s_ - s.estimate_s);
    if (!tty_ && !quiet_ && !o.interrupted)
      fmt::print(
          stderr,
          "compas study: [{}/{}] {}: {} in {:.1f} s (elapsed {:.0f} s, about {:.0f} s left)\n",
          started_, todo_, s.title, o.ok() ? "done" : "ended (" + o.reason() + ")", o.seconds,
          std::chrono::duration<double>(Clock::now() - t0_).count(), left_s_);
  }
  // What goes before a line of its own on stderr: the end of the progress line.
  const char* line_break() const { return tty_ ? "\n" : ""; }

 private:
  bool tty_, quiet_;
  Clock::time_point t0_;
  int todo_ = 0, started_ = 0;
  double left_s_ = 0;
};

// Exit 1 from `compas run` with its JSON written is a verification failure: a finished run,
// reported as such.
bool finished(const fs::path& dir, const Step& s, const ChildOutcome& o) {
  std::error_code ec;  // the report itself, a regular file: never what a link points at
  const bool verification_failed =
      s.kind == "kernel" && o.started && !o.timed_out && o.signal == 0 && o.exit_code == 1 &&
      fs::is_regular_file(fs::symlink_status(dir / "raw" / (s.id + ".json"), ec));
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
  prepare_study_file(dir, "raw/" + s.id + ".json");
  prepare_study_file(dir, "logs/" + s.id + ".log");
  return children.run(s.argv, log_path(dir, s.id), s.timeout_s);
}

void record_outcome(const StudyArgs& a, const Step& s, const ChildOutcome& o, RunBook& book,
                    const Progress& progress) {
  const fs::path dir = a.out;
  // A run that wrote half its report did not finish.
  const bool ended = finished(dir, s, o);
  const std::string damage = ended ? raw_damage(dir, s.id) : "";
  const bool ok = ended && damage.empty();
  json rec = ok ? run_record(s, o) : failure_record(dir, s, o);
  if (!damage.empty()) rec["reason"] = damage;
  append_run(dir / "runs.jsonl", rec);
  book.record(rec);
  if (!ok && !a.quiet)
    fmt::print(stderr, "{}compas study: {} failed ({}); see {}\n", progress.line_break(), s.id,
               o.reason(), log_path(dir, s.id).string());
}

// A finished run whose raw report is damaged now (cut short, edited) is not done: it is recorded
// as failed with the damage, said on stderr, and run again.
void forget_damaged_runs(const StudyArgs& a, const std::vector<Step>& plan, RunBook& book) {
  for (const auto& s : plan) {
    const auto d = book.done.find(s.id);
    if (d == book.done.end()) continue;
    const std::string damage = raw_damage(a.out, s.id);
    if (damage.empty()) continue;
    json rec = d->second;
    rec["failed"] = true;
    rec["reason"] = damage;
    rec["log"] = "logs/" + s.id + ".log";
    rec["log_tail"] = log_tail(log_path(a.out, s.id));
    append_run(fs::path(a.out) / "runs.jsonl", rec);
    book.record(rec);
    fmt::print(stderr, "compas study: {}: run {} runs again\n", damage, s.id);
  }
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
    progress.ended(s, o);
    if (o.interrupted) return true;  // stopped on request: not a failure, run again next time
    record_outcome(a, s, o, book, progress);
  }
  return false;
}

// Plots: every raw report and the study summary, when matplotlib is there. Returns whether it
// made them; those of an earlier pass are removed first.
bool make_plots(const StudyArgs& a, const std::vector<Step>& plan, const RunBook& book,
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
  if (python.empty() || interrupted) return false;
  remove_study_files(dir, "plots/", ".png");
  study_subdir(dir, "plots");
  // The script draws into a folder of its own, made here (mkdtemp): the study then knows which
  // PNGs it wrote.
  std::string drawn = (dir / ".plots-XXXXXX").string();
  if (::mkdtemp(drawn.data()) == nullptr)
    throw std::runtime_error("cannot make a folder in " + dir.string() + ": " +
                             std::strerror(errno));
  std::vector<std::string> argv = {python, plot_script_path()};
  argv.insert(argv.end(), files.begin(), files.end());
  argv.push_back("--out");
  argv.push_back(drawn);
  prepare_study_file(dir, "logs/plots.log");
  const fs::path log = dir / "logs" / "plots.log";
  const bool ok = children.run(argv, log, kPlotTimeoutS).ok();
  take_study_plots(dir, drawn);
  if (!ok && !a.quiet)
    fmt::print(stderr, "compas study: no plots (see {}; plots need python3-matplotlib)\n",
               log.string());
  return ok;
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
  check_scaling(a.scaling);
  if (!(a.budget > 0)) throw std::invalid_argument("--budget must be > 0 minutes");
  const auto topo = threads::Topology::host();
  const auto plan = make_plan(a, topo);
  const auto left_out = left_out_points(a, host_cores(topo));
  if (a.dry_run) {
    check_study_dir(a.out);  // as the real run would refuse it: exit 2, nothing made
    print_plan(a, plan, left_out);
    return 0;
  }
  prepare_out_dir(a);
  if (!a.quiet)
    for (const auto& line : left_out) fmt::print(stderr, "compas study: {}\n", line);
  RunBook book = read_runs(fs::path(a.out) / "runs.jsonl");
  forget_damaged_runs(a, plan, book);
  ChildSupervisor children;
  const bool interrupted = sweep(a, plan, book, children);
  const bool complete = !interrupted && all_passed(plan, book);
  write_report(a, plan, book, complete);
  // The plots are drawn from study.json; the report is written again to show them.
  if (make_plots(a, plan, book, children, interrupted)) write_report(a, plan, book, complete);
  write_html_report(a.out);
  print_summary(a, plan, book, interrupted);
  if (interrupted)
    return 128 + (children.first_stop_signal() ? children.first_stop_signal() : SIGINT);
  return a.strict && count_in(plan, book.failed) > 0 ? 1 : 0;
}

// --run-timeout: seconds, more than 0; at most 1e6 (11 days), which keeps the deadline
// arithmetic in range.
CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& v) {
        const auto s = base::parse_decimal(v);
        if (!s || !(*s > 0) || *s > 1e6)
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
      ->capture_default_str()
      ->check(CLI::Range(0.1, 10000.0));
  cmd->add_option("--run-timeout", a->run_timeout_s,
                  "seconds a run may take; then it gets SIGTERM (SIGKILL 3 s later), is recorded "
                  "as failed and the sweep goes on (default: 20 times the run's estimate, 120 s "
                  "at least)")
      ->check(positive_seconds());
  cmd->add_option("--scaling", a->scaling,
                  "strong (default: each kernel at fixed sizes on every P x T) or weak (the size "
                  "grows with P x T so that each core keeps 1 x 1's share; CG, whose NPB classes "
                  "fix its size, is left out)");
  cmd->add_option("--repeats", a->repeats,
                  "runs of every kernel point, reported as median with min-max (default: 3, 5 "
                  "from --budget 20, 7 from --budget 60)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--stream-size", a->stream_size,
                  "working set of the memory probes (membw, loaded latency, the cache curve's "
                  "largest): default at least 4x the last-level caches (STREAM's rule), within a "
                  "quarter of memory; smaller measures the caches in part, as the report says");
  cmd->add_flag("--no-paper", a->no_paper,
                "leave COMPaS 1998's reference figures out of the report");
  cmd->add_flag("--strict", a->strict,
                "exit 1 when a run failed (the report is written all the same); without it the "
                "study exits 0 and says on stderr how many failed");
  cmd->add_flag("--fresh", a->fresh, "forget earlier runs in --out and start over");
  cmd->add_flag("--dry-run", a->dry_run, "print the plan and its estimated time, run nothing");
  cmd->add_flag("--quiet", a->quiet, "no progress or summary lines");
  cmd->add_flag("--vary-work", a->vary_work,
                "run r of every kernel point does r times the iterations (to check that every "
                "figure holds whatever work each run did)")
      ->group("");
  return {cmd, [a] { return run_study(*a); }};
}

}  // namespace compas::app
