// `compas compare` on small inputs made to take memory without bound: many repetitions (all
// pairwise ratios would be 20,000 x 20,000). Each is compared in bounded memory. Every run is in a
// memory cgroup of 256 MiB the test makes (what takes more is OOM-killed there, not on the
// machine): part of test_compare.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../common/cgroup.hpp"
#include "compare_cases.hpp"

namespace {

using namespace compare_test;
using compas::testing::MemoryCgroup;

constexpr std::uint64_t kLimit = 256ull << 20;

#define NEED_CGROUP(cg) \
  if (!(cg).ok()) GTEST_SKIP() << "no memory cgroup to run in: " << (cg).why()

// `compas compare args... --json OUT` inside `cg`.
Ran compare_in(const MemoryCgroup& cg, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {COMPAS_EXE, "compare"};
  argv.insert(argv.end(), args.begin(), args.end());
  Proc p(cg.wrap(argv), {});
  Ran r;
  if (!p.wait(120)) {
    ADD_FAILURE() << "compas compare did not exit within 120 s";
    return r;
  }
  r.exit_code = p.exit_code;
  r.out = p.out;
  r.err = p.err;
  r.described = p.describe();
  return r;
}

// A `compas run sort` file of one record; `extra` goes into "machine" as its field "x".
json run_file(const json& samples, const std::string& extra = "") {
  json machine_json = machine("h");
  if (!extra.empty()) machine_json["x"] = "PLACEHOLDER";
  json doc = {{"command", "run"},
              {"version", "0.1.0"},
              {"machine", machine_json},
              {"results",
               {{{"kernel", "sort"}, {"keys", 1000000}, {"seconds", 0.01}, {"samples", samples}}}}};
  return doc;
}

std::string run_text(const json& samples, const std::string& extra) {
  std::string text = run_file(samples, extra).dump();
  if (!extra.empty()) text.replace(text.find("\"PLACEHOLDER\""), 13, extra);
  return text;
}

class CompareHostile : public Compare {};

// 20,000 repetitions a side (440 KB): the interval of B / A from 400 million pairwise ratios,
// never all held (they would take 3.2 GB).
TEST_F(CompareHostile, ManyRepetitionsAreJudgedInBoundedMemory) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  std::vector<double> samples;
  for (int i = 0; i < 20000; ++i) samples.push_back(0.01 * (1 + (i % 97) * 1e-4));
  const std::string a = write("a.json", run_text(samples, ""));
  const Ran r = compare_in(cg, {a, a, "--json", path("out.json")});
  ASSERT_EQ(r.exit_code, 0) << r.described;
  const auto points = by_point(load("out.json"));
  const json& p = points.at("kernel=sort keys=1000000 / seconds");
  EXPECT_EQ(p["verdict"], "within noise") << p.dump();
  EXPECT_TRUE(p["tested"].get<bool>()) << p.dump();
  EXPECT_LE(p["interval"][0].get<double>(), 1.0) << p.dump();
  EXPECT_GE(p["interval"][1].get<double>(), 1.0) << p.dump();
  EXPECT_TRUE(has(p["note"].get<std::string>(), "20000 and 20000 runs")) << p.dump();
}

}  // namespace
