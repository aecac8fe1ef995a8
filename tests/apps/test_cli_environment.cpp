// Which COMPAS_* variables the command line reads: those a job script sets for the threads of
// every process (threads, bind, wait, oversubscribe, events), and no other. An output file or a
// probe's size exported in a shell must not change what every later command does.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli.hpp"

namespace {

using namespace cli;

// COMPAS_JSON exported once made every later command write that file.
TEST_F(Cli, OutputVariablesAreNotRead) {
  const Outcome r = run_compas(
      {"topology"},
      {{"COMPAS_JSON", path("env.json")}, {"COMPAS_CSV", path("env.csv")}, {"COMPAS_QUIET", "1"}});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(files().empty()) << "a file named by a variable was written\n" << r.describe();
  EXPECT_FALSE(r.out.empty()) << "COMPAS_QUIET silenced the table\n" << r.describe();
}

// compas-run sets COMPAS_SIZE (the job's process count) for every rank: membw read it as its
// working set. A probe's own flags have no variable.
TEST_F(Cli, AProbesFlagsHaveNoVariable) {
  const Outcome r = run_compas({"membw", "--threads", "1", "--kernels", "load", "--repeats", "1",
                                "--quiet", "--json", path("m.json")},
                               {{"COMPAS_SIZE", "2"},
                                {"COMPAS_ISA", "bogus"},
                                {"COMPAS_STORES", "bogus"},
                                {"COMPAS_REPEATS", "0"},
                                {"COMPAS_NO_HUGE_PAGES", "bogus"}});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto report = nlohmann::json::parse(read_file(path("m.json")));
  EXPECT_GT(report.at("params").at("size_bytes").get<double>(), 2.0) << report.dump(1);
  const Outcome t = run_compas({"topology", "--quiet"}, {{"COMPAS_TOPOLOGY", "garbage:3"}});
  EXPECT_EQ(t.exit_code, 0) << t.describe();
  const Outcome c = run_compas({"cache", "--help"}, {{"COMPAS_CPU", "bogus"}});
  EXPECT_EQ(c.exit_code, 0) << c.describe();
}

// The job's variables are read by every command that has the flag, with the flag's checks.
TEST_F(Cli, JobVariablesAreReadWithTheFlagsChecks) {
  for (const auto& command : {std::vector<std::string>{"topology", "--quiet"},
                              {"barrier", "--quiet"},
                              {"membw", "--quiet"},
                              {"run", "laplace", "--quiet"}}) {
    const Outcome r = run_compas(command, {{"COMPAS_THREADS", "0x2"}});
    EXPECT_EQ(r.exit_code, 2) << command[0] << "\n" << r.describe();
    EXPECT_NE(r.err.find("0x2"), std::string::npos) << command[0] << "\n" << r.describe();
  }
}

}  // namespace
