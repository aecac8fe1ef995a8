// Tests of the `compas` command line, run as a user runs it (cli.hpp): `compas run KERNEL`: each
// kernel's record, verification (and its failure), the stores and wait policy it says it used, and
// the same results on every job shape. Sizes are tiny; no test passes or fails on a measured time
// or rate.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <cerrno>
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
#include "cli.hpp"
#include "compas/analysis/extrap.hpp"
#include "compas/threads/domain.hpp"

namespace {

using namespace cli;

TEST_F(Cli, RunLaplaceVerifiesAndReportsEveryField) {
  const Outcome r = run_compas({"run", "laplace", "--n", "48", "--iters", "30", "--threads", "2",
                                "--oversubscribe", "--json", path("l.json")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("verified: "), std::string::npos) << r.describe();
  const json j = load_json("l.json");
  expect_report_header(j, "run");
  ASSERT_EQ(j["results"].size(), 1u);
  const json& rec = j["results"][0];
  EXPECT_EQ(rec.value("kernel", ""), "laplace");
  EXPECT_EQ(rec.value("processes", 0), 1);
  EXPECT_EQ(rec.value("threads", 0), 2);
  EXPECT_EQ(rec.value("n", 0), 48);
  EXPECT_EQ(rec.value("sweeps", 0), 30);
  EXPECT_TRUE(rec.value("verified", false));
  EXPECT_GT(rec.value("seconds", 0.0), 0);
  EXPECT_NEAR(rec.value("mlups", 0.0), 48.0 * 48 * 30 / rec.value("seconds", 1.0) / 1e6,
              1e-6 * rec.value("mlups", 0.0));
  ASSERT_TRUE(rec.contains("regions")) << rec.dump();
  EXPECT_TRUE(rec["regions"].contains("compute")) << rec.dump();
  EXPECT_EQ(rec["regions"]["compute"].value("threads", 0), 2) << rec.dump();
  EXPECT_EQ(rec.value("field_hash", "").size(), 16u) << rec.dump();
  EXPECT_EQ(rec.value("schedule", ""), "dynamic") << rec.dump();
  EXPECT_GE(rec.value("moved", -1.0), 0.0) << rec.dump();
  EXPECT_LE(rec.value("moved", 2.0), 0.5) << rec.dump();  // at most the other thread's rows

  // The fixed schedule: the same field, no rows moved.
  const Outcome f =
      run_compas({"run", "laplace", "--n", "48", "--iters", "30", "--threads", "2",
                  "--oversubscribe", "--schedule", "fixed", "--json", path("lf.json")});
  ASSERT_EQ(f.exit_code, 0) << f.describe();
  const json jf = load_json("lf.json");
  const json& fixed = jf["results"][0];
  EXPECT_EQ(fixed.value("schedule", ""), "fixed") << fixed.dump();
  EXPECT_EQ(fixed.value("moved", -1.0), 0.0) << fixed.dump();
  EXPECT_EQ(fixed.value("field_hash", ""), rec.value("field_hash", "x"));
}

// What --stores chose, and why, is in the JSON: the flag, or the cache rule with its sizes.
TEST_F(Cli, RunSaysWhichStoresItUsedAndWhy) {
  struct Case {
    std::vector<std::string> args;
    std::string reason;  // what stores_reason must contain
    bool streaming;
  };
  const std::vector<Case> cases = {
      {{"laplace", "--n", "64", "--iters", "40"}, "fits the caches below the last level", false},
      {{"laplace", "--n", "64", "--iters", "40", "--stores", "streaming"},
       "streaming: --stores streaming",
       true},
      {{"sort", "--keys", "64K", "--iters", "2"},
       "cached: the keys (0.2 MiB) fit the caches",
       false},
      {{"sort", "--keys", "64K", "--iters", "2", "--stores", "streaming"},
       "streaming: --stores streaming",
       true}};
  for (const auto& c : cases) {
    std::vector<std::string> argv = {"run"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    for (const std::string& x :
         {std::string("--quiet"), std::string("--json"), path("stores.json")})
      argv.push_back(x);
    const Outcome r = run_compas(argv);
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    const json rec = load_json("stores.json")["results"][0];
    EXPECT_NE(rec.value("stores_reason", "").find(c.reason), std::string::npos) << rec.dump();
    EXPECT_EQ(rec.value("streaming_stores", !c.streaming), c.streaming) << rec.dump();
  }
}

// The wait policy the threads used, and why: what was asked for, or auto's choice from whether
// the job has a CPU per thread (and, when it has not, whether a yield hands the CPU over here).
TEST_F(Cli, RunSaysWhichWaitPolicyItUsedAndWhy) {
  struct Case {
    std::vector<std::string> flags;
    std::string wait, reason, backoff;
  };
  const std::vector<Case> cases = {
      {{"--threads", "1", "--wait", "spin"}, "spin", "asked for", "yield for as long as it takes"},
      {{"--threads", "1"}, "auto", "a CPU of its own", "spin 32768 pauses"},
      {{"--threads", "8", "--oversubscribe"},
       "auto",
       "more threads than CPUs",
       "sleep on a futex"}};
  for (const auto& c : cases) {
    std::vector<std::string> argv = {
        "run", "laplace", "--n", "64", "--iters", "5", "--quiet", "--json", path("wait.json")};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    const Outcome r = run_compas(argv);
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    const json params = load_json("wait.json")["params"];
    EXPECT_EQ(params.value("wait", ""), c.wait) << params.dump();
    EXPECT_NE(params.value("wait_reason", "").find(c.reason), std::string::npos) << params.dump();
    EXPECT_NE(params.value("wait_backoff", "").find(c.backoff), std::string::npos) << params.dump();
  }
}

TEST_F(Cli, RunLaplaceGivesTheSameFieldOnEveryJobShape) {
  std::set<std::string> hashes;
  for (int p : {1, 2, 3}) {
    const std::string file = fmt_file("l", p);
    const Outcome r =
        run_compas_job(p, {"run", "laplace", "--n", "40", "--iters", "25", "--json", path(file)},
                       {{"COMPAS_TIMEOUT", "30"}});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    const json j = load_json(file);
    const json& rec = j["results"][0];
    EXPECT_EQ(rec.value("processes", 0), p);
    EXPECT_TRUE(rec.value("verified", false)) << rec.dump();
    if (p > 1) {
      EXPECT_TRUE(rec["regions"].contains("communicate")) << rec.dump();
    }
    hashes.insert(rec.value("field_hash", ""));
  }
  EXPECT_EQ(hashes.size(), 1u) << "the field differs between job shapes";
}

// A rank of a compas-run job is given a slice of the machine: "machine" still describes the
// whole machine (as `compas topology` run alone does), and "slice" what the rank was given.
TEST_F(Cli, UnderCompasRunTheMachineIsTheWholeMachineAndTheSliceIsSeparate) {
  const Outcome alone = run_compas({"topology", "--quiet", "--json", path("topo.json")});
  ASSERT_EQ(alone.exit_code, 0) << alone.describe();
  const json whole = load_json("topo.json")["machine"];
  const Outcome r = run_compas_job(
      2, {"run", "laplace", "--n", "40", "--iters", "5", "--quiet", "--json", path("job.json")},
      {{"COMPAS_TIMEOUT", "30"}});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json m = load_json("job.json")["machine"];
  for (const char* f : {"sockets", "cores", "pus", "numa_nodes"})
    EXPECT_EQ(m[f], whole[f]) << f << ": the job's machine " << m.dump() << "\nalone "
                              << whole.dump();
  ASSERT_TRUE(m.contains("slice")) << m.dump();
  const json& slice = m["slice"];
  EXPECT_LE(slice["pus"].get<int>(), m["pus"].get<int>()) << m.dump();
  EXPECT_FALSE(slice["cpus"].get<std::string>().empty()) << m.dump();
  if (m["pus"].get<int>() >= 2) {
    EXPECT_LT(slice["pus"].get<int>(), m["pus"].get<int>()) << "two ranks share the machine";
    EXPECT_EQ(slice["whole_machine"], false) << m.dump();
  }
  EXPECT_EQ(whole["slice"]["whole_machine"], true) << whole.dump();
}

// --json - : the report alone on stdout (the table and every message on stderr), so that it pipes
// into a JSON reader; alone and under compas-run. Both --json - and --csv - are refused.
TEST_F(Cli, JsonToStdoutIsTheOnlyThingOnStdout) {
  const std::vector<std::vector<std::string>> commands = {
      {"topology", "--json", "-"}, {"run", "laplace", "--n", "40", "--iters", "5", "--json", "-"}};
  for (const auto& args : commands) {
    const Outcome r = run_compas(args);
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    const json j = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "stdout is not one JSON document:\n" << r.out;
    EXPECT_EQ(j.value("command", ""), args[0]);
    EXPECT_FALSE(r.err.empty()) << "the table went nowhere";
  }
  const Outcome job =
      run_compas_job(2, {"run", "laplace", "--n", "40", "--iters", "5", "--json", "-"},
                     {{"COMPAS_TIMEOUT", "30"}});
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  const json j = json::parse(job.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << "the job's stdout is not one JSON document:\n" << job.out;
  EXPECT_EQ(j["results"][0].value("processes", 0), 2);
  const Outcome both = run_compas({"topology", "--json", "-", "--csv", "-"});
  EXPECT_EQ(both.exit_code, 2) << both.describe();
  EXPECT_NE(both.err.find("only one of them can go to stdout"), std::string::npos)
      << both.describe();
  EXPECT_EQ(both.out, "");
}

// --min-seconds: a run whose timed part is shorter runs again with its iterations multiplied,
// recorded (iters, iteration_factor, timed_seconds); alone and under compas-run (the factor agreed
// by both processes). CG's class fixes its iterations: it repeats its whole benchmark.
TEST_F(Cli, MinSecondsScalesTheIterationsUntilTheTimedPartLastsThatLong) {
  const Outcome g = run_compas({"run", "gemm", "--n", "128", "--iters", "1", "--threads", "1",
                                "--min-seconds", "0.2", "--quiet", "--json", path("g.json")});
  ASSERT_EQ(g.exit_code, 0) << g.describe();
  const json gr = load_json("g.json")["results"][0];
  EXPECT_GT(gr.value("iteration_factor", 0), 1) << gr.dump();
  EXPECT_EQ(gr.value("iters", 0), gr.value("iteration_factor", 0)) << gr.dump();
  EXPECT_GE(gr.value("timed_seconds", 0.0), 0.2) << gr.dump();
  EXPECT_EQ(gr.value("min_seconds", 0.0), 0.2);
  EXPECT_TRUE(gr.value("verified", false)) << gr.dump();
  const Outcome l = run_compas_job(2,
                                   {"run", "laplace", "--n", "64", "--iters", "5", "--min-seconds",
                                    "0.2", "--quiet", "--json", path("l.json")},
                                   {{"COMPAS_TIMEOUT", "30"}});
  ASSERT_EQ(l.exit_code, 0) << l.describe();
  const json lr = load_json("l.json")["results"][0];
  EXPECT_EQ(lr.value("iters", 0), 5 * lr.value("iteration_factor", 0)) << lr.dump();
  EXPECT_EQ(lr.value("sweeps", 0), lr.value("iters", 0)) << lr.dump();
  EXPECT_GE(lr.value("timed_seconds", 0.0), 0.2) << lr.dump();
  // Each run's work record: Laplace's sweeps, all timed together (the study reads nothing else).
  EXPECT_EQ(lr["work"].value("unit", ""), "sweep") << lr.dump();
  EXPECT_EQ(lr["work"].value("units", 0.0), lr.value("sweeps", 0)) << lr.dump();
  EXPECT_EQ(lr["work"].value("seconds", 0.0), lr.value("timed_seconds", 1.0)) << lr.dump();
  EXPECT_NEAR(lr["work"].value("rate", 0.0), lr.value("mlups", 0.0), 1e-9 * lr.value("mlups", 1.0))
      << lr.dump();
  // Under compas-run the other rank is the job's, not another process that made the machine busy.
  EXPECT_GT(load_json("l.json")["run"]["machine_load"].value("job_cpu_seconds", 0.0), 0.0);
  EXPECT_EQ(load_json("g.json")["run"]["machine_load"].value("job_cpu_seconds", -1.0), 0.0);
  // CG's class fixes its iterations: the whole benchmark is repeated, each repetition verified,
  // the work its iterations over every repetition (class T's 10-35 ms runs were exempt).
  const Outcome c = run_compas({"run", "cg", "--class", "S", "--threads", "1", "--min-seconds",
                                "0.5", "--quiet", "--json", path("c.json")});
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  const json cr = load_json("c.json")["results"][0];
  EXPECT_GT(cr.value("iteration_factor", 0), 1) << cr.dump();
  EXPECT_EQ(cr.value("repetitions", 0), cr.value("iteration_factor", -1)) << cr.dump();
  EXPECT_GE(cr.value("timed_seconds", 0.0), 0.5) << cr.dump();
  EXPECT_EQ(cr["work"].value("units", 0.0), cr.value("niter", 0) * cr.value("repetitions", 0))
      << cr.dump();
  EXPECT_TRUE(cr.value("verified", false)) << cr.dump();
  EXPECT_FALSE(cr.contains("min_seconds_note")) << cr.dump();
}

TEST_F(Cli, RunLaplaceThatFailsVerificationExitsOneAndSaysWhy) {
  const Outcome r = run_compas({"run", "laplace", "--n", "20", "--iters", "5", "--threads", "1",
                                "--inject-fault", "--json", path("bad.json")});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.out.find("VERIFICATION FAILED"), std::string::npos) << r.describe();
  const json j = load_json("bad.json");  // the record is still written, marked unverified
  EXPECT_FALSE(j["results"][0].value("verified", true));
}

TEST_F(Cli, RunCgVerifiesClassSAndReportsEveryField) {
  const Outcome r = run_compas({"run", "cg", "--class", "S", "--threads", "2", "--oversubscribe",
                                "--json", path("cg.json")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("verified: "), std::string::npos) << r.describe();
  const json j = load_json("cg.json");
  expect_report_header(j, "run");
  ASSERT_EQ(j["results"].size(), 1u);
  const json& rec = j["results"][0];
  EXPECT_EQ(rec.value("kernel", ""), "cg");
  EXPECT_EQ(rec.value("processes", 0), 1);
  EXPECT_EQ(rec.value("threads", 0), 2);
  EXPECT_EQ(rec.value("class", ""), "S");
  EXPECT_EQ(rec.value("na", 0), 1400);
  EXPECT_EQ(rec.value("niter", 0), 15);
  EXPECT_TRUE(rec.value("verified", false)) << rec.dump();
  EXPECT_TRUE(rec.value("official_zeta", false)) << rec.dump();
  EXPECT_NEAR(rec.value("zeta", 0.0), 8.5971775078648, 8.5971775078648 * 1e-10) << rec.dump();
  EXPECT_LE(rec.value("error", 1.0), 1e-10) << rec.dump();
  EXPECT_GT(rec.value("seconds", 0.0), 0);
  EXPECT_GT(rec.value("mops", 0.0), 0);
  EXPECT_GT(rec.value("model_gbs", 0.0), 0);
  ASSERT_TRUE(rec.contains("regions")) << rec.dump();
  EXPECT_TRUE(rec["regions"].contains("solve")) << rec.dump();
  EXPECT_TRUE(rec["regions"].contains("compute")) << rec.dump();
  // compute is derived per thread: the mean over threads of solve - communicate - synchronize.
  const json& reg = rec["regions"];
  auto mean = [&](const char* name) {
    return reg.contains(name) ? reg[name].value("mean_seconds", 0.0) : 0.0;
  };
  EXPECT_GT(mean("solve"), 0) << rec.dump();
  EXPECT_NEAR(mean("compute"), mean("solve") - mean("communicate") - mean("synchronize"), 1e-9)
      << rec.dump();
  EXPECT_GT(mean("compute"), 0) << rec.dump();
  EXPECT_GT(rec.value("cpu_seconds", 0.0), 0) << rec.dump();
}

// --report-bindings (or COMPAS_REPORT_BINDING=1): one line per process on stderr, its threads
// each on a cpu of its own inside the process's cpus; nothing without it.
TEST_F(Cli, RunReportsWhereEveryThreadRuns) {
  const std::regex line(
      "compas: binding rank ([0-9]+) on host [^ ]+: cpus ([0-9,-]+) \\(affinity [0-9,-]+\\); "
      "threads 0->cpu ([0-9]+)(, 1->cpu ([0-9]+))?; openmp [^\n]*\n");
  auto bindings = [&](const std::string& err) {
    std::vector<std::smatch> all;
    for (auto it = std::sregex_iterator(err.begin(), err.end(), line); it != std::sregex_iterator();
         ++it)
      all.push_back(*it);
    return all;
  };
  const Outcome quiet = run_compas({"run", "cg", "--class", "S", "--threads", "1"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.describe();
  EXPECT_EQ(quiet.err.find("binding"), std::string::npos) << quiet.describe();
  const int threads = host_pus() >= 2 ? 2 : 1;
  const Outcome one = run_compas(
      {"run", "cg", "--class", "S", "--threads", std::to_string(threads), "--report-bindings"});
  ASSERT_EQ(one.exit_code, 0) << one.describe();
  const auto lines = bindings(one.err);
  ASSERT_EQ(lines.size(), 1u) << one.describe();
  EXPECT_EQ(lines[0][1], "0");
  if (threads == 2) {
    EXPECT_NE(lines[0][3], lines[0][5]) << "two threads on one cpu\n" << one.describe();
  }
  const Outcome job = run_compas_job(2, {"run", "cg", "--class", "S"},
                                     {{"COMPAS_TIMEOUT", "30"}, {"COMPAS_REPORT_BINDING", "1"}});
  ASSERT_EQ(job.exit_code, 0) << job.describe();
  const auto both = bindings(job.err);
  ASSERT_EQ(both.size(), 2u) << job.describe();
  EXPECT_NE(both[0][1], both[1][1]) << job.describe();
  if (host_pus() >= 2) {
    EXPECT_NE(both[0][3], both[1][3]) << "the processes share a cpu\n" << job.describe();
  }
}

TEST_F(Cli, RunCgGivesTheSameZetaOnEveryJobShape) {
  std::set<double> zetas;
  for (int p : {1, 2}) {
    const std::string file = fmt_file("cg", p);
    const Outcome r = run_compas_job(p, {"run", "cg", "--class", "S", "--json", path(file)},
                                     {{"COMPAS_TIMEOUT", "30"}});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    const json j = load_json(file);
    const json& rec = j["results"][0];
    EXPECT_EQ(rec.value("processes", 0), p);
    EXPECT_TRUE(rec.value("verified", false)) << rec.dump();
    if (p > 1) {
      EXPECT_TRUE(rec["regions"].contains("communicate")) << rec.dump();
    }
    zetas.insert(rec.value("zeta", 0.0));
  }
  EXPECT_EQ(zetas.size(), 1u) << "zeta differs between job shapes";
}

// NPB's 2-D decomposition: a process of a 4 x 4 grid sends at most 0.6 times the bytes per inner
// iteration that a process of 4 in rows sends (each sends its rows of p to all), and zeta is
// bitwise the same when rows add in the grid's (the tree's) order. Oversubscribed on a small
// machine: only bytes are compared, not time.
TEST_F(Cli, RunCgGridSendsFewerBytesPerProcessThanRowsWithTheSameZeta) {
  std::map<int, json> rec;
  for (int p : {4, 16}) {
    const std::string file = fmt_file("cg_grid", p);
    std::vector<std::string> args = {"run", "cg", "--class", "A", "--json", path(file)};
    if (p == 4) args.insert(args.end(), {"--sum-order", "tree"});
    const Outcome r = run_compas_job(p, args, {{"COMPAS_TIMEOUT", "120"}});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    rec[p] = load_json(file)["results"][0];
    EXPECT_TRUE(rec[p].value("verified", false)) << rec[p].dump();
  }
  EXPECT_EQ(rec[4].value("decomposition", ""), "rows") << rec[4].dump();
  EXPECT_EQ(rec[16].value("decomposition", ""), "grid") << rec[16].dump();
  EXPECT_EQ(rec[16]["grid"], json::array({4, 4})) << rec[16].dump();
  const double four = rec[4].value("comm_bytes_per_iteration", 0.0);
  const double sixteen = rec[16].value("comm_bytes_per_iteration", 0.0);
  // Rows: each process sends its rows of p (about na / 4 values) to 3 others, 26 times per 25
  // inner iterations, besides the chunks' partial sums.
  EXPECT_GT(four, 0.75 * 14000 * 8) << rec[4].dump();
  EXPECT_GT(sixteen, 0) << rec[16].dump();
  EXPECT_LE(sixteen, 0.6 * four) << sixteen << " vs " << four;
  EXPECT_EQ(rec[4].value("sum_order", ""), "tree") << rec[4].dump();
  EXPECT_EQ(rec[16].value("sum_order", ""), "tree") << rec[16].dump();
  EXPECT_EQ(rec[4].value("zeta", 0.0), rec[16].value("zeta", 1.0));
  EXPECT_EQ(rec[4].value("rnorm", 0.0), rec[16].value("rnorm", 1.0));
}

// Rows add the panel sums left to right unless asked (faster with one thread per process);
// a grid cannot: the running order there ends the job on every process with exit 2, naming it,
// and writes no report.
TEST_F(Cli, RunCgRowsAddLeftToRightAndAGridRefusesToBeAskedTo) {
  const Outcome rows = run_compas_job(2, {"run", "cg", "--class", "S", "--json", path("r.json")},
                                      {{"COMPAS_TIMEOUT", "30"}});
  ASSERT_EQ(rows.exit_code, 0) << rows.describe();
  const json rec = load_json("r.json")["results"][0];
  EXPECT_EQ(rec.value("sum_order", ""), "running") << rec.dump();
  EXPECT_NE(rows.out.find("panel sums in running order"), std::string::npos) << rows.describe();
  const Outcome grid = run_compas_job(4,
                                      {"run", "cg", "--class", "W", "--decomposition", "grid",
                                       "--sum-order", "running", "--json", path("g.json")},
                                      {{"COMPAS_TIMEOUT", "30"}});
  EXPECT_EQ(grid.exit_code, 2) << grid.describe();
  EXPECT_NE(grid.err.find("running sum order on a grid of 2 x 2"), std::string::npos)
      << grid.describe();
  EXPECT_FALSE(std::filesystem::exists(path("g.json"))) << grid.describe();
}

TEST_F(Cli, RunCgThatFailsVerificationExitsOneAndSaysWhy) {
  const Outcome r = run_compas({"run", "cg", "--class", "S", "--threads", "1", "--inject-fault",
                                "--json", path("bad.json")});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.out.find("VERIFICATION FAILED"), std::string::npos) << r.describe();
  const json j = load_json("bad.json");
  EXPECT_FALSE(j["results"][0].value("verified", true));
}

TEST_F(Cli, RunSortVerifiesAndReportsEveryField) {
  const Outcome r = run_compas({"run", "sort", "--keys", "64K", "--dist", "npb", "--iters", "3",
                                "--threads", "2", "--oversubscribe", "--json", path("s.json")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("verified: "), std::string::npos) << r.describe();
  const json j = load_json("s.json");
  expect_report_header(j, "run");
  ASSERT_EQ(j["results"].size(), 1u);
  const json& rec = j["results"][0];
  EXPECT_EQ(rec.value("kernel", ""), "sort");
  EXPECT_EQ(rec.value("processes", 0), 1);
  EXPECT_EQ(rec.value("threads", 0), 2);
  EXPECT_EQ(rec.value("keys", 0), 65536);
  EXPECT_EQ(rec.value("dist", ""), "npb");
  EXPECT_EQ(rec.value("iters", 0), 3);
  EXPECT_TRUE(rec.value("verified", false)) << rec.dump();
  EXPECT_FALSE(rec.value("verification", "").empty());
  const double seconds = rec.value("seconds", 0.0);
  EXPECT_GT(seconds, 0);
  // The same statistic as every kernel: seconds is the median of the timed sorts (the best is
  // beside it), and the rates are of the median.
  ASSERT_EQ(rec["iteration_seconds"].size(), 3u) << rec.dump();
  std::vector<double> its = rec["iteration_seconds"].get<std::vector<double>>();
  std::sort(its.begin(), its.end());
  EXPECT_DOUBLE_EQ(seconds, its[1]) << rec.dump();
  EXPECT_DOUBLE_EQ(rec.value("best_seconds", 0.0), its[0]) << rec.dump();
  EXPECT_NEAR(rec.value("mkeys_per_s", 0.0), 65536 / seconds / 1e6,
              1e-6 * rec.value("mkeys_per_s", 0.0));
  EXPECT_GT(rec.value("model_bytes", 0.0), 0);
  EXPECT_NEAR(rec.value("model_gbs", 0.0), rec.value("model_bytes", 0.0) / seconds / 1e9,
              1e-6 * rec.value("model_gbs", 0.0));
  EXPECT_EQ(rec.value("min_keys_per_process", 0), 65536);
  EXPECT_GT(rec.value("cpu_seconds", 0.0), 0) << rec.dump();  // over the three timed sorts
  ASSERT_TRUE(rec.contains("regions")) << rec.dump();
  EXPECT_TRUE(rec["regions"].contains("compute")) << rec.dump();
  EXPECT_TRUE(rec["regions"].contains("synchronize")) << rec.dump();
  EXPECT_EQ(rec["regions"]["compute"].value("threads", 0), 2) << rec.dump();
}

TEST_F(Cli, RunSortOverProcessesExchangesAndVerifies) {
  for (int p : {2, 3}) {
    const std::string file = fmt_file("s", p);
    const Outcome r = run_compas_job(p,
                                     {"run", "sort", "--keys", "100000", "--dist", "equal",
                                      "--iters", "2", "--json", path(file)},
                                     {{"COMPAS_TIMEOUT", "30"}});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    const json j = load_json(file);
    const json& rec = j["results"][0];
    EXPECT_EQ(rec.value("processes", 0), p);
    EXPECT_TRUE(rec.value("verified", false)) << rec.dump();
    EXPECT_TRUE(rec["regions"].contains("communicate")) << rec.dump();
    // All-equal keys are split by position: every process gets its share.
    EXPECT_EQ(rec.value("min_keys_per_process", 0), 100000 / p) << rec.dump();
    EXPECT_EQ(rec.value("max_keys_per_process", 0), (100000 + p - 1) / p) << rec.dump();
    EXPECT_EQ(rec.value("passes", -1), 0) << rec.dump();
  }
}

TEST_F(Cli, RunSortThatFailsVerificationExitsOneAndSaysWhy) {
  const Outcome r = run_compas({"run", "sort", "--keys", "10K", "--threads", "1", "--inject-fault",
                                "--json", path("bad.json")});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.out.find("VERIFICATION FAILED"), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("multiset of keys changed"), std::string::npos) << r.describe();
  const json j = load_json("bad.json");
  EXPECT_FALSE(j["results"][0].value("verified", true));
}

TEST_F(Cli, RunGemmVerifiesAndReportsEveryField) {
  const Outcome r = run_compas({"run", "gemm", "--n", "128", "--iters", "2", "--threads", "2",
                                "--oversubscribe", "--json", path("g.json")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("verified: Freivalds"), std::string::npos) << r.describe();
  const json j = load_json("g.json");
  expect_report_header(j, "run");
  ASSERT_EQ(j["results"].size(), 1u);
  const json& rec = j["results"][0];
  EXPECT_EQ(rec.value("kernel", ""), "gemm");
  EXPECT_EQ(rec.value("processes", 0), 1);
  EXPECT_EQ(rec.value("threads", 0), 2);
  EXPECT_EQ(rec.value("n", 0), 128);
  EXPECT_EQ(rec.value("grid", ""), "1x1");
  EXPECT_EQ(rec.value("algorithm", ""), "local");
  EXPECT_FALSE(rec.value("isa", "").empty()) << rec.dump();
  EXPECT_EQ(rec.value("iters", 0), 2);
  EXPECT_TRUE(rec.value("verified", false)) << rec.dump();
  EXPECT_NE(rec.value("verification", "").find("Freivalds"), std::string::npos) << rec.dump();
  EXPECT_LE(rec.value("error", 1.0), rec.value("tolerance", 0.0)) << rec.dump();
  const double sec = rec.value("seconds", 0.0);
  EXPECT_GT(sec, 0);
  EXPECT_LE(rec.value("seconds_min", 1e300), sec);
  EXPECT_EQ(rec["iter_seconds"].size(), 2u) << rec.dump();
  EXPECT_NEAR(rec.value("gflops", 0.0), 2.0 * 128 * 128 * 128 / sec / 1e9,
              1e-9 * rec.value("gflops", 0.0));
  EXPECT_EQ(rec.value("panel_bytes", -1.0), 0.0) << rec.dump();
  ASSERT_TRUE(rec.contains("regions")) << rec.dump();
  EXPECT_TRUE(rec["regions"].contains("compute")) << rec.dump();
  EXPECT_EQ(rec["regions"]["compute"].value("threads", 0), 2) << rec.dump();
  EXPECT_FALSE(rec["regions"].contains("communicate")) << "one process moves no panels";
  // The summary line's compute time is the record's (slowest thread, per multiplication).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(compute ([0-9.]+) s, communicate)")))
      << r.describe();
  char want[32];
  std::snprintf(want, sizeof want, "%.4f",
                rec["regions"]["compute"].value("max_seconds", 0.0) / rec.value("iters", 1));
  EXPECT_EQ(m[1].str(), want) << r.describe();
}

TEST_F(Cli, RunGemmOverProcessesUsesTheRingWhenPIsPrimeElseTheGrid) {
  const std::map<int, std::pair<std::string, std::string>> want = {{3, {"1x3", "ring"}},
                                                                   {4, {"2x2", "summa"}}};
  for (const auto& [p, grid] : want) {
    const std::string file = fmt_file("g", p);
    const Outcome r =
        run_compas_job(p, {"run", "gemm", "--n", "97", "--iters", "1", "--json", path(file)},
                       {{"COMPAS_TIMEOUT", "30"}});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    const json j = load_json(file);
    const json& rec = j["results"][0];
    EXPECT_EQ(rec.value("processes", 0), p);
    EXPECT_EQ(rec.value("grid", ""), grid.first) << rec.dump();
    EXPECT_EQ(rec.value("algorithm", ""), grid.second) << rec.dump();
    EXPECT_TRUE(rec.value("verified", false)) << rec.dump();
    EXPECT_TRUE(rec["regions"].contains("communicate")) << rec.dump();
    EXPECT_TRUE(rec["regions"].contains("compute")) << rec.dump();
    EXPECT_GT(rec.value("panel_bytes", 0.0), 0.0) << rec.dump();
  }
}

TEST_F(Cli, RunGemmThatFailsVerificationExitsOneAndSaysWhy) {
  const Outcome r = run_compas({"run", "gemm", "--n", "64", "--iters", "1", "--threads", "1",
                                "--inject-fault", "--json", path("bad.json")});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.out.find("VERIFICATION FAILED: Freivalds"), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("exceeds"), std::string::npos) << r.describe();
  const json j = load_json("bad.json");  // the record is still written, marked unverified
  EXPECT_FALSE(j["results"][0].value("verified", true));
}

}  // namespace
