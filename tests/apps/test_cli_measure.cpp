// Tests of the `compas` command line, run as a user runs it (cli.hpp): `topology`, `barrier`,
// `membw`, `cache`, `pingpong`, help and version: their report files (with and without --events
// counters) and their runs under compas-run. Sizes are tiny; no test passes or fails on a measured
// time or rate.
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
      // The chase runs over the --size given (by default far beyond the caches: GiBs here).
      EXPECT_EQ(rec.value("size_bytes", 0), 2 << 20) << rec.dump();
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
  // The table says what its MB/s are (decimal megabytes per second).
  EXPECT_NE(r.out.find("MB/s = 1e6 bytes per second"), std::string::npos) << r.describe();
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
    // Each op says what its time is: only the ping-pongs time one way.
    const std::map<std::string, std::string> measure = {{"put", "one_way"},
                                                        {"put_signal", "one_way"},
                                                        {"get", "round_trip"},
                                                        {"put_flush", "remote_completion"},
                                                        {"put_bw", "stream"}};
    EXPECT_EQ(rec.value("measure", ""), measure.at(op)) << rec.dump();
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
    // Both process barrier algorithms, the chosen one first; no MPI_Barrier without mpirun.
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

}  // namespace
