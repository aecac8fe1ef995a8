// What the tests of compas study's supervision share (test_cli_study_runs.cpp,
// test_cli_study_stop.cpp): a launcher written by the test stands in for the runs.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "../common/proc.hpp"
#include "cli.hpp"

namespace cli_study {

using namespace cli;

// ---- study: supervision of its runs ------------------------------------------------------------
// A launcher written by the test stands in for the runs: one that hangs, traps SIGINT, refuses
// to start or starts compas-run. The characterization runs the study starts itself are recorded
// as done beforehand, so that only the launcher's runs run. Hanging runs are `slow-rank`, a link
// to sleep in the test's directory, so that any of them left behind is found by its path.

inline const char* const kCharacterization[] = {"topology",   "membw",           "loaded_latency",
                                                "cache",      "barrier_threads", "barrier_p2",
                                                "barrier_p4", "pingpong"};

// Records the characterization runs as done in `out`/runs.jsonl, and (`mark`) the study's marker
// listing the files as the study's, as a study that ran them leaves it.
inline void seed_characterization_done(const std::string& out, bool mark = true) {
  fs::create_directories(out);
  std::ofstream f(out + "/runs.jsonl");
  std::string manifest = "compas study 0.0.0-test\nruns.jsonl\n";
  for (const std::string id : kCharacterization) {
    f << json{{"id", id},  {"title", id},    {"kind", "characterize"},
              {"exit", 0}, {"seconds", 0.0}, {"json", "raw/" + id + ".json"}}
             .dump()
      << "\n";
    manifest += "raw/" + id + ".json\n";
  }
  // Each with its raw report, as a finished run leaves it (a report with no results).
  fs::create_directories(out + "/raw");
  for (const std::string id : kCharacterization)
    std::ofstream(out + "/raw/" + id + ".json") << R"({"command":"run","results":[]})"
                                                << "\n";
  if (mark) std::ofstream(out + "/.compas-study") << manifest;
}

// Shell lines for a launcher that stands in for a run which finishes: the report it writes to
// the path after --json (a report of no results), as every finished run leaves one.
inline const char* const kFinishedRun = R"(json=; prev=
for a in "$@"; do [ "$prev" = --json ] && json=$a; prev=$a; done
[ -n "$json" ] && echo '{"command":"run","results":[]}' > "$json"
exit 0
)";

// Writes an executable shell script into `dir` and returns its path.
inline std::string write_script(const fs::path& dir, const std::string& name,
                                const std::string& body) {
  const fs::path p = dir / name;
  std::ofstream(p) << "#!/bin/sh\n" << body;
  fs::permissions(p, fs::perms::owner_all, fs::perm_options::add);
  return p.string();
}

// `dir`/slow-rank, a link to sleep: a run's process with the test's directory in its command line.
inline std::string slow_rank(const fs::path& dir) {
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
inline std::vector<std::string> study_args(const std::string& out, const std::string& launcher,
                                           const std::string& grid) {
  return {"study", "--out",      out,      "--budget",  "0.1", "--kernels",     "laplace", "--grid",
          grid,    "--launcher", launcher, "--repeats", "1",   "--stream-size", "16MiB"};
}

// The same as a command line for compas::testing::Proc.
inline std::vector<std::string> study_command(const std::string& out, const std::string& launcher,
                                              const std::string& grid) {
  std::vector<std::string> argv = {COMPAS_EXE};
  for (auto& a : study_args(out, launcher, grid)) argv.push_back(a);
  return argv;
}

inline std::map<std::string, std::vector<json>> records_by_id(const std::string& file) {
  std::map<std::string, std::vector<json>> by_id;
  for (const auto& j : jsonl(file)) by_id[j.value("id", "")].push_back(j);
  return by_id;
}

// Waits up to 30 s for `done()`; true as soon as it holds once. (Asking again after it held could
// see a passing state: a process's command line reads empty while it execs.)
template <typename F>
bool eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace cli_study
