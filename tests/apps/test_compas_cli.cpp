// Tests of the `compas` command line, run as a separate process the way a user runs it
// (posix_spawn with stdout and stderr captured): the report files of `topology`, `barrier`,
// `membw` and `cache` (with and without --events counters), and the contract for bad input:
// exit code 2, a message on stderr naming the flag or value, nothing measured and no output
// file written. Sizes are tiny; no test passes or fails on a measured time or rate.
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
#include "compas/perf/extrap.hpp"
#include "compas/threads/domain.hpp"

namespace {

using namespace cli;

// ---- topology --------------------------------------------------------------------------------

TEST_F(Cli, TopologyWritesJsonAndCsv) {
  const Outcome r = run_compas({"topology", "--json", path("t.json"), "--csv", path("t.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("placement"), std::string::npos) << "no table on stdout\n" << r.describe();
  EXPECT_EQ(files(), (std::set<std::string>{"t.json", "t.csv"}))
      << "leftover or missing files (a *.tmp.* file means a write was not renamed)";

  const json j = load_json("t.json");
  expect_report_header(j, "topology");
  const json& results = j["results"];
  ASSERT_FALSE(results.empty());
  // Default: one thread per core.
  EXPECT_EQ(results.size(), j["machine"]["cores"].get<std::size_t>());
  std::set<int> cpus;
  for (std::size_t t = 0; t < results.size(); ++t) {
    const json& rec = results[t];
    for (const char* k : {"thread", "cpu", "core", "socket"})
      ASSERT_TRUE(rec.contains(k) && rec[k].is_number_integer()) << k << " in " << rec.dump();
    EXPECT_EQ(rec["thread"].get<std::size_t>(), t);
    EXPECT_GE(rec["socket"].get<int>(), 0);
    EXPECT_LT(rec["socket"].get<int>(), j["machine"]["sockets"].get<int>());
    cpus.insert(rec["cpu"].get<int>());
  }
  EXPECT_EQ(cpus.size(), results.size()) << "two threads on one cpu without --oversubscribe";
  expect_csv(read_file(dir_ / "t.csv"), results.size(), {"thread", "cpu", "core", "socket"});
}

TEST_F(Cli, TopologyQuietPrintsNothing) {
  const Outcome r = run_compas({"topology", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(files().empty());
}

TEST_F(Cli, TopologySyntheticScatterAlternatesSockets) {
  const Outcome r = run_compas({"topology", "--topology", "pack:2 numa:1 l3:1 core:8 pu:2",
                                "--threads", "4", "--bind", "scatter", "--json", path("s.json")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json j = load_json("s.json");
  expect_report_header(j, "topology");
  EXPECT_EQ(j["machine"]["sockets"], 2);
  EXPECT_EQ(j["machine"]["cores"], 16);
  EXPECT_EQ(j["machine"]["pus"], 32);
  std::vector<int> sockets;
  for (const auto& rec : j["results"]) sockets.push_back(rec["socket"].get<int>());
  EXPECT_EQ(sockets, (std::vector<int>{0, 1, 0, 1}));
}

TEST_F(Cli, TopologyThreadsFromEnvironment) {
  const Outcome r =
      run_compas({"topology", "--quiet", "--json", path("e.json")}, {{"COMPAS_THREADS", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json j = load_json("e.json");
  EXPECT_EQ(j["results"].size(), 1u);
}

TEST_F(Cli, TopologyOversubscribeAllowed) {
  const int pus = host_pus();
  ASSERT_GT(pus, 0);
  const Outcome r = run_compas({"topology", "--quiet", "--threads", std::to_string(pus + 1),
                                "--oversubscribe", "--json", path("o.json")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(load_json("o.json")["results"].size(), static_cast<std::size_t>(pus + 1));
}

// ---- barrier ---------------------------------------------------------------------------------

void expect_barrier_record(const json& rec) {
  for (const char* k : {"algorithm", "policy"})
    ASSERT_TRUE(rec.contains(k) && rec[k].is_string()) << k << " in " << rec.dump();
  for (const char* k : {"threads"})
    ASSERT_TRUE(rec.contains(k) && rec[k].is_number_integer()) << k << " in " << rec.dump();
  for (const char* k : {"ns_per_barrier", "min_ns_per_barrier", "max_ns_per_barrier"})
    ASSERT_TRUE(rec.contains(k) && rec[k].is_number()) << k << " in " << rec.dump();
  ASSERT_TRUE(rec.contains("oversubscribed") && rec["oversubscribed"].is_boolean()) << rec.dump();
  const double ns = rec["ns_per_barrier"], lo = rec["min_ns_per_barrier"],
               hi = rec["max_ns_per_barrier"];
  EXPECT_GT(ns, 0.0) << rec.dump();
  EXPECT_LE(lo, ns) << rec.dump();
  EXPECT_LE(ns, hi) << rec.dump();
}

using Key = std::tuple<std::string, std::string, int>;  // algorithm, policy, threads

std::map<Key, int> count_records(const json& results) {
  std::map<Key, int> seen;
  for (const auto& rec : results)
    ++seen[{rec.value("algorithm", "?"), rec.value("policy", "?"), rec.value("threads", -1)}];
  return seen;
}

TEST_F(Cli, BarrierEveryAlgorithmPolicyAndOmp) {
  const Outcome r = run_compas({"barrier", "--threads", "1,2", "--repeats", "3", "--target-ms", "1",
                                "--json", path("b.json"), "--csv", path("b.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(files(), (std::set<std::string>{"b.json", "b.csv"}));
  const json j = load_json("b.json");
  expect_report_header(j, "barrier");
  const json& results = j["results"];
  for (const auto& rec : results) expect_barrier_record(rec);

  std::map<Key, int> expected;
  for (int t : {1, 2}) {
    for (const char* a : {"central", "dissemination", "tree"})
      for (const char* p : {"spin", "yield", "block", "auto"}) expected[{a, p, t}] = 1;
    for (const char* p : {"active", "passive"}) expected[{"omp", p, t}] = 1;
  }
  EXPECT_EQ(count_records(results), expected);
  EXPECT_EQ(results.size(), 2u * (3 * 4 + 2));
  expect_csv(read_file(dir_ / "b.csv"), results.size(),
             {"algorithm", "policy", "threads", "ns_per_barrier"});
}

TEST_F(Cli, BarrierOversubscribedFinishes) {
  const int pus = host_pus();
  ASSERT_GT(pus, 0);
  const Outcome r =
      run_compas({"barrier", "--threads", "4", "--oversubscribe", "--repeats", "2", "--target-ms",
                  "1", "--wait", "auto,yield", "--algorithms", "central,dissemination", "--omp",
                  "passive", "--quiet", "--json", path("o.json")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json j = load_json("o.json");
  const json& results = j["results"];
  for (const auto& rec : results) {
    expect_barrier_record(rec);
    if (pus < 4) {
      EXPECT_TRUE(rec.value("oversubscribed", false)) << rec.dump();
    }
    EXPECT_EQ(rec.value("threads", 0), 4) << rec.dump();
  }
  std::map<Key, int> expected;
  for (const char* a : {"central", "dissemination"})
    for (const char* p : {"auto", "yield"}) expected[{a, p, 4}] = 1;
  expected[{"omp", "passive", 4}] = 1;
  EXPECT_EQ(count_records(results), expected);
}

// ---- membw and cache --------------------------------------------------------------------------

// The measurement records of a membw report (the per-kernel summaries have no thread count).
std::vector<json> membw_points(const json& j) {
  std::vector<json> out;
  for (const auto& rec : j["results"])
    if (rec.contains("threads")) out.push_back(rec);
  return out;
}

// The chase and stream records of a cache report (knees left out).
std::vector<json> cache_points(const json& j) {
  std::vector<json> out;
  for (const auto& rec : j["results"])
    if (rec.value("pattern", "") == "chase" || rec.value("pattern", "") == "stream")
      out.push_back(rec);
  return out;
}

// Lines of `text` containing `needle`.
int count_lines_with(const std::string& text, const std::string& needle) {
  int n = 0;
  for (const auto& line : lines_of(text)) n += line.find(needle) != std::string::npos;
  return n;
}

// On a machine where PAPI itself cannot start there is nothing to count; say so and skip.
#define SKIP_WITHOUT_PAPI(outcome)                                      \
  if ((outcome).err.find("PAPI unavailable") != std::string::npos) {    \
    GTEST_SKIP() << "PAPI does not initialise here: " << (outcome).err; \
  }

// Where PAPI's perf_event component is disabled (libpfm4 does not know this CPU) PAPI counts no
// CPU event at all, software ones included: the run must still succeed, measuring time only, and
// say why in one line; what it would have counted cannot be checked here.
#define SKIP_WITHOUT_CPU_EVENTS(outcome)                                              \
  SKIP_WITHOUT_PAPI(outcome)                                                          \
  if ((outcome).err.find("perf_event component is disabled") != std::string::npos) {  \
    EXPECT_EQ((outcome).exit_code, 0) << (outcome).describe();                        \
    EXPECT_EQ(count_lines_with((outcome).err, "perf_event component is disabled"), 1) \
        << (outcome).describe();                                                      \
    GTEST_SKIP() << "PAPI counts no CPU event here: " << (outcome).err;               \
  }

// The software events every record of a --events soft run counts.
void expect_task_clock(const json& rec) {
  ASSERT_TRUE(rec.contains("counters") && rec["counters"].is_object()) << rec.dump();
  const json& c = rec["counters"];
  ASSERT_TRUE(c.contains("perf::TASK-CLOCK")) << rec.dump();
  ASSERT_TRUE(c["perf::TASK-CLOCK"].is_number_integer()) << rec.dump();
  EXPECT_GT(c["perf::TASK-CLOCK"].get<long long>(), 0) << rec.dump();
  for (const auto& [event, value] : c.items()) {
    EXPECT_EQ(event.rfind("perf::", 0), 0u) << "not a requested software event: " << event;
    EXPECT_TRUE(value.is_number_integer()) << event << " in " << rec.dump();
  }
  ASSERT_TRUE(rec.contains("derived") && rec["derived"].is_object()) << rec.dump();
}

TEST_F(Cli, MembwCopyWritesJsonRecords) {
  const Outcome r = run_compas({"membw", "--size", "1MiB", "--threads", "1", "--repeats", "1",
                                "--kernels", "copy", "--json", path("m.json")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("copy"), std::string::npos) << "no table on stdout\n" << r.describe();
  EXPECT_EQ(r.out.find("regions"), std::string::npos) << "region table without --events\n"
                                                      << r.describe();
  EXPECT_EQ(files(), (std::set<std::string>{"m.json"}));
  const json j = load_json("m.json");
  expect_report_header(j, "membw");
  const auto points = membw_points(j);
  ASSERT_EQ(points.size(), 1u) << j["results"].dump();
  const json& rec = points[0];
  EXPECT_EQ(rec.value("kernel", ""), "copy");
  ASSERT_TRUE(rec["threads"].is_number_integer());
  EXPECT_EQ(rec["threads"].get<int>(), 1);
  for (const char* k : {"bandwidth_gbs", "per_thread_gbs"}) {
    ASSERT_TRUE(rec.contains(k) && rec[k].is_number()) << k << " in " << rec.dump();
    EXPECT_GT(rec[k].get<double>(), 0) << k;
  }
  EXPECT_DOUBLE_EQ(rec["per_thread_gbs"].get<double>(), rec["bandwidth_gbs"].get<double>());
  EXPECT_EQ(rec.value("verified", false), true) << rec.dump();
  // No counters unless asked for: the probe runs unperturbed.
  EXPECT_FALSE(rec.contains("counters")) << rec.dump();
  EXPECT_FALSE(rec.contains("derived")) << rec.dump();
}

// --workgroup S0:SIZE: the team on socket 0's PUs, physical cores first, thread counts 1..PUs
// of the socket (at most 2 here, to stay short), the working set SIZE; said in the params.
TEST_F(Cli, MembwWorkgroupPlacesTheTeamOnTheDomain) {
  const Outcome r = run_compas({"membw", "--workgroup", "S0:2MiB:1", "--repeats", "1", "--kernels",
                                "copy", "--json", path("w.json")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json j = load_json("w.json");
  EXPECT_EQ(j["params"].value("workgroup", ""), "S0:2MiB:1");
  EXPECT_EQ(j["params"].value("domain", ""), "S0");
  EXPECT_EQ(j["params"].value("size_bytes", 0ull), 2ull << 20);
  EXPECT_EQ(j["params"]["threads"], json::array({1}));
  const auto topo = compas::threads::Topology::host();
  const auto s0 = compas::threads::domain_pus(topo, {'S', 0});
  EXPECT_EQ(j["params"].value("bind", ""), std::to_string(s0.front()));
  const auto points = membw_points(j);
  ASSERT_EQ(points.size(), 1u) << j["results"].dump();
  EXPECT_EQ(points[0].value("cpus", ""), std::to_string(s0.front()));
}

// --numa-matrix: one record per (threads' node, memory's node) pair of the machine, the threads
// one per core of their node; the memory bound there (binding refused would fail the run).
TEST_F(Cli, MembwNumaMatrixHasEveryPairOfNodes) {
  const Outcome r = run_compas({"membw", "--numa-matrix", "--size", "2MiB", "--repeats", "1",
                                "--kernels", "copy", "--json", path("n.json")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json j = load_json("n.json");
  EXPECT_EQ(j.value("command", ""), "membw-numa");
  const auto topo = compas::threads::Topology::host();
  const int nodes = compas::threads::domain_count(topo, 'M');
  EXPECT_EQ(j["params"].value("numa_nodes", 0), nodes);
  // Bandwidth (copy) and latency for every pair.
  ASSERT_EQ(j["results"].size(), static_cast<std::size_t>(2 * nodes * nodes)) << j.dump();
  std::set<std::string> pairs;
  for (const auto& rec : j["results"]) {
    pairs.insert(rec.value("kernel", "") + " " + rec.value("threads_on", "") + "/" +
                 rec.value("memory_on", ""));
    if (rec.value("kernel", "") == "latency") {
      EXPECT_GT(rec.value("latency_ns", 0.0), 0.0) << rec.dump();
    } else {
      EXPECT_TRUE(rec.value("verified", false)) << rec.dump();
      EXPECT_GT(rec.value("bandwidth_gbs", 0.0), 0.0) << rec.dump();
    }
  }
  EXPECT_EQ(pairs.size(), static_cast<std::size_t>(2 * nodes * nodes));
  EXPECT_TRUE(pairs.count("copy M0/M0"));
  EXPECT_TRUE(pairs.count("latency M0/M0"));
  EXPECT_NE(r.out.find("mem M0"), std::string::npos) << r.describe();
}

TEST_F(Cli, MembwSoftEventsCountTaskClockPerPoint) {
  const Outcome r =
      run_compas({"membw", "--size", "1MiB", "--threads", "1,2", "--oversubscribe", "--repeats",
                  "1", "--kernels", "copy", "--events", "soft", "--json", path("m.json")});
  SKIP_WITHOUT_CPU_EVENTS(r);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json j = load_json("m.json");
  const auto points = membw_points(j);
  ASSERT_EQ(points.size(), 2u) << j["results"].dump();
  for (const auto& rec : points) {
    SCOPED_TRACE(rec.dump());
    expect_task_clock(rec);
    // The kernel's own bytes over the region's time.
    ASSERT_TRUE(rec["derived"].contains("bandwidth_gbs"));
    EXPECT_GT(rec["derived"]["bandwidth_gbs"].get<double>(), 0);
  }
  const json& ev = j["params"]["events"];
  EXPECT_NE(std::find(ev["counted"].begin(), ev["counted"].end(), "perf::TASK-CLOCK"),
            ev["counted"].end())
      << ev.dump();
  // The region table follows the bandwidth table: one region per kernel x thread count.
  const auto table = r.out.find("regions");
  ASSERT_NE(table, std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("copy T=1", table), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("copy T=2", table), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("perf::TASK-CLOCK", table), std::string::npos) << r.describe();
}

// A hardware event: counted where the machine has it; elsewhere (this VM) one notice line, the
// software fallback, and no number under the missing event's name.
TEST_F(Cli, MembwMissingHardwareEventFallsBackWithOneNotice) {
  const Outcome r = run_compas({"membw", "--size", "1MiB", "--threads", "1,2", "--oversubscribe",
                                "--repeats", "1", "--kernels", "copy", "--events", "PAPI_L3_TCM",
                                "--quiet", "--json", path("m.json")});
  SKIP_WITHOUT_PAPI(r);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto points = membw_points(load_json("m.json"));
  ASSERT_EQ(points.size(), 2u);
  const int notices = count_lines_with(r.err, "PAPI_L3_TCM");
  for (const auto& rec : points) {
    SCOPED_TRACE(rec.dump());
    ASSERT_TRUE(rec.contains("counters") && rec["counters"].is_object());
    const json& c = rec["counters"];
    if (c.contains("PAPI_L3_TCM")) {
      EXPECT_GT(c["PAPI_L3_TCM"].get<long long>(), 0);
      EXPECT_TRUE(rec["derived"].contains("memory_bytes_est"));
    } else {
      EXPECT_EQ(notices, 1) << "the fallback must be said once, for both teams\n" << r.describe();
      EXPECT_FALSE(rec["derived"].contains("memory_bytes_est"));
      for (const auto& [event, value] : c.items()) EXPECT_NE(event.rfind("PAPI_", 0), 0u) << event;
    }
  }
  EXPECT_LE(notices, 1) << r.describe();
  EXPECT_EQ(r.out, "") << "--quiet";
}

TEST_F(Cli, MembwEventsFromEnvironmentFlagWins) {
  const std::vector<std::string> args = {"membw", "--size",    "1MiB",   "--threads",
                                         "1",     "--repeats", "1",      "--kernels",
                                         "load",  "--quiet",   "--json", path("e.json")};
  std::vector<std::string> with_flag = args;
  with_flag.insert(with_flag.end(), {"--events", "perf::TASK-CLOCK"});
  Outcome r = run_compas(with_flag, {{"COMPAS_EVENTS", "NOT_AN_EVENT"}});
  ASSERT_EQ(r.exit_code, 0) << "the flag must win over COMPAS_EVENTS\n" << r.describe();
  SKIP_WITHOUT_CPU_EVENTS(r);
  for (const auto& rec : membw_points(load_json("e.json"))) {
    expect_task_clock(rec);
    EXPECT_EQ(rec["counters"].size(), 1u) << rec.dump();
  }

  r = run_compas(args, {{"COMPAS_EVENTS", "soft"}});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  for (const auto& rec : membw_points(load_json("e.json"))) expect_task_clock(rec);
}

TEST_F(Cli, CacheWithoutEventsHasNoCounters) {
  const Outcome r = run_compas({"cache", "--min", "4KiB", "--max", "8KiB", "--repeats", "1",
                                "--repeat-ms", "0.5", "--json", path("c.json")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json j = load_json("c.json");
  expect_report_header(j, "cache");
  const auto points = cache_points(j);
  ASSERT_FALSE(points.empty());
  for (const auto& rec : points) EXPECT_FALSE(rec.contains("counters")) << rec.dump();
  EXPECT_EQ(r.out.find("regions"), std::string::npos) << r.describe();
}

TEST_F(Cli, CacheSoftEventsCountEverySize) {
  const Outcome r = run_compas(
      {"cache", "--min", "4KiB", "--max", "64KiB", "--events", "soft", "--json", path("c.json")});
  SKIP_WITHOUT_CPU_EVENTS(r);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json j = load_json("c.json");
  const auto points = cache_points(j);
  ASSERT_GE(points.size(), 2u);
  for (const auto& rec : points) {
    SCOPED_TRACE(rec.dump());
    expect_task_clock(rec);
    if (rec["pattern"] == "stream") {
      ASSERT_TRUE(rec["derived"].contains("bandwidth_gbs"));
      EXPECT_GT(rec["derived"]["bandwidth_gbs"].get<double>(), 0);
    }
  }
  for (const auto& rec : j["results"])
    if (rec.value("pattern", "") == "knee") {
      EXPECT_FALSE(rec.contains("counters")) << rec.dump();
    }
  const auto table = r.out.find("regions");
  ASSERT_NE(table, std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("\nchase ", table), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("\nstream ", table), std::string::npos) << r.describe();
}

// ---- help and version ------------------------------------------------------------------------

TEST_F(Cli, PingpongUnderLauncherMeasuresEveryOpAndSize) {
  const Outcome r = run_compas_job(2,
                                   {"pingpong", "--sizes", "8,4KiB", "--iters", "30", "--repeats",
                                    "1", "--json", path("p.json")},
                                   {{"COMPAS_TIMEOUT", "30"}});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(files(), (std::set<std::string>{"p.json"}));  // rank 0 alone writes the report
  const json j = load_json("p.json");
  expect_report_header(j, "pingpong");
  EXPECT_EQ(j["params"].value("processes", 0), 2);
  EXPECT_FALSE(j["params"].value("transport", std::string()).empty()) << j["params"].dump();
  std::set<std::pair<std::string, int>> seen;
  for (const json& rec : j["results"]) {
    const std::string op = rec.value("op", "");
    const int bytes = rec.value("bytes", -1);
    seen.insert({op, bytes});
    ASSERT_TRUE(rec["latency_us"].is_number()) << rec.dump();
    EXPECT_GT(rec["latency_us"].get<double>(), 0) << rec.dump();
    EXPECT_GT(rec["bandwidth_mbs"].get<double>(), 0) << rec.dump();
    EXPECT_NEAR(rec["bandwidth_mbs"].get<double>(), bytes / rec["latency_us"].get<double>(),
                1e-6 * rec["bandwidth_mbs"].get<double>())
        << "MB/s is bytes per microsecond: " << rec.dump();
    EXPECT_FALSE(rec.value("transport", std::string()).empty()) << rec.dump();
  }
  for (const char* op : {"put", "put_signal", "get", "put_flush", "put_bw"})
    for (int bytes : {8, 4096})
      EXPECT_TRUE(seen.count({op, bytes})) << op << " " << bytes << " missing\n" << j.dump();
  // Without mpirun the MPI baselines are skipped, and say so.
  EXPECT_FALSE(seen.count({"mpi_sendrecv", 8}));
  EXPECT_NE(r.out.find("mpi_sendrecv"), std::string::npos) << r.describe();
}

// "<stem><p>.json", built piecewise (GCC 12 warns falsely on "lit" + std::to_string(...)).
std::string fmt_file(const char* stem, int p) {
  std::string s = stem;
  s += std::to_string(p);
  s += ".json";
  return s;
}

TEST_F(Cli, BarrierUnderLauncherMeasuresTheProcessBarrier) {
  // Two processes fit the two-core slices compas-run hands out, so the comm layer must find the
  // job not oversubscribed and spin; three must back off.
  for (int p : {2, 3}) {
    const std::string file = fmt_file("b", p);
    const Outcome r =
        run_compas_job(p, {"barrier", "--repeats", "3", "--target-ms", "2", "--json", path(file)},
                       {{"COMPAS_TIMEOUT", "30"}});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    const json j = load_json(file);
    expect_report_header(j, "barrier");
    EXPECT_EQ(j["params"].value("processes", 0), p);
    EXPECT_EQ(j["params"].value("bootstrap", std::string()), "tcp");
    // Both node barrier algorithms, the chosen one first; no MPI_Barrier without mpirun.
    ASSERT_EQ(j["results"].size(), 2u) << j.dump();
    const bool over = p > static_cast<int>(std::thread::hardware_concurrency());
    EXPECT_EQ(j["results"][0].value("algorithm", ""), over ? "host" : "dissemination") << j.dump();
    EXPECT_EQ(j["results"][1].value("algorithm", ""), over ? "dissemination" : "host") << j.dump();
    EXPECT_TRUE(j["results"][0].value("chosen", false)) << j.dump();
    EXPECT_FALSE(j["results"][1].value("chosen", true)) << j.dump();
    for (const json& rec : j["results"]) {
      EXPECT_EQ(rec.value("scope", ""), "process") << rec.dump();
      EXPECT_EQ(rec.value("processes", 0), p) << rec.dump();
      EXPECT_EQ(rec.value("oversubscribed", !over), over) << rec.dump();
      EXPECT_EQ(rec.value("policy", ""), over ? "backoff" : "spin") << rec.dump();
      const double ns = rec.value("ns_per_barrier", 0.0);
      EXPECT_GT(ns, 0) << rec.dump();
      EXPECT_LE(rec.value("min_ns_per_barrier", 1e300), ns) << rec.dump();
      EXPECT_GE(rec.value("max_ns_per_barrier", 0.0), ns) << rec.dump();
      EXPECT_EQ(rec.value("repeats", 0), 3) << rec.dump();
    }
    EXPECT_NE(r.out.find("MPI_Barrier is measured beside it"), std::string::npos) << r.describe();
  }
}

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
  EXPECT_EQ(rec.value("nodes", 0), 1);
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
    EXPECT_EQ(rec.value("nodes", 0), p);
    EXPECT_TRUE(rec.value("verified", false)) << rec.dump();
    if (p > 1) {
      EXPECT_TRUE(rec["regions"].contains("communicate")) << rec.dump();
    }
    hashes.insert(rec.value("field_hash", ""));
  }
  EXPECT_EQ(hashes.size(), 1u) << "the field differs between job shapes";
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
  EXPECT_EQ(rec.value("nodes", 0), 1);
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
    EXPECT_EQ(rec.value("nodes", 0), p);
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
// bitwise the same. Oversubscribed on a small machine: only bytes are compared, not time.
TEST_F(Cli, RunCgGridSendsFewerBytesPerProcessThanRowsWithTheSameZeta) {
  std::map<int, json> rec;
  for (int p : {4, 16}) {
    const std::string file = fmt_file("cg_grid", p);
    const Outcome r = run_compas_job(p, {"run", "cg", "--class", "A", "--json", path(file)},
                                     {{"COMPAS_TIMEOUT", "120"}});
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
  EXPECT_EQ(rec[4].value("zeta", 0.0), rec[16].value("zeta", 1.0));
  EXPECT_EQ(rec[4].value("rnorm", 0.0), rec[16].value("rnorm", 1.0));
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
  EXPECT_EQ(rec.value("nodes", 0), 1);
  EXPECT_EQ(rec.value("threads", 0), 2);
  EXPECT_EQ(rec.value("keys", 0), 65536);
  EXPECT_EQ(rec.value("dist", ""), "npb");
  EXPECT_EQ(rec.value("iters", 0), 3);
  EXPECT_TRUE(rec.value("verified", false)) << rec.dump();
  EXPECT_FALSE(rec.value("verification", "").empty());
  const double seconds = rec.value("seconds", 0.0);
  EXPECT_GT(seconds, 0);
  EXPECT_LE(seconds, rec.value("median_seconds", 0.0));
  ASSERT_EQ(rec["iteration_seconds"].size(), 3u) << rec.dump();
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
    EXPECT_EQ(rec.value("nodes", 0), p);
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
  EXPECT_EQ(rec.value("nodes", 0), 1);
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
    EXPECT_EQ(rec.value("nodes", 0), p);
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

// As the study report prints seconds: four decimals.
std::string fmt_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

std::vector<json> jsonl(const std::string& file) {
  std::vector<json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

std::set<std::string> run_ids(const std::string& file) {
  std::set<std::string> ids;
  for (const auto& j : jsonl(file)) ids.insert(j.value("id", ""));
  return ids;
}

TEST_F(Cli, StudyWritesAFullReportThenSkipsWhatIsDone) {
  const std::string out = path("study");
  const Outcome r = run_compas({"study", "--out", out, "--budget", "1", "--repeats", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto runs = jsonl(out + "/runs.jsonl");
  // 7 characterization runs + 2 runs of 2 sizes x 4 shapes of each of laplace, gemm, cg, sort.
  ASSERT_EQ(runs.size(), 71u) << r.describe();
  for (const auto& j : runs) EXPECT_EQ(j.value("exit", -1), 0) << j.dump();
  const std::string md = read_file(out + "/report.md");
  for (const char* section : {"## Machine",
                              "## Memory bandwidth",
                              "## Loaded latency",
                              "## The kernels against the bus",
                              "## Cache working sets",
                              "## Thread barrier",
                              "## Process barrier",
                              "## Put latency",
                              "## laplace n=640",
                              "Amdahl fit",
                              "Performance model of time against p = P x T",
                              "Extra-P's text format",
                              "## cg class=T",
                              "## cg class=W",
                              "| mops |",
                              "## sort keys=4M",
                              "| mkeys_per_s |",
                              "## gemm n=256",
                              "| gflops |",
                              "Table 6",
                              "Verdict: ",
                              "COMPaS 1998",
                              "All planned runs finished"})
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
    ASSERT_EQ(row["seconds_samples"].size(), 2u) << row.dump();
    EXPECT_LE(row.value("seconds_min", 1e9), row.value("seconds", 0.0)) << row.dump();
    EXPECT_GE(row.value("seconds_max", 0.0), row.value("seconds", 1e9)) << row.dump();
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
  // The times in Extra-P's text format, one file per kernel size: a DATA line per P x T.
  const auto extrap = compas::perf::parse_extrap_text(read_file(out + "/extrap/laplace_n640.txt"));
  EXPECT_EQ(extrap.parameters, (std::vector<std::string>{"processes", "threads"}));
  EXPECT_EQ(extrap.points.size(), 4u);
  ASSERT_EQ(extrap.series.size(), 1u);
  EXPECT_EQ(extrap.series[0].region, "laplace n=640");
  EXPECT_EQ(extrap.series[0].values.size(), 4u);
  ASSERT_TRUE(study["kernels"].contains("cg class=W")) << study.dump();
  EXPECT_EQ(study["kernels"]["cg class=W"].value("rate_field", ""), "mops");
  for (const auto& row : study["kernels"]["cg class=W"]["rows"]) {
    EXPECT_TRUE(row.value("verified", false)) << row.dump();
    EXPECT_GT(row.value("rate", 0.0), 0) << row.dump();
  }
  // The kernel tables as CSV: a header and one row per kernel run (8 sizes x 4 shapes).
  {
    std::ifstream in(out + "/study.csv");
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    ASSERT_EQ(lines.size(), 33u) << read_file(out + "/study.csv");
    EXPECT_EQ(lines[0].rfind("kernel,size,procs,threads,oversubscribed,seconds,", 0), 0u);
    for (std::size_t i = 1; i < lines.size(); ++i) {
      EXPECT_EQ(std::count(lines[i].begin(), lines[i].end(), ','), 20) << lines[i];
      EXPECT_EQ(lines[i].substr(lines[i].rfind(',') + 1), "2") << "runs: " << lines[i];
    }
  }
  // Every number in the kernel table comes from the runs' own JSON: the 1 x 1 row's min - max.
  const double one =
      load_json("study/raw/laplace_n640_p1t1.json")["results"][0].value("seconds", 0.0);
  const double two =
      load_json("study/raw/laplace_n640_p1t1_r2.json")["results"][0].value("seconds", 0.0);
  EXPECT_NE(md.find(fmt_double(std::min(one, two)) + " - " + fmt_double(std::max(one, two))),
            std::string::npos)
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
  const Outcome again = run_compas({"study", "--out", out, "--budget", "1", "--repeats", "2"});
  ASSERT_EQ(again.exit_code, 0) << again.describe();
  EXPECT_EQ(read_file(out + "/runs.jsonl"), before) << "a finished run was repeated";
  EXPECT_NE(again.out.find("71 of 71 runs done"), std::string::npos) << again.describe();
}

TEST_F(Cli, InterruptedStudyResumesToTheSameRuns) {
  const std::string out = path("study");
  std::vector<std::string> argv_s = {COMPAS_EXE, "study",   "--out",     out, "--budget",
                                     "1",        "--quiet", "--repeats", "1"};
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  // Stop it once it is into the kernel sweep (8 runs done), with Ctrl-C's signal.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::size_t lines = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(out + "/runs.jsonl");
    lines = 0;
    for (std::string l; std::getline(in, l);) ++lines;
    if (lines >= 8) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
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
  const Outcome rest = run_compas({"study", "--out", out, "--budget", "1", "--repeats", "1"});
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
  std::vector<std::string> argv_s = {COMPAS_EXE, "study",     "--out",   out,
                                     "--budget", "1",         "--quiet", "--kernels",
                                     "laplace",  "--repeats", "1"};
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
  const Outcome rest = run_compas({"study", "--out", out, "--budget", "1", "--quiet", "--kernels",
                                   "laplace", "--repeats", "1"});
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
  const std::vector<std::string> args = {"study",   "--out",     out,       "--budget",  "1",
                                         "--quiet", "--kernels", "laplace", "--repeats", "1"};
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
  const Outcome r = run_compas({"study", "--out", out, "--fresh", "--budget", "1"});
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

// ---- study: supervision of its runs ------------------------------------------------------------
// A launcher written by the test stands in for the runs: one that hangs, traps SIGINT, refuses
// to start or starts compas-run. The characterization runs the study starts itself are recorded
// as done beforehand, so that only the launcher's runs run. Hanging runs are `slow-rank`, a link
// to sleep in the test's directory, so that any of them left behind is found by its path.

// Records the characterization runs as done in `out`/runs.jsonl.
void seed_characterization_done(const std::string& out) {
  fs::create_directories(out);
  std::ofstream f(out + "/runs.jsonl");
  for (const std::string id : {"topology", "membw", "loaded_latency", "cache", "barrier_threads",
                               "barrier_p2", "barrier_p4", "pingpong"})
    f << json{{"id", id},  {"title", id},    {"kind", "characterize"},
              {"exit", 0}, {"seconds", 0.0}, {"json", "raw/" + id + ".json"}}
             .dump()
      << "\n";
}

// Writes an executable shell script into `dir` and returns its path.
std::string write_script(const fs::path& dir, const std::string& name, const std::string& body) {
  const fs::path p = dir / name;
  std::ofstream(p) << "#!/bin/sh\n" << body;
  fs::permissions(p, fs::perms::owner_all, fs::perm_options::add);
  return p.string();
}

// `dir`/slow-rank, a link to sleep: a run's process with the test's directory in its command line.
std::string slow_rank(const fs::path& dir) {
  const fs::path link = dir / "slow-rank";
  for (const char* sleep : {"/usr/bin/sleep", "/bin/sleep"})
    if (fs::exists(sleep)) {
      fs::create_symlink(sleep, link);
      break;
    }
  EXPECT_TRUE(fs::exists(link)) << "no sleep program";
  return link.string();
}

// Kills, at the end of a test, the processes with `marker` in their command line: a study that
// fails its test may leave its runs behind.
struct KillLeftovers {
  std::string marker;
  ~KillLeftovers() {
    for (pid_t pid : compas::testing::processes_with(marker)) kill(pid, SIGKILL);
  }
};

// A tiny study: Laplace over `grid`, every run through `launcher`.
std::vector<std::string> study_args(const std::string& out, const std::string& launcher,
                                    const std::string& grid) {
  return {"study",  "--out", out,          "--budget", "0.1",       "--kernels", "laplace",
          "--grid", grid,    "--launcher", launcher,   "--repeats", "1"};
}

// The same as a command line for compas::testing::Proc.
std::vector<std::string> study_command(const std::string& out, const std::string& launcher,
                                       const std::string& grid) {
  std::vector<std::string> argv = {COMPAS_EXE};
  for (auto& a : study_args(out, launcher, grid)) argv.push_back(a);
  return argv;
}

std::map<std::string, std::vector<json>> records_by_id(const std::string& file) {
  std::map<std::string, std::vector<json>> by_id;
  for (const auto& j : jsonl(file)) by_id[j.value("id", "")].push_back(j);
  return by_id;
}

// Waits up to 30 s for `done()`.
template <typename F>
bool eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return done();
}

// A hanging run is stopped at --run-timeout (SIGTERM, which it ignores, then SIGKILL) and
// recorded as failed; the runs after it still run.
TEST_F(Cli, StudyRunTimeoutStopsAHangingRunAndTheSweepGoesOn) {
  const std::string out = path("study"), slow = slow_rank(dir_);
  KillLeftovers cleanup{slow};
  seed_characterization_done(out);
  const std::string launcher = write_script(dir_, "launch.sh",
                                            R"(p=$1; shift
case "$p $*" in
  "2 "*"--n 640"*) echo "hanging now"; trap '' TERM; exec )" +
                                                slow + R"( 300 ;;
esac
exit 0
)");
  auto command = study_command(out, launcher + " {P}", "1x1,2x1");
  command.insert(command.end(), {"--run-timeout", "2"});
  compas::testing::Proc study(command, {});
  ASSERT_TRUE(study.wait(60)) << "the study hangs\n" << study.describe();
  ASSERT_EQ(study.exit_code, 0) << study.describe();
  auto runs = records_by_id(out + "/runs.jsonl");
  ASSERT_EQ(runs["laplace_n640_p2t1"].size(), 1u) << read_file(out + "/runs.jsonl");
  const json hung = runs["laplace_n640_p2t1"].back();
  EXPECT_TRUE(hung.value("failed", false)) << hung.dump();
  EXPECT_EQ(hung.value("reason", ""), "timed out after 2 s") << hung.dump();
  EXPECT_EQ(hung.value("exit", 0), 128 + SIGKILL) << "SIGTERM was ignored: " << hung.dump();
  EXPECT_NE(hung.value("log_tail", "").find("hanging now"), std::string::npos) << hung.dump();
  for (const char* id : {"laplace_n640_p1t1", "laplace_n1024_p1t1", "laplace_n1024_p2t1"}) {
    ASSERT_EQ(runs[id].size(), 1u) << id << "\n" << read_file(out + "/runs.jsonl");
    EXPECT_EQ(runs[id].back().value("exit", -1), 0) << runs[id].back().dump();
    EXPECT_FALSE(runs[id].back().contains("failed")) << runs[id].back().dump();
  }
  const std::string md = read_file(out + "/report.md");
  for (const char* part : {"## Failed runs", "### laplace n=640 on 2 x 1", "timed out after 2 s",
                           "logs/laplace_n640_p2t1.log", "hanging now"})
    EXPECT_NE(md.find(part), std::string::npos) << part << " missing\n" << md;
  EXPECT_NE(study.err.find("1 run failed"), std::string::npos) << study.describe();
  EXPECT_TRUE(compas::testing::none_left(slow, 10)) << "the timed-out run is still there";
}

// The first Ctrl-C is forwarded to the run, which goes on (its shell traps SIGINT, its sleep
// ignores it); the second kills the run's process group at once and the study ends with its
// partial report.
TEST_F(Cli, StudySecondInterruptKillsARunThatIgnoresTheFirst) {
  const std::string out = path("study"), slow = slow_rank(dir_), got = path("got-sigint");
  KillLeftovers cleanup{slow};
  seed_characterization_done(out);
  const std::string launcher =
      write_script(dir_, "launch.sh", "trap 'echo INT >> " + got + "' INT\n" + slow + R"( 300 &
while :; do wait $!; [ $? -gt 128 ] || exit 0; done
)");
  compas::testing::Proc study(study_command(out, launcher + " {P}", "1x1"), {});
  ASSERT_TRUE(eventually([&] { return !compas::testing::processes_with(slow).empty(); }))
      << "the run did not start\n"
      << study.describe();
  study.signal(SIGINT);
  ASSERT_TRUE(eventually([&] { return fs::exists(got); }))
      << "the first SIGINT did not reach the run";
  EXPECT_FALSE(study.wait(0.5)) << "the study ended on the first SIGINT\n" << study.describe();
  study.signal(SIGINT);
  ASSERT_TRUE(study.wait(30)) << "the second SIGINT did not stop the study";
  EXPECT_EQ(study.exit_code, 130) << study.describe();
  EXPECT_NE(read_file(out + "/report.md").find("Partial report"), std::string::npos);
  EXPECT_TRUE(compas::testing::none_left(slow, 10)) << "the run outlived the study";
  // A run stopped on request did not fail: it is not recorded, and runs again next time.
  EXPECT_FALSE(records_by_id(out + "/runs.jsonl").count("laplace_n640_p1t1"));
}

// SIGKILL gives the study no chance to stop its run: the run (compas-run and its ranks) must die
// with it all the same.
TEST_F(Cli, StudyKilledTakesItsRunWithIt) {
  const std::string out = path("study"), slow = slow_rank(dir_);
  KillLeftovers cleanup{slow};
  seed_characterization_done(out);
  const std::string launcher = write_script(
      dir_, "launch.sh", std::string("exec ") + COMPAS_RUN_EXE + " -n 2 -t 1 " + slow + " 300\n");
  compas::testing::Proc study(study_command(out, launcher + " {P}", "2x1"), {});
  // compas-run and its two ranks.
  ASSERT_TRUE(eventually([&] { return compas::testing::processes_with(slow).size() == 3; }))
      << study.describe();
  study.signal(SIGKILL);
  ASSERT_TRUE(study.wait(10));
  EXPECT_TRUE(compas::testing::none_left(slow, 10))
      << compas::testing::processes_with(slow).size() << " processes of the run outlived the study";
}

// A launcher that refuses the P = 2 runs while the file `refuse` exists, and starts the others
// with compas-run.
std::string refusing_launcher(const fs::path& dir, const std::string& refuse) {
  return write_script(dir, "launch.sh",
                      "p=$1; shift\nif [ \"$p\" = 2 ] && [ -e " + refuse +
                          " ]; then\n  echo 'launcher: cannot place 2 processes here' >&2\n  "
                          "exit 3\nfi\nexec " +
                          COMPAS_RUN_EXE + " -n \"$p\" -t 1 \"$@\"\n");
}

const char* const kRefused[] = {"laplace_n640_p2t1", "laplace_n1024_p2t1"};
const char* const kPlaced[] = {"laplace_n640_p1t1", "laplace_n1024_p1t1"};

TEST_F(Cli, StudyRecordsARefusedRunAndFinishesTheRest) {
  const std::string out = path("study"), refuse = path("refuse");
  std::ofstream(refuse) << "refuse\n";
  seed_characterization_done(out);
  const Outcome r =
      run_compas(study_args(out, refusing_launcher(dir_, refuse) + " {P}", "1x1,2x1"));
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  auto runs = records_by_id(out + "/runs.jsonl");
  for (const char* id : kRefused) {
    ASSERT_EQ(runs[id].size(), 1u) << id << "\n" << read_file(out + "/runs.jsonl");
    const json f = runs[id].back();
    EXPECT_TRUE(f.value("failed", false)) << f.dump();
    EXPECT_EQ(f.value("exit", 0), 3) << f.dump();
    EXPECT_EQ(f.value("reason", ""), "exit 3") << f.dump();
    EXPECT_NE(f.value("log_tail", "").find("cannot place 2 processes here"), std::string::npos)
        << f.dump();
  }
  for (const char* id : kPlaced) {
    ASSERT_EQ(runs[id].size(), 1u) << id << "\n" << read_file(out + "/runs.jsonl");
    EXPECT_EQ(runs[id].back().value("exit", -1), 0) << runs[id].back().dump();
    EXPECT_TRUE(fs::exists(out + "/raw/" + id + ".json")) << id;
  }
  const std::string md = read_file(out + "/report.md");
  for (const char* part :
       {"Partial report", "## laplace n=640", "## Failed runs", "### laplace n=640 on 2 x 1",
        "### laplace n=1024 on 2 x 1", "exit 3; log: `logs/laplace_n640_p2t1.log`",
        "```\nlauncher: cannot place 2 processes here\n```"})
    EXPECT_NE(md.find(part), std::string::npos) << part << " missing\n" << md;
  EXPECT_NE(r.out.find("; 2 failed)"), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("2 runs failed"), std::string::npos) << r.describe();
}

TEST_F(Cli, StudyRerunRetriesTheFailedRuns) {
  const std::string out = path("study"), refuse = path("refuse");
  std::ofstream(refuse) << "refuse\n";
  seed_characterization_done(out);
  const auto args = study_args(out, refusing_launcher(dir_, refuse) + " {P}", "1x1,2x1");
  const Outcome first = run_compas(args);
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  for (const char* id : kRefused) {
    const auto records = records_by_id(out + "/runs.jsonl")[id];
    ASSERT_EQ(records.size(), 1u) << id << "\n" << read_file(out + "/runs.jsonl");
    ASSERT_TRUE(records[0].value("failed", false)) << records[0].dump();
  }
  fs::remove(refuse);
  const Outcome again = run_compas(args);
  ASSERT_EQ(again.exit_code, 0) << again.describe();
  auto runs = records_by_id(out + "/runs.jsonl");
  for (const char* id : kRefused) {
    ASSERT_EQ(runs[id].size(), 2u) << id << " was not run again\n"
                                   << read_file(out + "/runs.jsonl");
    EXPECT_EQ(runs[id].back().value("exit", -1), 0) << runs[id].back().dump();
    EXPECT_FALSE(runs[id].back().contains("failed")) << runs[id].back().dump();
  }
  for (const char* id : kPlaced) EXPECT_EQ(runs[id].size(), 1u) << id << " was run again";
  const std::string md = read_file(out + "/report.md");
  EXPECT_EQ(md.find("## Failed runs"), std::string::npos) << md;
  EXPECT_NE(md.find("All planned runs finished"), std::string::npos) << md;
  EXPECT_EQ(again.out.find("failed"), std::string::npos) << again.describe();
  EXPECT_EQ(again.err.find("failed"), std::string::npos) << again.describe();
}

TEST_F(Cli, StudyRunTimeoutMustBeAPositiveNumberOfSeconds) {
  for (const std::string value : {"", "0", "-1", "soon"}) {
    const Outcome r =
        run_compas({"study", "--dry-run", "--out", path("s"), "--run-timeout", value});
    EXPECT_EQ(r.exit_code, 2) << "'" << value << "'\n" << r.describe();
    EXPECT_NE(r.err.find("--run-timeout"), std::string::npos) << r.describe();
    // The empty value gets the common message, with the option's expected type.
    EXPECT_NE(r.err.find(value.empty() ? "SECONDS>0" : "seconds > 0"), std::string::npos)
        << "allowed values\n"
        << r.describe();
    EXPECT_FALSE(fs::exists(path("s"))) << "'" << value << "'";
  }
}

// Under a cluster launcher a grid point beyond this host's cores is left out, and the plan says
// so; --oversubscribe keeps it, and so does compas-run here (today's one oversubscribed point).
TEST_F(Cli, StudyUnderALauncherLeavesOutOversubscribedPoints) {
  const std::string out = path("plan");
  auto plan = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"study",     "--out",   out,      "--dry-run",
                                     "--kernels", "laplace", "--grid", "1x1,1024x1024"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_compas(args);
  };
  const Outcome launched = plan({"--launcher", "mpirun -n {P}"});
  ASSERT_EQ(launched.exit_code, 0) << launched.describe();
  EXPECT_NE(launched.out.find("laplace_n640_p1t1"), std::string::npos) << launched.describe();
  EXPECT_EQ(launched.out.find("p1024t1024"), std::string::npos) << launched.describe();
  EXPECT_NE(launched.out.find("left out 1024 x 1024"), std::string::npos) << launched.describe();
  EXPECT_NE(launched.out.find("--oversubscribe"), std::string::npos) << launched.describe();
  const Outcome asked = plan({"--launcher", "mpirun -n {P}", "--oversubscribe"});
  ASSERT_EQ(asked.exit_code, 0) << asked.describe();
  EXPECT_NE(asked.out.find("laplace_n640_p1024t1024"), std::string::npos) << asked.describe();
  EXPECT_EQ(asked.out.find("left out"), std::string::npos) << asked.describe();
  const Outcome here = plan({});
  ASSERT_EQ(here.exit_code, 0) << here.describe();
  EXPECT_NE(here.out.find("laplace_n640_p1024t1024"), std::string::npos) << here.describe();
  EXPECT_FALSE(fs::exists(out)) << "a dry run created " << out;
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

TEST_F(Cli, VersionExitsZero) {
  const Outcome r = run_compas({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find('.'), std::string::npos) << r.describe();
}

// ---- output errors ---------------------------------------------------------------------------

// An unwritable output path is reported by name. The exit code is 1 ("failed") or 2 ("bad
// input"); the test records which in its output.
TEST_F(Cli, UnwritableJsonPathIsNamed) {
  const std::string bad = "/nonexistent-dir/x.json";
  ASSERT_FALSE(fs::exists("/nonexistent-dir"));
  const Outcome r = run_compas({"topology", "--quiet", "--json", bad});
  // Checked before measuring: bad input, exit 2.
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.describe();
}

// ---- bad input: exit 2, a message naming the flag or value, no output file -------------------

struct BadInput {
  std::string name;                  // test name suffix
  std::vector<std::string> args;     // the command line; --json <file> is appended if json
  std::vector<std::string> mention;  // stderr must contain one of these (case-insensitive)
  Env env{};
  bool json = true;
};

// Printed as its name only: CTest (gtest_discover_tests) names each case after the printed
// parameter, e.g. CliBadInput.ExitsTwoNamesTheProblemWritesNothing/topology_threads_zero.
void PrintTo(const BadInput& b, std::ostream* os) {
  *os << b.name;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Placeholders in BadInput args and mentions, resolved when the test runs (not when the tests
// are listed): {too_many} = this machine's PUs + 1, {absent_cpu} = a cpu number it lacks.
std::string resolve(const std::string& text) {
  auto replace = [](std::string s, const std::string& from, const std::string& to) {
    for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
      s.replace(at, from.size(), to);
    return s;
  };
  if (text.find('{') == std::string::npos) return text;
  const int pus = host_pus();
  std::string out = replace(text, "{too_many}", std::to_string(pus > 0 ? pus + 1 : 3));
  return replace(out, "{absent_cpu}", pus < 99 ? "99" : "999999");
}

class CliBadInput : public Cli, public ::testing::WithParamInterface<BadInput> {};

TEST_P(CliBadInput, ExitsTwoNamesTheProblemWritesNothing) {
  const BadInput& b = GetParam();
  std::vector<std::string> args;
  for (const auto& a : b.args) args.push_back(resolve(a));
  if (b.json) {
    args.push_back("--json");
    args.push_back(path("out.json"));
  }
  const Outcome r = run_compas(args, b.env);
  std::string command = "compas";
  for (const auto& a : args) command += " '" + a + "'";
  SCOPED_TRACE(command);
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_FALSE(r.err.empty()) << "no message on stderr\n" << r.describe();
  const std::string err = lower(r.err);
  bool named = false;
  std::string wanted;
  for (const auto& m : b.mention) {
    named = named || err.find(lower(resolve(m))) != std::string::npos;
    wanted += (wanted.empty() ? "'" : " or '") + resolve(m) + "'";
  }
  EXPECT_TRUE(named) << "stderr should mention " << wanted << "\n" << r.describe();
  EXPECT_TRUE(files().empty()) << "an output file was created\n" << r.describe();
  // Input is checked before anything is measured or printed.
  EXPECT_EQ(r.out, "") << "something was printed\n" << r.describe();
}

std::vector<BadInput> bad_inputs() {
  return {
      {"topology_threads_zero", {"topology", "--threads", "0"}, {"--threads"}},
      {"topology_threads_negative", {"topology", "--threads", "-1"}, {"--threads"}},
      {"topology_threads_text", {"topology", "--threads", "abc"}, {"--threads"}},
      {"topology_threads_huge", {"topology", "--threads", "99999"}, {"--threads"}},
      {"topology_threads_above_pus", {"topology", "--threads", "{too_many}"}, {"oversubscri"}},
      {"topology_bind_bogus", {"topology", "--bind", "bogus"}, {"bogus"}},
      {"topology_bind_absent_cpu", {"topology", "--bind", "0,{absent_cpu}"}, {"{absent_cpu}"}},
      {"topology_bind_empty", {"topology", "--bind", ""}, {"--bind", "bind"}},
      {"topology_synthetic_garbage", {"topology", "--topology", "garbage:3"}, {"garbage:3"}},
      {"topology_unknown_flag", {"topology", "--frobnicate"}, {"--frobnicate"}},
      {"topology_threads_env_text",
       {"topology"},
       {"COMPAS_THREADS", "abc"},
       {{"COMPAS_THREADS", "abc"}}},
      {"barrier_threads_zero", {"barrier", "--threads", "0"}, {"--threads"}},
      {"barrier_threads_text", {"barrier", "--threads", "x"}, {"--threads"}},
      {"barrier_threads_backwards", {"barrier", "--threads", "3-1"}, {"3-1"}},
      {"barrier_wait_unknown", {"barrier", "--wait", "nope"}, {"nope"}},
      {"barrier_algorithms_unknown", {"barrier", "--algorithms", "nope"}, {"nope"}},
      {"barrier_omp_unknown", {"barrier", "--omp", "nope"}, {"nope"}},
      {"barrier_repeats_zero", {"barrier", "--repeats", "0"}, {"--repeats"}},
      {"barrier_target_ms_negative", {"barrier", "--target-ms", "-1"}, {"--target-ms"}},
      {"barrier_unknown_flag", {"barrier", "--frobnicate"}, {"--frobnicate"}},
      {"barrier_threads_above_pus", {"barrier", "--threads", "{too_many}"}, {"oversubscri"}},
      {"barrier_bind_bogus", {"barrier", "--bind", "bogus"}, {"bogus"}},
      {"barrier_wait_env_unknown", {"barrier"}, {"COMPAS_WAIT", "nope"}, {{"COMPAS_WAIT", "nope"}}},
      {"pingpong_single_process", {"pingpong"}, {"at least 2 processes"}},
      {"pingpong_ops_bogus", {"pingpong", "--ops", "put,bogus"}, {"'bogus'"}},
      {"pingpong_sizes_text", {"pingpong", "--sizes", "8,lots"}, {"'lots'"}},
      {"pingpong_sizes_above_max", {"pingpong", "--sizes", "2MiB", "--max-size", "1MiB"}, {"2MiB"}},
      {"pingpong_repeats_zero", {"pingpong", "--repeats", "0"}, {"--repeats"}},
      {"membw_size_zero", {"membw", "--size", "0"}, {"--size '0'"}},
      {"membw_size_text", {"membw", "--size", "lots"}, {"'lots'"}},
      {"membw_kernels_bogus", {"membw", "--kernels", "bogus"}, {"'bogus'"}},
      {"membw_kernels_one_bogus", {"membw", "--kernels", "copy,bogus"}, {"'bogus'"}},
      {"membw_events_unknown", {"membw", "--events", "NOT_AN_EVENT"}, {"NOT_AN_EVENT"}},
      {"membw_events_unknown_in_list",
       {"membw", "--events", "perf::TASK-CLOCK,NOT_AN_EVENT"},
       {"'NOT_AN_EVENT'"}},
      {"membw_events_unknown_group", {"membw", "--events", "ipc,bogusgroup"}, {"'bogusgroup'"}},
      {"membw_events_env_unknown",
       {"membw"},
       {"NOT_AN_EVENT"},
       {{"COMPAS_EVENTS", "NOT_AN_EVENT"}}},
      {"membw_stores_bogus", {"membw", "--stores", "bogus"}, {"'bogus'"}},
      // An empty word after a flag whose own check would run first (a range) still says empty.
      {"study_repeats_empty_word_says_empty",
       {"study", "--repeats", ""},
       {"--repeats: an empty value is not allowed (expected int:int in [1 - 100])"}},
      {"run_laplace_n_empty_word_says_empty",
       {"run", "laplace", "--n", ""},
       {"--n: an empty value is not allowed (expected"}},
      {"membw_workgroup_no_such_domain", {"membw", "--workgroup", "S64:1MiB"}, {"'S64'", "S0"}},
      {"membw_workgroup_bad_domain", {"membw", "--workgroup", "Q1:1MiB"}, {"'Q1'", "S<i>"}},
      {"membw_workgroup_threads_zero", {"membw", "--workgroup", "S0:1MiB:0"}, {"'0'"}},
      {"membw_numa_matrix_thread_list",
       {"membw", "--numa-matrix", "--threads", "1,2"},
       {"--threads '1,2'", "one thread count"}},
      {"membw_numa_matrix_with_bind",
       {"membw", "--numa-matrix", "--bind", "scatter"},
       {"--numa-matrix", "--bind"}},
      {"membw_workgroup_with_size",
       {"membw", "--workgroup", "S0:1MiB", "--size", "1MiB"},
       {"--workgroup 'S0:1MiB'", "--size"}},
      {"membw_isa_bogus", {"membw", "--isa", "bogus"}, {"'bogus'"}},
      {"membw_repeats_zero", {"membw", "--repeats", "0"}, {"--repeats"}},
      {"membw_threads_above_pus",
       {"membw", "--threads", "{too_many}", "--size", "1MiB"},
       {"oversubscri"}},
      {"membw_json_unwritable",
       {"membw", "--json", "/nonexistent-dir/m.json"},
       {"/nonexistent-dir/m.json"},
       {},
       false},
      {"cache_min_zero", {"cache", "--min", "0"}, {"'0'"}},
      {"cache_min_above_max", {"cache", "--min", "1GiB", "--max", "4KiB"}, {"'1GiB'"}},
      {"cache_max_text", {"cache", "--max", "banana"}, {"'banana'"}},
      {"cache_cpu_not_ours", {"cache", "--cpu", "4096", "--max", "8KiB"}, {"--cpu 4096"}},
      {"cache_events_unknown", {"cache", "--events", "NOT_AN_EVENT"}, {"NOT_AN_EVENT"}},
      {"run_no_kernel", {"run"}, {"laplace", "subcommand"}, {}, false},
      {"run_unknown_kernel", {"run", "bogosort"}, {"bogosort"}, {}, false},
      {"run_laplace_n_zero", {"run", "laplace", "--n", "0"}, {"--n"}},
      {"run_laplace_n_text", {"run", "laplace", "--n", "big"}, {"--n"}},
      {"run_laplace_iters_zero", {"run", "laplace", "--iters", "0"}, {"--iters"}},
      {"run_laplace_tol_negative", {"run", "laplace", "--tol", "-1"}, {"--tol"}},
      {"run_laplace_threads_zero", {"run", "laplace", "--threads", "0"}, {"--threads"}},
      {"run_laplace_threads_above_pus",
       {"run", "laplace", "--threads", "{too_many}"},
       {"oversubscri"}},
      {"run_laplace_wait_bogus", {"run", "laplace", "--wait", "bogus"}, {"bogus"}},
      {"run_laplace_stores_bogus", {"run", "laplace", "--stores", "bogus"}, {"bogus"}},
      {"run_laplace_schedule_bogus", {"run", "laplace", "--schedule", "guided"}, {"guided"}},
      {"run_laplace_events_unknown",
       {"run", "laplace", "--events", "NOT_AN_EVENT"},
       {"NOT_AN_EVENT"}},
      {"run_laplace_json_unwritable",
       {"run", "laplace", "--json", "/nonexistent-dir/l.json"},
       {"/nonexistent-dir/l.json"},
       {},
       false},
      {"run_cg_class_unknown", {"run", "cg", "--class", "Q"}, {"'Q'"}},
      {"run_cg_class_two_letters", {"run", "cg", "--class", "SW"}, {"'SW'"}},
      {"run_cg_decomposition_bogus", {"run", "cg", "--decomposition", "cols"}, {"cols"}},
      {"run_cg_decomposition_empty", {"run", "cg", "--decomposition", ""}, {"empty"}},
      {"run_cg_grid_one_process",
       {"run", "cg", "--class", "W", "--threads", "1", "--decomposition", "grid"},
       {"C x C processes", "not 1 process"}},
      {"run_cg_threads_zero", {"run", "cg", "--threads", "0"}, {"--threads"}},
      {"run_sort_keys_text", {"run", "sort", "--keys", "lots"}, {"'lots'"}},
      {"run_sort_keys_zero", {"run", "sort", "--keys", "0"}, {"'0'"}},
      {"run_sort_keys_bad_suffix", {"run", "sort", "--keys", "4X"}, {"'4X'"}},
      {"run_sort_keys_fraction", {"run", "sort", "--keys", "1.5M"}, {"'1.5M'"}},
      {"run_sort_keys_negative", {"run", "sort", "--keys", "-4M"}, {"-4M"}},
      {"run_sort_keys_beyond_memory", {"run", "sort", "--keys", "1024G"}, {"--keys"}},
      {"run_sort_dist_bogus", {"run", "sort", "--dist", "gauss"}, {"'gauss'"}},
      {"run_sort_iters_zero", {"run", "sort", "--iters", "0"}, {"--iters"}},
      {"run_sort_digit_bits_bogus", {"run", "sort", "--digit-bits", "9"}, {"--digit-bits"}},
      {"run_sort_stores_bogus", {"run", "sort", "--stores", "bogus"}, {"bogus"}},
      {"run_gemm_n_zero", {"run", "gemm", "--n", "0"}, {"--n"}},
      {"run_gemm_n_negative", {"run", "gemm", "--n", "-5"}, {"--n"}},
      {"run_gemm_n_text", {"run", "gemm", "--n", "big"}, {"--n"}},
      {"run_gemm_n_too_large", {"run", "gemm", "--n", "99999999"}, {"--n"}},
      {"run_gemm_n_beyond_memory", {"run", "gemm", "--n", "1000000"}, {"--n 1000000"}},
      {"run_gemm_iters_zero", {"run", "gemm", "--iters", "0"}, {"--iters"}},
      {"run_gemm_threads_zero", {"run", "gemm", "--threads", "0"}, {"--threads"}},
      {"run_gemm_isa_env_bogus",
       {"run", "gemm", "--n", "8"},
       {"COMPAS_GEMM_ISA", "bogus"},
       {{"COMPAS_GEMM_ISA", "bogus"}}},
      {"run_cg_report_binding_env_bogus",
       {"run", "cg", "--class", "S"},
       {"COMPAS_REPORT_BINDING='yes'"},
       {{"COMPAS_REPORT_BINDING", "yes"}}},
      {"run_cg_report_binding_env_empty",
       {"run", "cg", "--class", "S"},
       {"COMPAS_REPORT_BINDING='' is not allowed: an empty value"},
       {{"COMPAS_REPORT_BINDING", ""}}},
      {"study_launcher_without_p", {"study", "--launcher", "mpirun -n 4"}, {"{P}"}, {}, false},
      {"study_grid_bad", {"study", "--grid", "2by2"}, {"2by2"}, {}, false},
      {"study_grid_zero", {"study", "--grid", "0x1"}, {"0x1"}, {}, false},
      {"study_kernels_bogus", {"study", "--kernels", "bogus"}, {"'bogus'"}, {}, false},
      {"study_budget_zero", {"study", "--budget", "0"}, {"--budget"}, {}, false},
      {"study_run_timeout_zero", {"study", "--run-timeout", "0"}, {"--run-timeout"}, {}, false},
      {"study_repeats_zero", {"study", "--repeats", "0"}, {"--repeats"}, {}, false},
      {"study_scaling_bogus",
       {"study", "--scaling", "medium"},
       {"'medium'", "strong", "weak"},
       {},
       false},
      {"study_scaling_empty", {"study", "--scaling", ""}, {"--scaling"}, {}, false},
      {"study_run_timeout_empty", {"study", "--run-timeout", ""}, {"--run-timeout"}, {}, false},
      {"unknown_subcommand", {"frobnicate"}, {"frobnicate"}},
      {"no_subcommand", {}, {"subcommand", "command"}, {}, false},
  };
}

INSTANTIATE_TEST_SUITE_P(, CliBadInput, ::testing::ValuesIn(bad_inputs()));

// Every value-taking flag of every command against the hostile values that are wrong for it:
// e empty, n negative, z zero, h huge (past any integer type), t text. Each must be refused with
// exit 2 and a message naming the flag or the value, before anything is written or printed.
std::vector<BadInput> hostile_values() {
  struct Flag {
    std::vector<std::string> command;
    std::string flag;
    std::string kinds;
  };
  const std::vector<Flag> flags = {
      {{"topology"}, "--threads", "enzht"},
      {{"topology"}, "--bind", "et"},
      {{"topology"}, "--topology", "t"},
      {{"barrier"}, "--threads", "enzht"},
      {{"barrier"}, "--bind", "et"},
      {{"barrier"}, "--wait", "enzt"},
      {{"barrier"}, "--algorithms", "ent"},
      {{"barrier"}, "--omp", "nt"},
      {{"barrier"}, "--repeats", "enzht"},
      {{"barrier"}, "--target-ms", "enzht"},
      {{"membw"}, "--threads", "enzht"},
      {{"membw"}, "--size", "enzht"},
      {{"membw"}, "--kernels", "ent"},
      {{"membw"}, "--bind", "et"},
      {{"membw"}, "--stores", "ent"},
      {{"membw"}, "--isa", "ent"},
      {{"membw"}, "--repeats", "enzht"},
      {{"membw"}, "--min-repeat-ms", "enht"},
      {{"membw"}, "--events", "nt"},
      {{"membw"}, "--workgroup", "enzht"},
      {{"cache"}, "--min", "enzht"},
      {{"cache"}, "--max", "enzt"},
      {{"cache"}, "--steps-per-octave", "enzht"},
      {{"cache"}, "--cpu", "enht"},
      {{"cache"}, "--repeats", "enzht"},
      {{"cache"}, "--repeat-ms", "enzht"},
      {{"cache"}, "--events", "nt"},
      {{"run", "laplace"}, "--n", "enzht"},
      {{"run", "laplace"}, "--iters", "enzht"},
      {{"run", "laplace"}, "--tol", "enht"},
      {{"run", "laplace"}, "--check-every", "enzht"},
      {{"run", "laplace"}, "--stores", "ent"},
      {{"run", "laplace"}, "--schedule", "ent"},
      {{"run", "laplace"}, "--threads", "enzht"},
      {{"run", "laplace"}, "--bind", "et"},
      {{"run", "laplace"}, "--wait", "ent"},
      {{"run", "laplace"}, "--events", "nt"},
      {{"run", "cg"}, "--class", "enzht"},
      {{"run", "cg"}, "--threads", "enzht"},
      {{"run", "cg"}, "--wait", "ent"},
      {{"run", "gemm"}, "--n", "enzht"},
      {{"run", "gemm"}, "--iters", "enzht"},
      {{"run", "gemm"}, "--threads", "enzht"},
      {{"run", "gemm"}, "--bind", "et"},
      {{"run", "gemm"}, "--wait", "ent"},
      {{"run", "gemm"}, "--events", "nt"},
      {{"run", "sort"}, "--keys", "enzht"},
      {{"run", "sort"}, "--dist", "enzt"},
      {{"run", "sort"}, "--iters", "enzht"},
      {{"run", "sort"}, "--digit-bits", "enzht"},
      {{"run", "sort"}, "--stores", "ent"},
      {{"run", "sort"}, "--threads", "enzht"},
      {{"study"}, "--budget", "enzht"},
      {{"study"}, "--grid", "enzt"},
      {{"study"}, "--kernels", "enzt"},
      {{"study"}, "--run-timeout", "enzht"},
      {{"study"}, "--repeats", "enzht"},
  };
  std::vector<BadInput> out;
  for (const auto& f : flags)
    for (char kind : f.kinds) {
      std::string value, kind_name;
      switch (kind) {
        case 'e':
          value = "", kind_name = "empty";
          break;
        case 'n':
          value = "-1", kind_name = "negative";
          break;
        case 'z':
          value = "0", kind_name = "zero";
          break;
        case 'h':
          value = "99999999999999999999", kind_name = "huge";
          break;
        default:
          value = "x9y", kind_name = "text";
          break;
      }
      BadInput b;
      for (const auto& w : f.command) b.name += w + "_";
      b.name += f.flag.substr(2) + "_" + kind_name;
      for (auto& c : b.name)
        if (c == '-') c = '_';
      b.args = f.command;
      b.args.push_back(f.flag + "=" + value);
      b.mention = {f.flag, "'" + value + "'"};
      if (value.size() >= 3) b.mention.push_back(value);
      b.json = f.command[0] != "study";
      if (kind == 'e') {
        // The same empty value as a word of its own (`--size ""`: a script's unset variable).
        BadInput word = b;
        word.name += "_word";
        word.args.back() = f.flag;
        word.args.push_back("");
        out.push_back(std::move(word));
      }
      out.push_back(std::move(b));
    }
  return out;
}

INSTANTIATE_TEST_SUITE_P(HostileValue, CliBadInput, ::testing::ValuesIn(hostile_values()));

}  // namespace
