// Tests of `compas compare`, run as a separate process the way a user runs it: synthetic study
// directories and membw-style files with known ratios and spreads, so that every verdict is known
// in advance (no test passes or fails on a measured time), and the contract for bad input: exit 2
// with a message naming the input and the problem, and no output file written.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../common/proc.hpp"

namespace {

namespace fs = std::filesystem;
using compas::testing::Proc;
// Ordered, as compas writes its files: record keys are made in the order of the fields.
using json = nlohmann::ordered_json;

#ifndef COMPAS_EXE
#error "COMPAS_EXE must name the compas executable"
#endif

// `compas args...`, waited for (60 s at most).
struct Ran {
  int exit_code = -1;
  std::string out, err, described;
};

Ran compas(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {COMPAS_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  Proc p(argv, {});
  Ran r;
  if (!p.wait(60)) {
    ADD_FAILURE() << "compas did not exit within 60 s";
    return r;
  }
  r.exit_code = p.exit_code;
  r.out = p.out;
  r.err = p.err;
  r.described = p.describe();
  return r;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

json machine(const std::string& hostname) {
  return {{"sockets", 1},
          {"cores", 2},
          {"pus", 2},
          {"cpu_model", "Test CPU"},
          {"compiler", "gcc 12"},
          {"hostname", hostname},
          {"os", "Linux 6"},
          {"libraries", {{"hwloc", "2.9.0"}}}};
}

// A study row: seconds (the median) with the repetitions' samples, or with only a min and a max,
// or a single run (no samples, no bounds).
json row(int procs, int threads, double seconds, std::vector<double> samples = {}) {
  json r = {{"procs", procs},        {"threads", threads},     {"oversubscribed", false},
            {"seconds", seconds},    {"speedup", 1.0},         {"efficiency", 1.0},
            {"rate", 100 / seconds}, {"cpu_seconds", seconds}, {"verified", true}};
  if (!samples.empty()) r["samples"] = samples;
  return r;
}

json bounded_row(int procs, int threads, double seconds, double lo, double hi) {
  json r = row(procs, threads, seconds);
  r["seconds_min"] = lo;
  r["seconds_max"] = hi;
  return r;
}

json study(const std::string& hostname, const json& kernels) {
  json k = json::object();
  for (auto it = kernels.begin(); it != kernels.end(); ++it)
    k[it.key()] = {{"rows", it.value()}, {"rate_field", "mlups"}};
  return {{"command", "study"},       {"version", "0.1.0"},       {"machine", machine(hostname)},
          {"params", json::object()}, {"results", json::array()}, {"kernels", k}};
}

// Study A and B with known points (B's seconds over A's):
//   laplace n=640  | 1 x 1  0.5,  samples apart            -> real difference, B 2x faster
//   laplace n=640  | 2 x 1  1.02, samples overlap          -> within noise
//   laplace n=640  | 2 x 2  1.15, min-max ranges apart, but
//                           A's spread 20% > 13%           -> within noise
//   laplace n=640  | 1 x 2  0.9,  single runs, 10% > 5%    -> real difference, B faster
//   laplace n=1024 | 1 x 1  1.03, single runs, under 5%    -> within noise
//   laplace n=1024 | 2 x 1  1.5,  samples apart            -> real difference, B slower
//   laplace n=1024 | 4 x 1  1.3,  23% above the spreads,
//                           but the samples overlap        -> within noise
//   laplace n=1024 | 1 x 2  1.052, single runs: 1 - A/B
//                           is 4.9%, under 5%              -> within noise, either way round
//   laplace n=640  | 4 x 1  only in A;  gemm n=100 | 1 x 1  only in B
json study_a() {
  return study("alpha", {{"laplace n=640",
                          {row(1, 1, 1.0, {0.98, 1.0, 1.02}), row(2, 1, 0.6, {0.59, 0.6, 0.61}),
                           bounded_row(2, 2, 1.0, 0.9, 1.1), row(1, 2, 1.0), row(4, 1, 0.4)}},
                         {"laplace n=1024",
                          {row(1, 1, 1.0), row(2, 1, 1.0, {0.99, 1.0, 1.01}),
                           row(4, 1, 1.0, {1.0, 1.0, 1.2}), row(1, 2, 1.0)}}});
}

json study_b() {
  return study("beta", {{"laplace n=640",
                         {row(1, 1, 0.5, {0.49, 0.5, 0.51}), row(2, 1, 0.612, {0.60, 0.612, 0.62}),
                          bounded_row(2, 2, 1.15, 1.12, 1.3), row(1, 2, 0.9)}},
                        {"laplace n=1024",
                         {row(1, 1, 1.03), row(2, 1, 1.5, {1.45, 1.5, 1.55}),
                          row(4, 1, 1.3, {1.15, 1.3, 1.31}), row(1, 2, 1.052)}},
                        {"gemm n=100", {row(1, 1, 2.0)}}});
}

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

class Compare : public compas::testing::TempDirTest {
 protected:
  Compare() : TempDirTest("compas-compare-test") {}

  std::string write(const std::string& name, const std::string& text) const {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return path(name);
  }
  // A study directory: DIR/study.json.
  std::string write_study(const std::string& name, const json& doc) const {
    write(name + "/study.json", doc.dump(2));
    return path(name);
  }
  json load(const std::string& name) const {
    std::ifstream in(dir_ / name);
    std::stringstream s;
    s << in.rdbuf();
    json j = json::parse(s.str(), nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << name << " is not valid JSON:\n" << s.str();
    return j;
  }
  // The comparison's results by "point" and "measurement".
  std::map<std::string, json> by_point(const json& doc) const {
    std::map<std::string, json> out;
    for (const auto& r : doc["results"])
      out[r["point"].get<std::string>() + " / " + r["measurement"].get<std::string>()] = r;
    return out;
  }
  // Runs `compas compare a b --json out.json`, expects exit 0 and returns the JSON.
  json compare_ok(const std::string& a, const std::string& b, Ran* ran = nullptr) {
    const Ran r = compas({"compare", a, b, "--json", path("out.json")});
    EXPECT_EQ(r.exit_code, 0) << r.described;
    if (ran) *ran = r;
    return load("out.json");
  }
  // Expects exit 2, no output file, and stderr naming every one of `parts`.
  void expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& parts) {
    std::vector<std::string> all = {"compare"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"--json", path("refused.json")});
    const Ran r = compas(all);
    EXPECT_EQ(r.exit_code, 2) << r.described;
    for (const auto& p : parts)
      EXPECT_TRUE(has(r.err, p)) << "stderr lacks '" << p << "'\n" << r.described;
    EXPECT_FALSE(fs::exists(path("refused.json"))) << "a refused comparison wrote its file";
  }
};

void expect_point(const std::map<std::string, json>& points, const std::string& id,
                  const std::string& verdict, double ratio, const std::string& direction) {
  const auto it = points.find(id);
  ASSERT_NE(it, points.end()) << "no point '" << id << "'";
  const json& p = it->second;
  EXPECT_EQ(p["in"], "both") << p.dump();
  EXPECT_EQ(p["verdict"], verdict) << p.dump();
  ASSERT_TRUE(p["ratio"].is_number()) << p.dump();
  EXPECT_NEAR(p["ratio"].get<double>(), ratio, 1e-9) << p.dump();
  EXPECT_EQ(p["direction"], direction) << p.dump();
}

// ---- studies ----------------------------------------------------------------------------------

TEST_F(Compare, StudiesVerdictsRatiosAndSummary) {
  const std::string a = write_study("a", study_a()), b = write_study("b", study_b());
  Ran ran;
  const json doc = compare_ok(a, b, &ran);
  EXPECT_EQ(doc["command"], "compare");
  EXPECT_EQ(doc["params"]["a"]["kind"], "study");
  const auto points = by_point(doc);

  // A study's points are judged on the kernel's rate (here 100 / seconds): B/A of the rates.
  const std::string p11 = "laplace n=640 | 1 x 1 / mlups";
  expect_point(points, p11, "real difference", 2.0, "faster");
  EXPECT_NEAR(points.at(p11)["speedup"].get<double>(), 2.0, 1e-9);
  EXPECT_TRUE(points.at(p11)["tested"].get<bool>()) << points.at(p11).dump();
  EXPECT_TRUE(has(points.at(p11)["note"], "90% interval")) << points.at(p11).dump();
  // Three runs a side: the interval is the smallest and largest pairwise ratio.
  EXPECT_NEAR(points.at(p11)["interval"][0].get<double>(), 0.98 / 0.51, 1e-9);
  EXPECT_NEAR(points.at(p11)["interval"][1].get<double>(), 1.02 / 0.49, 1e-9);
  EXPECT_NEAR(points.at(p11)["confidence"].get<double>(), 0.9, 1e-9);
  EXPECT_NEAR(points.at(p11)["a"]["spread"].get<double>(), (100 / 0.98 - 100 / 1.02) / 100, 1e-9);
  expect_point(points, "laplace n=640 | 2 x 1 / mlups", "within noise", 1 / 1.02, "slower");
  EXPECT_TRUE(has(points.at("laplace n=640 | 2 x 1 / mlups")["note"], "includes 1"));
  // Min and max only (no samples): no test; the ranges are apart and 13% exceeds 5%.
  expect_point(points, "laplace n=640 | 2 x 2 / mlups", "real difference", 1 / 1.15, "slower");
  EXPECT_TRUE(has(points.at("laplace n=640 | 2 x 2 / mlups")["note"], "ranges apart"));
  EXPECT_TRUE(has(points.at("laplace n=640 | 2 x 2 / mlups")["note"], "no test"));
  EXPECT_EQ(points.at("laplace n=640 | 2 x 2 / mlups")["a"]["runs"], 0);  // min-max only
  expect_point(points, "laplace n=640 | 1 x 2 / mlups", "real difference", 1 / 0.9, "faster");
  EXPECT_TRUE(has(points.at("laplace n=640 | 1 x 2 / mlups")["note"], "single runs"));
  EXPECT_TRUE(points.at("laplace n=640 | 1 x 2 / mlups")["a"]["spread"].is_null());
  expect_point(points, "laplace n=1024 | 1 x 1 / mlups", "within noise", 1 / 1.03, "slower");
  expect_point(points, "laplace n=1024 | 2 x 1 / mlups", "real difference", 1 / 1.5, "slower");
  expect_point(points, "laplace n=1024 | 4 x 1 / mlups", "within noise", 1 / 1.3, "slower");
  expect_point(points, "laplace n=1024 | 1 x 2 / mlups", "within noise", 1 / 1.052, "slower");

  ASSERT_TRUE(points.count("laplace n=640 | 4 x 1 / mlups"));
  EXPECT_EQ(points.at("laplace n=640 | 4 x 1 / mlups")["verdict"], "only in A");
  EXPECT_TRUE(points.at("laplace n=640 | 4 x 1 / mlups")["b"].is_null());
  ASSERT_TRUE(points.count("gemm n=100 | 1 x 1 / mlups"));
  EXPECT_EQ(points.at("gemm n=100 | 1 x 1 / mlups")["verdict"], "only in B");
  EXPECT_EQ(points.size(), 10u);

  const json& s = doc["summary"];
  EXPECT_EQ(s["points_in_both"], 8);
  EXPECT_EQ(s["faster"], 2);
  EXPECT_EQ(s["slower"], 2);
  EXPECT_EQ(s["within_noise"], 4);
  EXPECT_EQ(s["only_in_a"], 1);
  EXPECT_EQ(s["only_in_b"], 1);
  const double logs = std::log(0.5) + std::log(1.02) + std::log(1.15) + std::log(0.9) +
                      std::log(1.03) + std::log(1.5) + std::log(1.3) + std::log(1.052);
  EXPECT_NEAR(s["geomean_ratio"].get<double>(), std::exp(-logs / 8), 1e-9);
  EXPECT_NEAR(s["geomean_speedup"].get<double>(), std::exp(-logs / 8), 1e-9);

  // The machines side by side, the differing line marked.
  bool host_differs = false, cores_same = false;
  for (const auto& l : doc["machines"]) {
    if (l["field"] == "hostname") host_differs = l["differs"] == true && l["a"] == "alpha";
    if (l["field"] == "cores") cores_same = l["differs"] == false && l["a"] == "2";
  }
  EXPECT_TRUE(host_differs) << doc["machines"].dump();
  EXPECT_TRUE(cores_same) << doc["machines"].dump();

  // The table says the same.
  EXPECT_TRUE(has(ran.out, "* hostname")) << ran.out;
  EXPECT_TRUE(has(ran.out, "real difference: B 2.00x faster")) << ran.out;
  EXPECT_TRUE(has(ran.out, "only in A")) << ran.out;
  EXPECT_TRUE(has(ran.out,
                  "8 points in both: 2 faster, 2 slower, 4 within noise; 1 only in A, 1 "
                  "only in B"))
      << ran.out;
}

TEST_F(Compare, SwappingInputsKeepsVerdictsAndInvertsRatios) {
  const std::string a = write_study("a", study_a()), b = write_study("b", study_b());
  const auto ab = by_point(compare_ok(a, b));
  const auto ba = by_point(compare_ok(b, a));
  ASSERT_EQ(ab.size(), ba.size());
  for (const auto& [id, p] : ab) {
    ASSERT_TRUE(ba.count(id)) << id;
    const json& q = ba.at(id);
    if (p["in"] != "both") {
      EXPECT_NE(q["in"], "both") << id;
      continue;
    }
    EXPECT_EQ(p["verdict"], q["verdict"]) << id;
    EXPECT_NEAR(p["ratio"].get<double>() * q["ratio"].get<double>(), 1.0, 1e-9) << id;
  }
}

TEST_F(Compare, StudyAgainstItselfIsAllWithinNoise) {
  const std::string a = write_study("a", study_a());
  Ran ran;
  const json doc = compare_ok(a, a, &ran);
  ASSERT_EQ(doc["results"].size(), 9u);
  for (const auto& p : doc["results"]) {
    EXPECT_EQ(p["in"], "both") << p.dump();
    EXPECT_EQ(p["verdict"], "within noise") << p.dump();
    EXPECT_EQ(p["ratio"], 1.0) << p.dump();
  }
  EXPECT_EQ(doc["summary"]["faster"], 0);
  EXPECT_EQ(doc["summary"]["slower"], 0);
  EXPECT_EQ(doc["summary"]["within_noise"], 9);
  EXPECT_EQ(doc["summary"]["geomean_ratio"], 1.0);
  EXPECT_FALSE(has(ran.out, "\n  * ")) << "a machine line marked as differing:\n" << ran.out;
}

TEST_F(Compare, StudyDirectoryAgainstItsStudyJson) {
  const std::string a = write_study("a", study_a());
  const json doc = compare_ok(a, path("a/study.json"));
  EXPECT_EQ(doc["summary"]["within_noise"], 9);
}

TEST_F(Compare, CsvHasOneFlatRowPerPoint) {
  const std::string a = write_study("a", study_a()), b = write_study("b", study_b());
  const Ran r = compas({"compare", a, b, "--quiet", "--csv", path("out.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.described;
  EXPECT_EQ(r.out, "") << "--quiet printed a table";
  std::ifstream in(path("out.csv"));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 11u) << "a header and 10 points";
  for (const char* column : {"point,", ",a,", ",a_min,", ",b_spread,", ",ratio,", ",verdict,"})
    EXPECT_TRUE(has(lines[0], column)) << column << " not in " << lines[0];
  EXPECT_FALSE(has(lines[0], "key")) << lines[0];
}

// A Laplace point of n = 640 run for `iters` sweeps in `seconds` (three runs: 0.98, 1 and 1.02 of
// it): its rate in million updates per second, as a study records it.
json laplace_row(int iters, double seconds) {
  const double mlups = 640.0 * 640.0 * iters / seconds / 1e6;
  json r = row(1, 1, seconds, {0.98 * seconds, seconds, 1.02 * seconds});
  r["rate"] = mlups;
  r["work"] = {{"iters", iters}, {"sweeps", iters}};
  return r;
}

// The same point as `compas run laplace --json` writes it.
json laplace_file(int iters, double seconds) {
  const double mlups = 640.0 * 640.0 * iters / seconds / 1e6;
  json rec = {{"kernel", "laplace"}, {"n", 640},
              {"procs", 1},          {"threads", 1},
              {"iters", iters},      {"sweeps", iters},
              {"seconds", seconds},  {"samples", {0.98 * seconds, seconds, 1.02 * seconds}},
              {"mlups", mlups},      {"verified", true}};
  return {{"command", "run"},
          {"version", "0.1.0"},
          {"machine", machine("alpha")},
          {"params", {{"n", 640}, {"iters", iters}}},
          {"results", {rec}}};
}

// A with 2000 sweeps in 2 s, B with 100 sweeps in 0.27 s: B takes 7.4 times less time, but each
// of its sweeps takes 2.7 times longer. Both modes pair the points by their rate and say so.
TEST_F(Compare, DifferentIterationsArePairedPerUnitOfWorkNotByTotalTime) {
  const double ratio = (100 / 0.27) / (2000 / 2.0);  // B's rate over A's
  json sa = study("alpha", {{"laplace n=640", {laplace_row(2000, 2.0)}}});
  json sb = study("alpha", {{"laplace n=640", {laplace_row(100, 0.27)}}});
  const auto studies = by_point(compare_ok(write_study("a", sa), write_study("b", sb)));
  ASSERT_EQ(studies.size(), 1u) << "a study is compared on its rate only";
  expect_point(studies, "laplace n=640 | 1 x 1 / mlups", "real difference", ratio, "slower");

  const auto files = by_point(compare_ok(write("a.json", laplace_file(2000, 2.0).dump()),
                                         write("b.json", laplace_file(100, 0.27).dump())));
  const std::string key = "kernel=laplace n=640 procs=1 threads=1";
  expect_point(files, key + " / mlups", "real difference", ratio, "slower");
  ASSERT_TRUE(files.count(key + " / seconds")) << "iters kept the records apart";
  const json& sec = files.at(key + " / seconds");
  EXPECT_EQ(sec["verdict"], "different work") << sec.dump();
  EXPECT_TRUE(sec["speedup"].is_null()) << "a total time of unequal work got a speedup";
  EXPECT_TRUE(has(sec["note"], "iters 2000")) << sec.dump();
  EXPECT_TRUE(has(sec["note"], "iters 100")) << sec.dump();
}

// Equal work is paired on seconds too; rows of a study without recorded work are not.
TEST_F(Compare, TotalTimesArePairedOnlyWhenTheWorkIsRecordedAndEqual) {
  json sa = study("alpha", {{"laplace n=640", {laplace_row(500, 1.0)}}});
  json sb = study("alpha", {{"laplace n=640", {laplace_row(500, 0.5)}}});
  for (json* s : {&sa, &sb}) (*s)["kernels"]["laplace n=640"]["rate_field"] = "seconds";
  const auto equal = by_point(compare_ok(write_study("a", sa), write_study("b", sb)));
  expect_point(equal, "laplace n=640 | 1 x 1 / seconds", "real difference", 0.5, "faster");
  sb["kernels"]["laplace n=640"]["rows"][0].erase("work");
  const auto unknown = by_point(compare_ok(write_study("a", sa), write_study("c", sb)));
  EXPECT_EQ(unknown.at("laplace n=640 | 1 x 1 / seconds")["verdict"], "different work");
  EXPECT_TRUE(has(unknown.at("laplace n=640 | 1 x 1 / seconds")["note"], "not recorded"));
}

// A spread beyond 100% on one side must not hide a 24-fold difference: the old rule compared the
// difference (under 1 always) with the spread and called this "within noise".
TEST_F(Compare, AWideSpreadDoesNotHideALargeDifference) {
  json sa = study("alpha", {{"gemm n=256", {row(1, 1, 1.1, {1.0, 1.1, 12})}}});
  json sb = study("alpha", {{"gemm n=256", {row(1, 1, 25, {24, 25, 26})}}});
  for (json* s : {&sa, &sb}) {
    (*s)["kernels"]["gemm n=256"]["rate_field"] = "seconds";  // judged on seconds
    (*s)["kernels"]["gemm n=256"]["rows"][0]["work"] = {{"iters", 3}};
  }
  const auto points = by_point(compare_ok(write_study("a", sa), write_study("b", sb)));
  const std::string id = "gemm n=256 | 1 x 1 / seconds";
  ASSERT_TRUE(points.count(id));
  const json& p = points.at(id);
  EXPECT_GT(p["a"]["spread"].get<double>(), 1.0) << p.dump();
  expect_point(points, id, "real difference", 25 / 1.1, "slower");
  EXPECT_TRUE(has(p["note"], "excludes 1")) << p.dump();
  EXPECT_NEAR(p["p_value"].get<double>(), 0.1, 1e-9) << "3 against 3, all apart: exact p = 2/20";
}

// Too few repetitions for the interval: the note says it and that no test was made.
TEST_F(Compare, TwoRunsASideAreNotTested) {
  json sa = study("alpha", {{"laplace n=640", {row(1, 1, 1.0, {0.99, 1.01})}}});
  json sb = study("alpha", {{"laplace n=640", {row(1, 1, 2.0, {1.98, 2.02})}}});
  const auto points = by_point(compare_ok(write_study("a", sa), write_study("b", sb)));
  const json& p = points.at("laplace n=640 | 1 x 1 / mlups");
  EXPECT_FALSE(p["tested"].get<bool>()) << p.dump();
  EXPECT_TRUE(has(p["note"], "2 and 2 runs, too few for a 90% interval (it needs 3 each)"))
      << p.dump();
  EXPECT_EQ(p["verdict"], "real difference") << "ranges apart and 50% exceeds 5%";
}

// --fail-above R: exit 1 naming each point where a real difference makes B worse than A by more
// than R times; 0 when none is; a factor that is not above 1 is refused.
TEST_F(Compare, FailAboveExitsOneOnARegressionBeyondTheFactor) {
  const std::string a = write_study("a", study_a()), b = write_study("b", study_b());
  const Ran bad = compas({"compare", a, b, "--quiet", "--fail-above", "1.4"});
  EXPECT_EQ(bad.exit_code, 1) << bad.described;
  EXPECT_TRUE(has(bad.err, "1 regression beyond --fail-above 1.4")) << bad.described;
  EXPECT_TRUE(has(bad.err, "laplace n=1024 | 2 x 1 / mlups: B 1.5x worse")) << bad.described;
  const Ran fine = compas({"compare", a, b, "--quiet", "--fail-above", "1.6"});
  EXPECT_EQ(fine.exit_code, 0) << fine.described;
  EXPECT_EQ(fine.err, "") << fine.described;
  // B against A: A's points are the worse ones now, and 2x slower exceeds 1.6.
  const Ran swapped = compas({"compare", b, a, "--quiet", "--fail-above", "1.6"});
  EXPECT_EQ(swapped.exit_code, 1) << swapped.described;
  EXPECT_TRUE(has(swapped.err, "laplace n=640 | 1 x 1 / mlups")) << swapped.described;
  for (const char* factor : {"1", "0.9", "abc", "0x2", "-2"}) {
    const Ran r = compas({"compare", a, b, "--fail-above", factor});
    EXPECT_EQ(r.exit_code, 2) << factor << "\n" << r.described;
    EXPECT_TRUE(has(r.err, "--fail-above")) << factor << "\n" << r.described;
  }
}

// The builds side by side: commit, build flags and libraries from each input's "run" object.
TEST_F(Compare, TheBuildsAreShownBesideTheMachines) {
  json sa = study_a(), sb = study_b();
  sa["run"] = {{"date", "2026-01-01T00:00:00Z"},
               {"git_commit", "aaa"},
               {"build", {{"type", "Release"}, {"flags", "-O3"}}},
               {"libraries", {{"ucx", "1.13.1"}}}};
  sb["run"] = sa["run"];
  sb["run"]["git_commit"] = "bbb";
  const json doc = compare_ok(write_study("a", sa), write_study("b", sb));
  std::map<std::string, json> lines;
  for (const auto& l : doc["machines"]) lines[l["field"].get<std::string>()] = l;
  ASSERT_TRUE(lines.count("run.git_commit")) << doc["machines"].dump();
  EXPECT_EQ(lines["run.git_commit"]["differs"], true);
  EXPECT_EQ(lines["run.build.flags"]["differs"], false);
  EXPECT_EQ(lines["run.libraries.ucx"]["a"], "1.13.1");
  EXPECT_FALSE(lines.count("run.date")) << "the date differs always: not a line";
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
      compas({"membw", "--size", "256KiB", "--threads", "1", "--kernels", "copy", "--repeats", "3",
              "--min-repeat-ms", "1", "--quiet", "--json", path("m.json")});
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
  json no_seconds = study_a();
  no_seconds["kernels"]["laplace n=640"]["rows"][1].erase("seconds");
  const std::string bad = write_study("noseconds", no_seconds);
  expect_refused({good, bad}, {"rows[1]", "\"seconds\"", path("noseconds/study.json")});
  json bad_samples = study_a();
  bad_samples["kernels"]["laplace n=640"]["rows"][0]["samples"] = "fast";
  expect_refused({write_study("badsamples", bad_samples), good}, {"\"samples\"", "rows[0]"});
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
  const Ran r = compas({"compare", a, a, "--json", a});
  EXPECT_EQ(r.exit_code, 2) << r.described;
  EXPECT_TRUE(has(r.err, "is input A")) << r.described;
  EXPECT_EQ(load("m.json")["command"], "membw") << "the input was overwritten";
}

}  // namespace
