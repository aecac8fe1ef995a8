// Tests of `compas compare`, run as a separate process the way a user runs it: synthetic study
// directories and membw-style files with known ratios and spreads, so that every verdict is known
// in advance (no test passes or fails on a measured time), and the contract for bad input: exit 2
// with a message naming the input and the problem, and no output file written. Studies here;
// command files and refused inputs in test_compare_files.cpp.
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

#include "compare_cases.hpp"

namespace {

using namespace compare_test;

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
  // Two single runs 10% apart: no spread is known, so no verdict (before: "real difference").
  expect_point(points, "laplace n=640 | 1 x 2 / mlups", "unknown (no spread)", 1 / 0.9, "faster");
  EXPECT_TRUE(has(points.at("laplace n=640 | 1 x 2 / mlups")["note"], "single runs"));
  EXPECT_TRUE(points.at("laplace n=640 | 1 x 2 / mlups")["a"]["spread"].is_null());
  expect_point(points, "laplace n=1024 | 1 x 1 / mlups", "unknown (no spread)", 1 / 1.03, "slower");
  expect_point(points, "laplace n=1024 | 2 x 1 / mlups", "real difference", 1 / 1.5, "slower");
  expect_point(points, "laplace n=1024 | 4 x 1 / mlups", "within noise", 1 / 1.3, "slower");
  expect_point(points, "laplace n=1024 | 1 x 2 / mlups", "unknown (no spread)", 1 / 1.052,
               "slower");

  ASSERT_TRUE(points.count("laplace n=640 | 4 x 1 / mlups"));
  EXPECT_EQ(points.at("laplace n=640 | 4 x 1 / mlups")["verdict"], "only in A");
  EXPECT_TRUE(points.at("laplace n=640 | 4 x 1 / mlups")["b"].is_null());
  ASSERT_TRUE(points.count("gemm n=100 | 1 x 1 / mlups"));
  EXPECT_EQ(points.at("gemm n=100 | 1 x 1 / mlups")["verdict"], "only in B");
  EXPECT_EQ(points.size(), 10u);

  const json& s = doc["summary"];
  EXPECT_EQ(s["points_in_both"], 8);
  EXPECT_EQ(s["faster"], 1);
  EXPECT_EQ(s["slower"], 2);
  EXPECT_EQ(s["within_noise"], 2);
  EXPECT_EQ(s["unknown"], 3);
  // Four points tested by their intervals at 90%: 0.4 real differences expected by chance.
  EXPECT_EQ(s["tested"], 4);
  EXPECT_NEAR(s["expected_false_differences"].get<double>(), 0.4, 1e-9);
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
                  "8 points in both: 1 faster, 2 slower, 2 within noise, 3 unknown (single "
                  "runs, no spread); 1 only in A, 1 only in B"))
      << ran.out;
  EXPECT_TRUE(has(ran.out,
                  "(4 points tested at 90% each: about 0.4 of them would show a real "
                  "difference by chance alone)"))
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
  const Ran r = run_compas({"compare", a, b, "--quiet", "--csv", path("out.csv")});
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

// A Laplace point of n = 640 whose runs did `iters` sweeps in `seconds` (three runs: 0.98, 1 and
// 1.02 of it): each run's seconds per sweep and rate in million updates per second, as a study
// records them.
json laplace_row(int iters, double seconds) {
  const double t = seconds / iters;
  return row(1, 1, t, {0.98 * t, t, 1.02 * t}, 640.0 * 640.0 / 1e6);
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

// A study's rows are per unit of work: without a rate they are judged on their seconds per unit,
// whatever work each run did (a study never pairs total times).
TEST_F(Compare, AStudyWithoutARateIsJudgedOnItsTimePerUnit) {
  json sa = study("alpha", {{"laplace n=640", {laplace_row(500, 1.0)}}});
  json sb = study("alpha", {{"laplace n=640", {laplace_row(1000, 1.0)}}});
  for (json* s : {&sa, &sb}) (*s)["kernels"]["laplace n=640"]["rate_field"] = "seconds";
  const auto points = by_point(compare_ok(write_study("a", sa), write_study("b", sb)));
  expect_point(points, "laplace n=640 | 1 x 1 / seconds_per_unit", "real difference", 0.5,
               "faster");
}

// A spread beyond 100% on one side must not hide a 24-fold difference: the old rule compared the
// difference (under 1 always) with the spread and called this "within noise".
TEST_F(Compare, AWideSpreadDoesNotHideALargeDifference) {
  json sa = study("alpha", {{"gemm n=256", {row(1, 1, 1.1, {1.0, 1.1, 12})}}});
  json sb = study("alpha", {{"gemm n=256", {row(1, 1, 25, {24, 25, 26})}}});
  for (json* s : {&sa, &sb})
    (*s)["kernels"]["gemm n=256"]["rate_field"] = "seconds";  // judged on seconds per unit
  const auto points = by_point(compare_ok(write_study("a", sa), write_study("b", sb)));
  const std::string id = "gemm n=256 | 1 x 1 / seconds_per_unit";
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

// --fail-above R: exit 3 naming each point where a real difference makes B worse than A by more
// than R times (1 is a failure of compare itself, 2 bad input); 0 when none is; a factor that is
// not above 1 is refused.
TEST_F(Compare, FailAboveExitsThreeOnARegressionBeyondTheFactor) {
  const std::string a = write_study("a", study_a()), b = write_study("b", study_b());
  const Ran bad = run_compas({"compare", a, b, "--quiet", "--fail-above", "1.4"});
  EXPECT_EQ(bad.exit_code, 3) << bad.described;
  EXPECT_TRUE(has(bad.err, "1 regression beyond --fail-above 1.4")) << bad.described;
  EXPECT_TRUE(has(bad.err, "laplace n=1024 | 2 x 1 / mlups: B 1.5x worse")) << bad.described;
  const Ran fine = run_compas({"compare", a, b, "--quiet", "--fail-above", "1.6"});
  EXPECT_EQ(fine.exit_code, 0) << fine.described;
  EXPECT_EQ(fine.err, "") << fine.described;
  // B against A: A's points are the worse ones now, and 2x slower exceeds 1.6.
  const Ran swapped = run_compas({"compare", b, a, "--quiet", "--fail-above", "1.6"});
  EXPECT_EQ(swapped.exit_code, 3) << swapped.described;
  EXPECT_TRUE(has(swapped.err, "laplace n=640 | 1 x 1 / mlups")) << swapped.described;
  for (const char* factor : {"1", "0.9", "abc", "0x2", "-2"}) {
    const Ran r = run_compas({"compare", a, b, "--fail-above", factor});
    EXPECT_EQ(r.exit_code, 2) << factor << "\n" << r.described;
    EXPECT_TRUE(has(r.err, "--fail-above")) << factor << "\n" << r.described;
  }
}

// A check that looked at nothing has not passed: with no point in both inputs, --fail-above exits
// 1 saying so (it exited 0 on "0 points in both").
TEST_F(Compare, FailAboveWithNothingToJudgeFails) {
  json sa = study("alpha", {{"laplace n=640", {row(1, 1, 1.0, {0.99, 1.0, 1.01})}}});
  json sb = study("alpha", {{"gemm n=256", {row(1, 1, 1.0, {0.99, 1.0, 1.01})}}});
  const Ran r = run_compas(
      {"compare", write_study("a", sa), write_study("b", sb), "--quiet", "--fail-above", "1.01"});
  EXPECT_EQ(r.exit_code, 1) << r.described;
  EXPECT_TRUE(has(r.err, "no point could be judged")) << r.described;
}

// Two `compas run laplace --json` files of one point pair, whatever their free text says: the
// store choice's reason holds the timings that decided it (before: "0 points in both").
TEST_F(Compare, RunFilesPairWhateverTheirFreeTextSays) {
  json fa = laplace_file(100, 1.0), fb = laplace_file(100, 1.0);
  fa["results"][0]["stores_reason"] = "auto: cached 1.23 ms, streaming 1.31 ms";
  fb["results"][0]["stores_reason"] = "auto: cached 1.25 ms, streaming 1.30 ms";
  fb["results"][0]["min_seconds_note"] = "not reached after 6 tries";
  const json doc = compare_ok(write("a.json", fa.dump()), write("b.json", fb.dump()));
  EXPECT_GT(doc["summary"]["points_in_both"].get<int>(), 0) << doc.dump();
  EXPECT_EQ(doc["summary"]["only_in_a"], 0) << doc.dump();
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

}  // namespace
