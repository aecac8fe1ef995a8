// What the tests of `compas compare` share: running compas, synthetic machines, study rows and
// studies, and the Compare fixture (a temporary directory, writers, the comparison run).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../common/proc.hpp"

namespace compare_test {

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

inline Ran run_compas(const std::vector<std::string>& args) {
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

inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline json machine(const std::string& hostname) {
  return {{"sockets", 1},
          {"cores", 2},
          {"pus", 2},
          {"cpu_model", "Test CPU"},
          {"compiler", "gcc 12"},
          {"hostname", hostname},
          {"os", "Linux 6"},
          {"libraries", {{"hwloc", "2.9.0"}}}};
}

// A study row: seconds per unit (the median) with each run's, or with only a min and a max, or a
// single run (no samples, no bounds); each run's rate is `work` units per second over its time.
inline json row(int procs, int threads, double seconds, std::vector<double> samples = {},
                double work = 100) {
  json r = {{"procs", procs},    {"threads", threads},          {"oversubscribed", false},
            {"unit", "sweep"},   {"seconds_per_unit", seconds}, {"speedup", 1.0},
            {"efficiency", 1.0}, {"rate", work / seconds},      {"verified", true}};
  if (!samples.empty()) {
    r["seconds_per_unit_samples"] = samples;
    json rates = json::array();
    for (double s : samples) rates.push_back(work / s);
    r["rate_samples"] = rates;
  }
  return r;
}

inline json bounded_row(int procs, int threads, double seconds, double lo, double hi) {
  json r = row(procs, threads, seconds);
  r["seconds_per_unit_min"] = lo;
  r["seconds_per_unit_max"] = hi;
  r["rate_min"] = 100 / hi;
  r["rate_max"] = 100 / lo;
  return r;
}

inline json study(const std::string& hostname, const json& kernels) {
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
inline json study_a() {
  return study("alpha", {{"laplace n=640",
                          {row(1, 1, 1.0, {0.98, 1.0, 1.02}), row(2, 1, 0.6, {0.59, 0.6, 0.61}),
                           bounded_row(2, 2, 1.0, 0.9, 1.1), row(1, 2, 1.0), row(4, 1, 0.4)}},
                         {"laplace n=1024",
                          {row(1, 1, 1.0), row(2, 1, 1.0, {0.99, 1.0, 1.01}),
                           row(4, 1, 1.0, {1.0, 1.0, 1.2}), row(1, 2, 1.0)}}});
}

inline json study_b() {
  return study("beta", {{"laplace n=640",
                         {row(1, 1, 0.5, {0.49, 0.5, 0.51}), row(2, 1, 0.612, {0.60, 0.612, 0.62}),
                          bounded_row(2, 2, 1.15, 1.12, 1.3), row(1, 2, 0.9)}},
                        {"laplace n=1024",
                         {row(1, 1, 1.03), row(2, 1, 1.5, {1.45, 1.5, 1.55}),
                          row(4, 1, 1.3, {1.15, 1.3, 1.31}), row(1, 2, 1.052)}},
                        {"gemm n=100", {row(1, 1, 2.0)}}});
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
    const Ran r = run_compas({"compare", a, b, "--json", path("out.json")});
    EXPECT_EQ(r.exit_code, 0) << r.described;
    if (ran) *ran = r;
    return load("out.json");
  }
  // Expects exit 2, no output file, and stderr naming every one of `parts`.
  void expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& parts) {
    std::vector<std::string> all = {"compare"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"--json", path("refused.json")});
    const Ran r = run_compas(all);
    EXPECT_EQ(r.exit_code, 2) << r.described;
    for (const auto& p : parts)
      EXPECT_TRUE(has(r.err, p)) << "stderr lacks '" << p << "'\n" << r.described;
    EXPECT_FALSE(fs::exists(path("refused.json"))) << "a refused comparison wrote its file";
  }
};

inline void expect_point(const std::map<std::string, json>& points, const std::string& id,
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

}  // namespace compare_test
