// Tests of the `compas` command line, run as a user runs it (cli.hpp): `compas study`: the report
// it writes, what a rerun skips or redoes, resuming after an interrupt or a kill, weak scaling, the
// dry run (the supervision of its runs is in test_cli_study_runs.cpp). Sizes are tiny; no test
// passes or fails on a measured time or rate.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>
#include "../common/proc.hpp"
#include "../common/sanitized.hpp"
#include "cli.hpp"
#include "compas/analysis/extrap.hpp"
#include "compas/threads/domain.hpp"

namespace {

using namespace cli;

// As the study report prints seconds: four decimals.
// `v` with 4 significant digits, as the report's tables write times in their unit.
std::string fmt_significant(double v) {
  const int magnitude = static_cast<int>(std::floor(std::log10(std::abs(v))));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::max(0, 3 - magnitude), v);
  return buf;
}

// "lo - hi" in whichever of s, ms, us the table chose.
bool has_range_in_some_unit(const std::string& md, double lo, double hi) {
  for (double scale : {1.0, 1e3, 1e6})
    if (md.find(fmt_significant(lo * scale) + " - " + fmt_significant(hi * scale)) !=
        std::string::npos)
      return true;
  return false;
}

std::set<std::string> run_ids(const std::string& file) {
  std::set<std::string> ids;
  for (const auto& j : jsonl(file)) ids.insert(j.value("id", ""));
  return ids;
}

// The whole study. Under the sanitizers its report code is what is new there (each kernel has its
// own sanitized tests): Laplace alone takes every section but the other kernels' through it, in a
// quarter of the runs (the four kernels under AddressSanitizer took 220 s).
const std::vector<std::string>& full_study_kernels() {
  static const std::vector<std::string> all = {"laplace", "gemm", "cg", "sort"};
  static const std::vector<std::string> sanitized = {"laplace"};
  return compas::test::kSanitized ? sanitized : all;
}

std::vector<std::string> full_study_args(const std::string& out) {
  std::string kernels;
  for (const auto& k : full_study_kernels()) kernels += (kernels.empty() ? "" : ",") + k;
  // --run-timeout: what a run may take is the machine's business, not the test's (under
  // AddressSanitizer on a loaded host the pingpong run passed the default 120 s).
  return {"study",         "--out",         out,         "--budget", "1",
          "--stream-size", "16MiB",         "--repeats", "2",        "--kernels",
          kernels,         "--run-timeout", "3600"};
}

TEST_F(Cli, StudyWritesAFullReportThenSkipsWhatIsDone) {
  const std::string out = path("study");
  const Outcome r = run_compas(full_study_args(out));
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto runs = jsonl(out + "/runs.jsonl");
  // 7 characterization runs + 2 runs of 2 sizes x 4 shapes of each kernel.
  const std::size_t kernels = full_study_kernels().size(), planned = 7 + 16 * kernels;
  ASSERT_EQ(runs.size(), planned) << r.describe();
  for (const auto& j : runs) EXPECT_EQ(j.value("exit", -1), 0) << j.dump();
  const std::string md = read_file(out + "/report.md");
  std::vector<std::string> sections = {"## Machine",
                                       "## Memory bandwidth",
                                       "## Loaded latency",
                                       "## The kernels against the bus",
                                       "## Cache working sets",
                                       "## Thread barrier",
                                       "## Process barrier",
                                       "## Put latency",
                                       "## laplace n=640",
                                       "Amdahl fit",
                                       "Performance model of the time per sweep against p = P x T",
                                       "for Extra-P: in its text format",
                                       "Verdict: ",
                                       "COMPaS 1998",
                                       "All planned runs finished"};
  if (kernels == 4)
    sections.insert(sections.end(),
                    {"Table 6", "## cg class=T", "## cg class=W", "| mops |", "## sort keys=4M",
                     "| mkeys_per_s |", "## gemm n=256", "| gflops |"});
  for (const auto& section : sections)
    EXPECT_NE(md.find(section), std::string::npos) << section << " missing\n" << md;
  EXPECT_EQ(md.find("nan"), std::string::npos) << md;
  EXPECT_EQ(md.find("Partial report"), std::string::npos) << md;
  const json study = load_json("study/study.json");
  ASSERT_TRUE(study["kernels"].contains("laplace n=640")) << study.dump();
  const json& rows = study["kernels"]["laplace n=640"]["rows"];
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) {
    EXPECT_GT(row.value("speedup", 0.0), 0) << row.dump();
    EXPECT_TRUE(row.value("verified", false)) << row.dump();
    // Each point's two runs: the median between their min and max, both kept as samples.
    EXPECT_EQ(row.value("runs", 0), 2) << row.dump();
    ASSERT_EQ(row["seconds_per_unit_samples"].size(), 2u) << row.dump();
    EXPECT_LE(row.value("seconds_per_unit_min", 1e9), row.value("seconds_per_unit", 0.0))
        << row.dump();
    EXPECT_GE(row.value("seconds_per_unit_max", 0.0), row.value("seconds_per_unit", 1e9))
        << row.dump();
    EXPECT_EQ(row.value("unit", ""), "sweep") << row.dump();
  }
  // Scaling conclusions need 3 points at least: with fewer, no fraction and the reason.
  const json& lap = study["kernels"]["laplace n=640"];
  if (lap.value("amdahl_points", 0) < 3) {
    EXPECT_TRUE(lap["amdahl_serial_fraction"].is_null()) << lap.dump();
    EXPECT_NE(lap.value("amdahl_reason", "").find("at least 3 are needed"), std::string::npos)
        << lap.dump();
  }
  ASSERT_TRUE(lap.contains("model")) << lap.dump();
  EXPECT_TRUE(lap["model"].contains("formula") || lap["model"].contains("reason")) << lap.dump();
  // The times in Extra-P's text format, one file per kernel size: a DATA line per P x T that is
  // not oversubscribed (the auto grid's one oversubscribed point measures the oversubscription).
  const auto extrap =
      compas::analysis::parse_extrap_text(read_file(out + "/extrap/laplace_n640.txt"));
  EXPECT_EQ(extrap.parameters, (std::vector<std::string>{"processes", "threads"}));
  std::size_t fitting = 0;
  for (const auto& row : lap["rows"]) fitting += row.value("oversubscribed", true) ? 0 : 1;
  EXPECT_EQ(fitting + 1, lap["rows"].size()) << "the auto grid has one oversubscribed point";
  EXPECT_EQ(extrap.points.size(), fitting);
  ASSERT_EQ(extrap.series.size(), 1u);
  EXPECT_EQ(extrap.series[0].region, "laplace n=640");
  EXPECT_EQ(extrap.series[0].values.size(), fitting);
  // And in Extra-P's JSON Lines, a line per point of both sizes with every repetition, the size a
  // parameter (n).
  std::size_t lines = 0;
  for (const auto& line : lines_of(read_file(out + "/extrap/laplace.jsonl"))) {
    const json l = json::parse(line, nullptr, false);
    ASSERT_FALSE(l.is_discarded()) << line;
    EXPECT_TRUE(l["params"].contains("processes") && l["params"].contains("threads") &&
                l["params"].contains("n"))
        << line;
    EXPECT_EQ(l.value("metric", ""), "time_per_sweep") << line;
    EXPECT_EQ(l["value"].size(), 2u) << "every repetition (--repeats 2): " << line;
    ++lines;
  }
  EXPECT_EQ(lines, 2 * fitting);
  if (kernels == 4) {
    ASSERT_TRUE(study["kernels"].contains("cg class=W")) << study.dump();
    EXPECT_EQ(study["kernels"]["cg class=W"].value("rate_field", ""), "mops");
    for (const auto& row : study["kernels"]["cg class=W"]["rows"]) {
      EXPECT_TRUE(row.value("verified", false)) << row.dump();
      EXPECT_GT(row.value("rate", 0.0), 0) << row.dump();
    }
  }
  // The kernel tables as CSV: a header and one row per point (2 sizes x 4 shapes per kernel).
  {
    std::ifstream in(out + "/study.csv");
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    ASSERT_EQ(lines.size(), 1 + 8 * kernels) << read_file(out + "/study.csv");
    EXPECT_EQ(
        lines[0].rfind("kernel,size,procs,threads,oversubscribed,unit,units,seconds_per_unit,", 0),
        0u);
    for (std::size_t i = 1; i < lines.size(); ++i) {
      EXPECT_EQ(std::count(lines[i].begin(), lines[i].end(), ','), 25) << lines[i];
      EXPECT_EQ(lines[i].substr(lines[i].rfind(',') + 1), "2") << "runs: " << lines[i];
    }
  }
  // Every number in the kernel table comes from the runs' own JSON: the 1 x 1 row's min - max of
  // the seconds per sweep (apps.study_figures checks every figure).
  const auto per_sweep = [this](const std::string& id) {
    const json r = load_json("study/raw/" + id + ".json")["results"][0];
    return r.value("seconds", 0.0) / r.value("sweeps", 1.0);
  };
  const double one = per_sweep("laplace_n640_p1t1"), two = per_sweep("laplace_n640_p1t1_r2");
  EXPECT_TRUE(has_range_in_some_unit(md, std::min(one, two), std::max(one, two)))
      << one << ", " << two << "\n"
      << md;
  // Plots, where a python3 with matplotlib exists (as compas looks for one).
  const bool matplotlib =
      std::system("python3 -c 'import matplotlib' >/dev/null 2>&1") == 0 ||
      std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") == 0;
  if (matplotlib) {
    for (const char* png : {"study.png", "membw.png", "cache.png", "study-laplace_n640.png"})
      EXPECT_TRUE(fs::exists(out + "/plots/" + png)) << png << " missing";
    // report.md shows every plot the study made, each kernel size's next to its table.
    const std::string shown = read_file(out + "/report.md");
    for (const auto& e : fs::directory_iterator(out + "/plots"))
      EXPECT_NE(shown.find("](plots/" + e.path().filename().string() + ")"), std::string::npos)
          << e.path() << " not shown";
    // The machine's picture is hwloc's own when lstopo is installed, else the placement table;
    // the report says which.
    const bool lstopo = std::system("command -v lstopo >/dev/null 2>&1") == 0;
    EXPECT_EQ(fs::exists(out + "/plots/topology.png"), lstopo);
    EXPECT_EQ(fs::exists(out + "/plots/topology-placement.png"), !lstopo);
    EXPECT_NE(shown.find(lstopo ? "as hwloc draws it (`lstopo`)" : "`lstopo` did not draw"),
              std::string::npos)
        << shown;
    const auto table = shown.find("## laplace n=640"),
               figure = shown.find("plots/study-laplace_n640.png");
    EXPECT_LT(table, figure);
    EXPECT_LT(figure, shown.find("\n## ", table + 1));
    // report.html holds them inline.
    const std::string html = read_file(out + "/report.html");
    EXPECT_NE(html.find("data:image/png;base64,"), std::string::npos);
    EXPECT_EQ(html.find("src=\"plots/"), std::string::npos);
  }
  // Second run: everything is done already.
  const std::string before = read_file(out + "/runs.jsonl");
  const Outcome again = run_compas(full_study_args(out));
  ASSERT_EQ(again.exit_code, 0) << again.describe();
  EXPECT_EQ(read_file(out + "/runs.jsonl"), before) << "a finished run was repeated";
  EXPECT_NE(
      again.out.find(std::to_string(planned) + " of " + std::to_string(planned) + " runs done"),
      std::string::npos)
      << again.describe();
}

TEST_F(Cli, InterruptedStudyResumesToTheSameRuns) {
  const std::string out = path("study");
  std::vector<std::string> argv_s = {COMPAS_EXE, "study",   "--out",     out, "--budget",
                                     "1",        "--quiet", "--repeats", "1", "--stream-size",
                                     "16MiB"};
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  // Stop it once it is into the kernel sweep (8 runs done), with Ctrl-C's signal. The deadline
  // only catches a study that hangs: a loaded host takes minutes over the first runs.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(500);
  std::size_t lines = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(out + "/runs.jsonl");
    lines = 0;
    for (std::string l; std::getline(in, l);) ++lines;
    if (lines >= 8) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (lines < 8) {  // never leave the study running behind the test
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  ASSERT_GE(lines, 8u);
  kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const bool stopped = WIFEXITED(status) && WEXITSTATUS(status) == 130;
  const bool finished_first = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  EXPECT_TRUE(stopped || finished_first) << "status " << status;
  const auto partial = run_ids(out + "/runs.jsonl");  // every line parses
  if (stopped) {
    EXPECT_LT(partial.size(), 39u);
    EXPECT_NE(read_file(out + "/report.md").find("Partial report"), std::string::npos);
  }
  const Outcome rest = run_compas(
      {"study", "--out", out, "--budget", "1", "--stream-size", "16MiB", "--repeats", "1"});
  ASSERT_EQ(rest.exit_code, 0) << rest.describe();
  const auto runs = jsonl(out + "/runs.jsonl");
  EXPECT_EQ(runs.size(), 39u) << "runs repeated or missing";
  EXPECT_EQ(run_ids(out + "/runs.jsonl").size(), 39u);
  EXPECT_EQ(read_file(out + "/report.md").find("Partial report"), std::string::npos);
}

// SIGKILL gives the study no chance to clean up: whatever it had written must still be whole,
// and a rerun must finish the plan without repeating what was recorded as done.
TEST_F(Cli, StudyKilledMidRunResumesAndEveryFileIsWhole) {
  const std::string out = path("study");
  std::vector<std::string> argv_s = {COMPAS_EXE, "study",         "--out", out,       "--budget",
                                     "1",        "--stream-size", "16MiB", "--quiet", "--kernels",
                                     "laplace",  "--repeats",     "1"};
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::size_t lines = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(out + "/runs.jsonl");
    lines = 0;
    for (std::string l; std::getline(in, l);) ++lines;
    if (lines >= 8) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_GE(lines, 8u);
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) || WIFEXITED(status)) << status;
  const std::set<std::string> before = run_ids(out + "/runs.jsonl");  // every line parses
  EXPECT_GE(before.size(), 8u);
  const Outcome rest = run_compas({"study", "--out", out, "--budget", "1", "--stream-size", "16MiB",
                                   "--quiet", "--kernels", "laplace", "--repeats", "1"});
  ASSERT_EQ(rest.exit_code, 0) << rest.describe();
  const auto runs = jsonl(out + "/runs.jsonl");
  EXPECT_EQ(runs.size(), 15u) << "runs repeated or missing";
  const std::set<std::string> after = run_ids(out + "/runs.jsonl");
  EXPECT_EQ(after.size(), 15u);
  for (const auto& id : before) EXPECT_TRUE(after.count(id)) << id;
  // Every JSON file the study and its runs wrote parses.
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    if (e.path().extension() != ".json") continue;
    ++files;
    json parsed;
    EXPECT_NO_THROW(parsed = json::parse(read_file(e.path()))) << e.path();
  }
  EXPECT_GE(files, 15u);  // 14 raw runs and study.json
  EXPECT_EQ(read_file(out + "/report.md").find("Partial report"), std::string::npos);
}

// runs.jsonl after damage: a last line torn by a kill mid-write (no newline) and a well-formed
// line whose fields have other types. Both runs count as not finished and run again; the next
// record is not appended onto the torn line (which would lose both); nothing throws.
TEST_F(Cli, StudyRerunsTornAndMistypedRecordsAndLosesNoNewOne) {
  const std::string out = path("study");
  const std::vector<std::string> args = {"study",         "--out",     out,       "--budget",  "1",
                                         "--quiet",       "--kernels", "laplace", "--repeats", "1",
                                         "--stream-size", "16MiB"};
  const Outcome first = run_compas(args);
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  const auto runs = jsonl(out + "/runs.jsonl");
  ASSERT_EQ(runs.size(), 15u);
  std::string text;
  for (std::size_t i = 0; i + 1 < runs.size(); ++i) {
    json j = runs[i];
    if (i == 3) j["exit"] = "zero";  // well-formed, wrong type
    text += j.dump() + "\n";
  }
  const std::string last = runs.back().dump();
  text += last.substr(0, last.size() / 2);  // torn: half a record, no newline
  {
    std::ofstream f(out + "/runs.jsonl", std::ios::trunc);
    f << text;
  }
  const Outcome again = run_compas(args);
  ASSERT_EQ(again.exit_code, 0) << again.describe();
  EXPECT_NE(again.err.find("line 4 is not a whole run record"), std::string::npos)
      << again.describe();
  EXPECT_NE(again.err.find("line 15 is not a whole run record"), std::string::npos)
      << again.describe();
  // Every line but the torn one parses; the two damaged runs are recorded again, whole.
  std::ifstream in(out + "/runs.jsonl");
  std::set<std::string> whole;
  int torn = 0;
  for (std::string line; std::getline(in, line);) {
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      ++torn;
      EXPECT_EQ(line, last.substr(0, last.size() / 2));
      continue;
    }
    if (j.value("exit", json()).is_number_integer()) whole.insert(j.value("id", ""));
  }
  EXPECT_EQ(torn, 1);
  EXPECT_EQ(whole.size(), 15u);
  EXPECT_TRUE(whole.count(runs[3].value("id", "")));
  EXPECT_TRUE(whole.count(runs.back().value("id", "")));
}

// --fresh deletes raw/ and logs/ in --out: never in a directory that is not a study's.
TEST_F(Cli, StudyFreshRefusesADirectoryThatIsNotAStudys) {
  const std::string out = path("mine");
  fs::create_directories(out + "/raw");
  fs::create_directories(out + "/logs");
  { std::ofstream(out + "/raw/thesis.tex") << "keep me"; }
  { std::ofstream(out + "/logs/notes") << "keep me too"; }
  const Outcome r =
      run_compas({"study", "--out", out, "--fresh", "--budget", "1", "--stream-size", "16MiB"});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_NE(r.err.find("not a compas study directory"), std::string::npos) << r.describe();
  EXPECT_EQ(read_file(out + "/raw/thesis.tex"), "keep me");
  EXPECT_EQ(read_file(out + "/logs/notes"), "keep me too");
}

// Weak scaling: each kernel's size grows with P x T so that every core keeps 1 x 1's share
// (Laplace's n by sqrt(p), the sort's keys by p); CG, whose sizes NPB fixes, is left out with why.
TEST_F(Cli, StudyWeakScalingGrowsTheSizeWithTheJob) {
  const Outcome r =
      run_compas({"study", "--out", path("weak"), "--dry-run", "--scaling", "weak", "--grid",
                  "1x1,1x2,2x2", "--kernels", "laplace,sort,cg", "--repeats", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  auto command_of = [&](const std::string& id) {
    const auto at = r.out.find("  " + id + " ");
    return at == std::string::npos ? std::string() : r.out.substr(at, r.out.find('\n', at) - at);
  };
  EXPECT_NE(command_of("laplace_weak_p1t1").find("--n 1024 "), std::string::npos) << r.out;
  EXPECT_NE(command_of("laplace_weak_p1t2").find("--n 1448 "), std::string::npos) << r.out;
  EXPECT_NE(command_of("laplace_weak_p2t2").find("--n 2048 "), std::string::npos) << r.out;
  EXPECT_NE(command_of("sort_weak_p1t1").find("--keys 8M "), std::string::npos) << r.out;
  EXPECT_NE(command_of("sort_weak_p2t2").find("--keys 32M "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("run cg"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("left out cg under --scaling weak"), std::string::npos) << r.out;
}

TEST_F(Cli, StudyDryRunPrintsThePlanAndRunsNothing) {
  const std::string out = path("plan");
  const Outcome r = run_compas({"study", "--out", out, "--dry-run", "--grid", "1x1,2x1"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("laplace_n640_p2t1"), std::string::npos) << r.describe();
  EXPECT_EQ(r.out.find("laplace_n640_p1t2"), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("cg_classA_p2t1"), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("--class T"), std::string::npos) << r.describe();
  EXPECT_FALSE(fs::exists(out)) << "a dry run created " << out;
}

// A dry run refuses an --out the real run would refuse, with the same status (2): a file, a
// user's directory (it exited 0 and printed the plan); nothing is made or changed.
TEST_F(Cli, StudyDryRunRefusesWhatTheRealRunRefuses) {
  const std::string file = path("a-file");
  std::ofstream(file) << "mine\n";
  const std::string mine = path("mine");
  fs::create_directories(mine);
  std::ofstream(mine + "/notes.txt") << "mine\n";
  for (const std::string& out : {file, mine}) {
    const Outcome dry = run_compas({"study", "--out", out, "--dry-run"});
    const Outcome real = run_compas({"study", "--out", out, "--budget", "0.1"});
    EXPECT_EQ(dry.exit_code, 2) << dry.describe();
    EXPECT_EQ(real.exit_code, 2) << real.describe();
    EXPECT_NE(dry.err.find("--out '" + out + "'"), std::string::npos) << dry.describe();
  }
  EXPECT_EQ(read_file(file), "mine\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(mine), fs::directory_iterator()), 1);
}

// --out on a read-only file system is bad input (exit 2 naming it), for the real run as for the
// dry run (the real run exited 1 when it failed to write there). A tmpfs mounted read-only in a
// mount namespace of the test's own (root only: skipped otherwise).
TEST_F(Cli, StudyOutOnAReadOnlyFileSystemIsBadInput) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting needs root";
  if (std::system("command -v unshare >/dev/null 2>&1") != 0) GTEST_SKIP() << "no unshare";
  const std::string ro = path("ro");
  fs::create_directories(ro);
  for (const char* extra : {"--dry-run", "--quiet"}) {
    const std::string cmd = "unshare -m sh -c 'mount -t tmpfs -o ro tmpfs " + ro + " && " +
                            COMPAS_EXE + " study --out " + ro + "/s --budget 0.1 " + extra + "' >" +
                            path("ro.out") + " 2>&1";
    const int status = std::system(cmd.c_str());
    const std::string said = read_file(path("ro.out"));
    if (said.find("mount:") != std::string::npos) GTEST_SKIP() << said;
    ASSERT_TRUE(WIFEXITED(status)) << said;
    EXPECT_EQ(WEXITSTATUS(status), 2) << extra << "\n" << said;
    EXPECT_NE(said.find("takes no new files (Read-only file system)"), std::string::npos) << said;
  }
}

TEST_F(Cli, HelpExitsZero) {
  const Outcome r = run_compas({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("topology"), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("barrier"), std::string::npos) << r.describe();
  EXPECT_EQ(r.out.find("_omp-barrier"), std::string::npos) << "internal command listed\n"
                                                           << r.describe();
}

TEST_F(Cli, SubcommandHelpExitsZero) {
  const Outcome r = run_compas({"topology", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("--threads"), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("--json"), std::string::npos) << r.describe();
}

TEST_F(Cli, ProbeHelpListsEvents) {
  for (const char* command : {"membw", "cache"}) {
    const Outcome r = run_compas({command, "--help"});
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_NE(r.out.find("--events"), std::string::npos) << command << "\n" << r.describe();
    EXPECT_NE(r.out.find("COMPAS_EVENTS"), std::string::npos) << command << "\n" << r.describe();
  }
}

// --version names the version and the commit, as every report's run object does.
TEST_F(Cli, VersionSaysTheVersionAndTheCommit) {
  const Outcome r = run_compas({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  const Outcome t = run_compas({"topology", "--quiet", "--json", path("t.json")});
  ASSERT_EQ(t.exit_code, 0) << t.describe();
  const json run = load_json("t.json")["run"];
  EXPECT_EQ(r.out, "compas " + run.value("compas_version", std::string("?")) + " (commit " +
                       run.value("git_commit", std::string("?")) + ")\n")
      << r.describe();
}

// The help lists every command once, under one heading, and the study's says --budget's default.
TEST_F(Cli, HelpListsEveryCommandOnceAndTheBudgetsDefault) {
  const Outcome r = run_compas({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  for (const char* command :
       {"topology", "barrier", "membw", "cache", "pingpong", "run", "study", "compare"}) {
    const std::regex line(std::string("\n  ") + command + " ");
    const auto n = std::distance(std::sregex_iterator(r.out.begin(), r.out.end(), line),
                                 std::sregex_iterator());
    EXPECT_EQ(n, 1) << command << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("Commands:"), std::string::npos) << "a second heading\n" << r.out;
  const Outcome s = run_compas({"study", "--help"});
  EXPECT_NE(s.out.find("=10"), std::string::npos) << s.describe();
}

// compas membw alone warns, as the study refuses, when its working set is under 4x the
// last-level caches (STREAM's rule): the caches serve part of it.
TEST_F(Cli, MembwWarnsWhenTheCachesServePartOfItsWorkingSet) {
  const Outcome r =
      run_compas({"membw", "--size", "1MiB", "--threads", "1", "--kernels", "copy", "--repeats",
                  "1", "--min-repeat-ms", "1", "--quiet", "--json", path("m.json")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const std::string rule = load_json("m.json")["params"].value("stream_rule", "");
  if (rule.find("no last-level cache known") != std::string::npos) GTEST_SKIP() << rule;
  EXPECT_NE(rule.find("below STREAM's rule"), std::string::npos) << rule;
  EXPECT_NE(r.err.find("compas membw: warning: working set 1 MiB"), std::string::npos)
      << r.describe();
}

}  // namespace
