// Every kernel of compas's table (`compas run --list`), run as a user runs it: its quickest size
// alone and on a 2-process job must verify and report its rate in the field the table names;
// a perturbed run (--inject-fault) must fail verification and exit 1; the study must plan its
// sizes. A kernel added to the table is tested here without a line of this file changing.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"

namespace {

using namespace cli;

struct Listed {
  std::string name, rate, stream;
  bool weak = false;
  std::vector<std::string> quick;  // flags of its quickest size
};

std::vector<Listed> listed_kernels() {
  const Outcome r = run_compas({"run", "--list"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  const std::regex line(R"(^(\S+)\s+rate (\S+)\s+stream (\S+)\s+weak (yes|no)\s+quick: (.*)$)");
  std::vector<Listed> out;
  for (const auto& text : lines_of(r.out)) {
    std::smatch m;
    EXPECT_TRUE(std::regex_match(text, m, line)) << "not a kernel line: " << text;
    if (m.empty()) continue;
    Listed k{m[1], m[2], m[3], m[4] == "yes", {}};
    std::istringstream flags(m[5].str());
    for (std::string f; flags >> f;) k.quick.push_back(f);
    out.push_back(k);
  }
  return out;
}

std::vector<std::string> run_args(const Listed& k, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run", k.name};
  args.insert(args.end(), k.quick.begin(), k.quick.end());
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// The record of a verified run of `k` in `file`, checked against the table.
void expect_verified_record(const json& j, const Listed& k, int nodes) {
  ASSERT_TRUE(j.contains("results") && j["results"].size() == 1) << j.dump();
  const json& rec = j["results"][0];
  EXPECT_EQ(rec.value("kernel", ""), k.name);
  EXPECT_EQ(rec.value("processes", 0), nodes);
  EXPECT_TRUE(rec.value("verified", false)) << rec.dump();
  ASSERT_TRUE(rec.contains(k.rate)) << k.name << " has no rate field '" << k.rate << "'";
  EXPECT_GT(rec[k.rate].get<double>(), 0.0) << k.name;
  EXPECT_GT(rec.value("seconds", 0.0), 0.0) << k.name;
  ASSERT_TRUE(rec.contains("regions")) << k.name;
  EXPECT_TRUE(rec["regions"].is_object() && !rec["regions"].empty()) << k.name;
  EXPECT_EQ(j["params"].value("kernel", ""), k.name);
}

TEST_F(Cli, TheKernelTableListsTheFourKernelsWithTheirRateAndStream) {
  const auto kernels = listed_kernels();
  std::vector<std::string> names;
  for (const auto& k : kernels) {
    names.push_back(k.name);
    EXPECT_TRUE(k.stream == "load" || k.stream == "copy") << k.name << ": " << k.stream;
    EXPECT_FALSE(k.quick.empty()) << k.name;
  }
  for (const char* want : {"laplace", "gemm", "cg", "sort"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
}

TEST_F(Cli, EveryKernelOfTheTableVerifiesAloneAndOnTwoProcesses) {
  for (const auto& k : listed_kernels()) {
    SCOPED_TRACE(k.name);
    const std::string one = path(k.name + "_1.json"), two = path(k.name + "_2.json");
    const Outcome alone = run_compas(run_args(k, {"--threads", "2", "--quiet", "--json", one}));
    ASSERT_EQ(alone.exit_code, 0) << alone.describe();
    EXPECT_NE(alone.out.find("verified: "), std::string::npos) << alone.describe();
    expect_verified_record(load_json(k.name + "_1.json"), k, 1);
    const Outcome job = run_compas_job(2, run_args(k, {"--quiet", "--json", two}));
    ASSERT_EQ(job.exit_code, 0) << job.describe();
    expect_verified_record(load_json(k.name + "_2.json"), k, 2);
  }
}

TEST_F(Cli, EveryKernelOfTheTableFailsVerificationWhenPerturbed) {
  for (const auto& k : listed_kernels()) {
    SCOPED_TRACE(k.name);
    const Outcome r = run_compas(run_args(k, {"--threads", "1", "--inject-fault", "--quiet"}));
    EXPECT_EQ(r.exit_code, 1) << r.describe();
    EXPECT_NE(r.out.find("VERIFICATION FAILED"), std::string::npos) << r.describe();
  }
}

TEST_F(Cli, TheStudyPlansEveryKernelOfTheTable) {
  for (const auto& k : listed_kernels()) {
    SCOPED_TRACE(k.name);
    const Outcome r = run_compas({"study", "--kernels", k.name, "--grid", "1x1,2x1", "--out",
                                  path("s_" + k.name), "--dry-run"});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_NE(r.out.find(k.name + " "), std::string::npos) << r.describe();
    const Outcome weak = run_compas({"study", "--kernels", k.name, "--grid", "1x1,2x1", "--scaling",
                                     "weak", "--out", path("w_" + k.name), "--dry-run"});
    ASSERT_EQ(weak.exit_code, 0) << weak.describe();
    EXPECT_EQ(weak.out.find("left out " + k.name) == std::string::npos, k.weak) << weak.describe();
  }
}

}  // namespace
