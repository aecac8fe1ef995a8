// `compas compare` on small inputs made to take memory or stack without bound: many repetitions
// (all pairwise ratios would be 20,000 x 20,000), deep nesting, long keys, nested long keys the
// machine lines would spell out in full, values that take many times their text, a number out
// of range. Each is compared in bounded memory or refused with exit 2 naming the file and the
// bound. Every run is in a memory cgroup of 256 MiB the test makes (what takes more is
// OOM-killed there, not on the machine): part of test_compare.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../common/cgroup.hpp"
#include "../common/sanitized.hpp"
#include "compare_cases.hpp"

namespace {

using namespace compare_test;
using compas::testing::MemoryCgroup;

// Under AddressSanitizer every allocation carries its shadow and redzones: 4x the room, still far
// below what the unbounded readers took (3.2 GB for two files of 20,000 repetitions).
constexpr std::uint64_t kLimit = (compas::test::kSanitized ? 1024ull : 256ull) << 20;

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

std::string nested(int levels, const std::string& key) {
  std::string s;
  for (int i = 0; i < levels; ++i) s += "{\"" + key + "\":";
  return s + "1" + std::string(levels, '}');
}

class CompareHostile : public Compare {
 protected:
  std::string base() { return write("base.json", run_text({0.01, 0.011, 0.012}, "")); }
  void expect_refused_in(const MemoryCgroup& cg, const std::string& bad,
                         const std::vector<std::string>& parts) {
    const Ran r = compare_in(cg, {base(), bad, "--json", path("refused.json")});
    EXPECT_EQ(r.exit_code, 2) << r.described;
    EXPECT_TRUE(has(r.err, "B '" + bad + "'")) << r.described;
    for (const auto& p : parts) EXPECT_TRUE(has(r.err, p)) << "no '" << p << "'\n" << r.described;
    EXPECT_FALSE(fs::exists(path("refused.json")));
  }
};

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

// 200,000 nested objects (1.2 MB): refused at the reader's 64 levels, never a stack overflow.
TEST_F(CompareHostile, DeepNestingIsRefusedNamingTheFileAndTheBound) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  const std::string bad = write("deep.json", run_text({0.01}, nested(200000, "a")));
  expect_refused_in(cg, bad, {"nested more than 64 levels deep"});
}

// Keys of 2,000 bytes, nested 3,000 deep (6 MB): refused at the first key past 1 KiB.
TEST_F(CompareHostile, LongKeysAreRefusedNamingTheFileAndTheBound) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  const std::string bad =
      write("longkeys.json", run_text({0.01}, nested(3000, std::string(2000, 'k'))));
  expect_refused_in(cg, bad, {"a key of 2000 bytes", "at most 1024 bytes"});
}

// Within the reader's bounds (60 levels of 1,000-byte keys over 20,000 fields, 260 KB), the
// machine lines would spell 60 KB of name for each field (1.2 GB): they stop at 1 MiB of text
// and count the rest.
TEST_F(CompareHostile, NestedLongKeysMakeBoundedMachineLines) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  std::string leaves;
  for (int i = 0; i < 20000; ++i) leaves += (i ? ",\"" : "\"") + std::to_string(i) + "\":1";
  std::string deep = "{" + leaves + "}";
  for (int i = 0; i < 60; ++i) deep = "{\"" + std::string(1000, 'k') + "\":" + deep + "}";
  const std::string b = write("b.json", run_text({0.01, 0.011, 0.012}, deep));
  const Ran r = compare_in(cg, {base(), b, "--json", path("out.json")});
  ASSERT_EQ(r.exit_code, 0) << r.described;
  bool counted = false;
  const json doc = load("out.json");
  for (const auto& line : doc["machines"])
    if (line["field"] == "(fields left out)") {
      counted = true;
      EXPECT_TRUE(has(line["b"].get<std::string>(), "past 1 MiB of text")) << line.dump();
    }
  EXPECT_TRUE(counted) << "no line counting the fields left out";
}

// A list of 1.4 million empty strings (4.2 MB) would take 27 times its size in memory: refused
// by the reader's bound of 12 times.
TEST_F(CompareHostile, ValuesTakingManyTimesTheirTextAreRefused) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  std::string list = "[\"\"";
  for (int i = 1; i < 1400000; ++i) list += ",\"\"";
  list += "]";
  const std::string bad = write("strings.json", run_text({0.01}, list));
  expect_refused_in(cg, bad, {"would take more than", "12 times its size"});
}

// A number no double holds: bad input (exit 2) naming the file, not an error of compas (exit 1).
TEST_F(CompareHostile, ANumberOutOfRangeIsRefusedNamingTheFile) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  const std::string bad = write("huge.json", run_text({0.01}, "1e400"));
  expect_refused_in(cg, bad, {"not valid JSON", "1e400"});
}

}  // namespace
