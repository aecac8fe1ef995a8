// `compas compare` on command files (membw's records matched by key) and the inputs it refuses:
// part of test_compare (compare_cases.hpp holds what both files use).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare_cases.hpp"

namespace {

using namespace compare_test;

// A membw-style record. `passes`, `stores` and `bytes` say what the run found, not which point it
// measured: they differ between A and B and must not keep the records apart.
json membw_record(int threads, double gbs, double lo, double hi, int passes, const char* stores) {
  return {{"kernel", "copy"},
          {"threads", threads},
          {"bandwidth_gbs", gbs},
          {"per_thread_gbs", gbs / threads},
          {"min_bandwidth_gbs", lo},
          {"max_bandwidth_gbs", hi},
          {"thread_gbs", std::vector<double>(threads, gbs / threads)},
          {"stores", stores},
          {"isa", "avx2"},
          {"cpus", threads == 1 ? "0" : "0,1"},
          {"oversubscribed", false},
          {"working_set_bytes", 4194304},
          {"bytes", 1000000 * passes},
          {"passes", passes},
          {"seconds", 1e-3 * passes / gbs},
          {"repeats", 5},
          {"verified", true}};
}

json membw_file(const std::string& hostname, const json& records) {
  return {{"command", "membw"},
          {"version", "0.1.0"},
          {"machine", machine(hostname)},
          {"params", {{"size", "4 MiB"}}},
          {"results", records}};
}

// ---- command files ----------------------------------------------------------------------------

TEST_F(Compare, MembwFilesMatchByKeyAndJudgeRatesHigherIsBetter) {
  // threads 1: B twice the bandwidth, ranges apart; threads 2: B 3% more, ranges overlap;
  // threads 4 only in B. Passes and stores differ between the files.
  const std::string a =
      write("a.json", membw_file("alpha", {membw_record(1, 10, 9.9, 10.1, 50, "temporal"),
                                           membw_record(2, 20, 19.5, 20.5, 60, "temporal")})
                          .dump());
  const std::string b =
      write("b.json", membw_file("alpha", {membw_record(1, 20, 19.9, 20.1, 90, "non-temporal"),
                                           membw_record(2, 20.6, 20.2, 21, 61, "temporal"),
                                           membw_record(4, 30, 29, 31, 70, "temporal")})
                          .dump());
  const json doc = compare_ok(a, b);
  EXPECT_EQ(doc["params"]["a"]["kind"], "membw");
  std::set<std::string> measurements;
  for (const auto& p : doc["results"]) measurements.insert(p["measurement"].get<std::string>());
  EXPECT_EQ(measurements, (std::set<std::string>{"bandwidth_gbs", "per_thread_gbs", "seconds"}))
      << "bounds, arrays, counts and flags are not measurements";

  const auto points = by_point(doc);
  const std::string t1 = "kernel=copy threads=1 oversubscribed=false working_set_bytes=4194304";
  const std::string t2 = "kernel=copy threads=2 oversubscribed=false working_set_bytes=4194304";
  const std::string t4 = "kernel=copy threads=4 oversubscribed=false working_set_bytes=4194304";
  expect_point(points, t1 + " / bandwidth_gbs", "real difference", 2.0, "faster");
  EXPECT_EQ(points.at(t1 + " / bandwidth_gbs")["better"], "higher");
  EXPECT_NEAR(points.at(t1 + " / bandwidth_gbs")["a"]["spread"].get<double>(), 0.02, 1e-9);
  expect_point(points, t2 + " / bandwidth_gbs", "within noise", 1.03, "faster");
  EXPECT_TRUE(has(points.at(t2 + " / bandwidth_gbs")["note"], "ranges overlap"));
  // seconds are totals over the passes, which differ (50 and 90, 60 and 61): different work,
  // not paired; the rates compare the points per unit of work.
  for (const auto& t : {t1, t2}) {
    const json& sec = points.at(t + " / seconds");
    EXPECT_EQ(sec["verdict"], "different work") << sec.dump();
    EXPECT_TRUE(sec["ratio"].is_null()) << sec.dump();
    EXPECT_EQ(sec["better"], "lower");
  }
  EXPECT_EQ(points.at(t1 + " / seconds")["work"]["b"]["passes"], 90);
  ASSERT_TRUE(points.count(t4 + " / bandwidth_gbs"));
  EXPECT_EQ(points.at(t4 + " / bandwidth_gbs")["verdict"], "only in B");
  EXPECT_EQ(doc["summary"]["only_in_a"], 0);
  EXPECT_EQ(doc["summary"]["only_in_b"], 3);
  EXPECT_EQ(doc["summary"]["different_work"], 2);
  EXPECT_EQ(doc["summary"]["points_in_both"], 6);
}

TEST_F(Compare, RepeatedKeysStayApart) {
  const json rec = membw_record(1, 10, 9.9, 10.1, 50, "temporal");
  json other = rec;
  other["bandwidth_gbs"] = 40;
  other["min_bandwidth_gbs"] = 39;
  other["max_bandwidth_gbs"] = 41;
  const std::string a = write("a.json", membw_file("h", {rec, other}).dump());
  const json doc = compare_ok(a, a);
  int seen = 0;
  for (const auto& p : doc["results"])
    if (p["measurement"] == "bandwidth_gbs") {
      ++seen;
      EXPECT_EQ(p["ratio"], 1.0) << "a record matched with another one:\n" << p.dump();
    }
  EXPECT_EQ(seen, 2);
}

// A real `compas membw` file against itself: the rules fit what the command writes.
TEST_F(Compare, RealMembwFileAgainstItself) {
  const Ran m =
      run_compas({"membw", "--size", "256KiB", "--threads", "1", "--kernels", "copy", "--repeats",
                  "3", "--min-repeat-ms", "1", "--quiet", "--json", path("m.json")});
  ASSERT_EQ(m.exit_code, 0) << m.described;
  const json doc = compare_ok(path("m.json"), path("m.json"));
  ASSERT_FALSE(doc["results"].empty());
  bool bandwidth_with_spread = false;
  for (const auto& p : doc["results"]) {
    EXPECT_EQ(p["verdict"], "within noise") << p.dump();
    EXPECT_FALSE(p["key"].contains("passes")) << p.dump();
    if (p["measurement"] == "bandwidth_gbs" && p["a"]["spread"].is_number())
      bandwidth_with_spread = true;
  }
  EXPECT_TRUE(bandwidth_with_spread) << doc["results"].dump(1);
}

// ---- refused inputs ---------------------------------------------------------------------------

TEST_F(Compare, StudyAgainstMembwFileIsRefused) {
  const std::string a = write_study("a", study_a());
  const std::string b = write("m.json", membw_file("h", json::array()).dump());
  expect_refused({a, b},
                 {"A '" + a + "'", "a study directory", "B '" + b + "'", "a 'membw' JSON file"});
}

TEST_F(Compare, TwoDifferentCommandsAreRefused) {
  json cache = membw_file("h", json::array());
  cache["command"] = "cache";
  const std::string a = write("m.json", membw_file("h", json::array()).dump());
  const std::string b = write("c.json", cache.dump());
  expect_refused({a, b}, {"'membw' JSON file", "'cache' JSON file", a, b});
}

TEST_F(Compare, BadInputsAreRefusedNamingThePathAndTheProblem) {
  const std::string good = write_study("good", study_a());
  expect_refused({path("missing"), good}, {"A '" + path("missing") + "'", "no such file"});
  fs::create_directories(path("empty-dir"));
  expect_refused({good, path("empty-dir")},
                 {"B '" + path("empty-dir") + "'", "without study.json"});
  expect_refused({good, write("broken/study.json", "{\"command\": \"study\", ")},
                 {path("broken/study.json"), "not valid JSON"});
  expect_refused({write("nocmd.json", "{\"results\": []}"), good},
                 {path("nocmd.json"), "no \"command\""});
  expect_refused({write("empty.json", ""), good}, {path("empty.json"), "empty"});
  json no_rate = study_a();
  no_rate["kernels"]["laplace n=640"]["rows"][1].erase("rate");
  no_rate["kernels"]["laplace n=640"]["rows"][1].erase("seconds_per_unit");
  const std::string bad = write_study("norate", no_rate);
  expect_refused({good, bad}, {"rows[1]", "\"seconds_per_unit\"", path("norate/study.json")});
  json bad_samples = study_a();
  bad_samples["kernels"]["laplace n=640"]["rows"][0]["rate_samples"] = "fast";
  expect_refused({write_study("badsamples", bad_samples), good}, {"\"mlups_samples\"", "rows[0]"});
  json wrong_type = study_a();
  wrong_type["kernels"]["laplace n=640"]["rows"][0]["oversubscribed"] = "yes";
  expect_refused({good, write_study("wrongtype", wrong_type)},
                 {path("wrongtype/study.json"), "wrong type"});
  json no_results = membw_file("h", json::array());
  no_results.erase("results");
  expect_refused({write("nores.json", no_results.dump()),
                  write("m.json", membw_file("h", json::array()).dump())},
                 {path("nores.json"), "\"results\""});
}

// An input that is not a regular file (a FIFO would block the read, a device may never end) or
// is larger than the limit is refused before it is read, naming it and the limit.
TEST_F(Compare, NonRegularAndOversizedInputsAreRefused) {
  const std::string good = write_study("good", study_a());
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  expect_refused({good, fifo}, {"B '" + fifo + "'", "not a regular file (a FIFO)"});
  // A study directory whose study.json is a FIFO.
  fs::create_directories(path("piped"));
  ASSERT_EQ(::mkfifo(path("piped/study.json").c_str(), 0600), 0) << std::strerror(errno);
  expect_refused({path("piped"), good}, {path("piped/study.json"), "(a FIFO)"});
  // 64 MiB and one byte, sparse: no disk or memory spent on it.
  fs::create_directories(path("big"));
  const std::string big = path("big/study.json");
  { std::ofstream(big) << ""; }
  fs::resize_file(big, (64u << 20) + 1);
  expect_refused({big, good}, {"A '" + big + "'", "larger than the limit of 67108864 bytes"});
  const std::string dev = path("null");
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "cannot make a device node here (" << std::strerror(errno) << "; needs root)";
  expect_refused({dev, good}, {"A '" + dev + "'", "not a regular file (a character device)"});
}

TEST_F(Compare, EmptyOrMissingArgumentIsRefused) {
  const std::string good = write_study("good", study_a());
  expect_refused({"", good}, {"empty"});
  expect_refused({good}, {"B"});
}

TEST_F(Compare, OutputOverAnInputIsRefused) {
  const std::string a = write("m.json", membw_file("h", json::array()).dump());
  const Ran r = run_compas({"compare", a, a, "--json", a});
  EXPECT_EQ(r.exit_code, 2) << r.described;
  EXPECT_TRUE(has(r.err, "is input A")) << r.described;
  EXPECT_EQ(load("m.json")["command"], "membw") << "the input was overwritten";
}

// Nothing of an input reaches the terminal as it is: invalid UTF-8 in a parser's message and an
// escape sequence in a key (valid JSON: "\u001b") are shown as \xNN (the bytes were echoed).
TEST_F(Compare, InputBytesReachTheTerminalOnlyEscaped) {
  const std::string bad =
      write("bad.json", "{\"command\": \"membw\", \"results\": [{\"k\": \"\xff\"}]}");
  const Ran r = run_compas({"compare", bad, bad});
  EXPECT_EQ(r.exit_code, 2) << r.described;
  EXPECT_EQ(r.err.find('\xff'), std::string::npos) << r.described;
  EXPECT_NE(r.err.find("\\xFF"), std::string::npos) << r.described;
  json esc = membw_file(
      "h", json::array({{{"kernel", "a\x1b[31mred"}, {"threads", 1}, {"bandwidth_gbs", 1.0}}}));
  const std::string e = write("esc.json", esc.dump());
  const Ran t = run_compas({"compare", e, e});
  EXPECT_EQ(t.exit_code, 0) << t.described;
  EXPECT_EQ(t.out.find('\x1b'), std::string::npos) << t.described;
  EXPECT_NE(t.out.find("a\\x1B[31mred"), std::string::npos) << t.described;
}

}  // namespace
