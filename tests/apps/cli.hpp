// What the tests of the `compas` command line share: running `compas` (alone or as every rank of
// a compas-run job) as a user would, with stdout and stderr captured; a fresh directory per test;
// the checks of a report's header and of a CSV file.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../common/proc.hpp"

namespace cli {

namespace fs = std::filesystem;
using nlohmann::json;

#ifndef COMPAS_EXE
#error "COMPAS_EXE must name the compas executable"
#endif
#ifndef COMPAS_RUN_EXE
#error "COMPAS_RUN_EXE must name the compas-run executable"
#endif

struct Outcome {
  int exit_code = -1;  // -1 when the process did not exit normally
  int signal = 0;
  std::string out, err;
  std::string describe() const {
    std::ostringstream s;
    s << "exit " << exit_code;
    if (signal) s << " (signal " << signal << ")";
    s << "\n--- stdout:\n" << out << "\n--- stderr:\n" << err;
    return s.str();
  }
};

using Env = compas::testing::Env;

// Runs `exe args...` to its end (an hour at most: then it is killed and the test fails), as a
// compas_test_proc Proc: its own process group, the environment ours without the variables that
// select or configure a bootstrap (COMPAS_* ..., which the flags read), plus `env`.
inline Outcome run_exe(const std::string& exe, const std::vector<std::string>& args,
                       const Env& env) {
  std::vector<std::string> argv = {exe};
  argv.insert(argv.end(), args.begin(), args.end());
  compas::testing::Proc p(argv, env);
  Outcome r;
  if (p.pid() <= 0) return r;
  if (!p.wait(3600)) ADD_FAILURE() << exe << " did not end within an hour";
  r.exit_code = p.exit_code;
  r.signal = p.term_signal;
  r.out = std::move(p.out);
  r.err = std::move(p.err);
  return r;
}

inline Outcome run_compas(const std::vector<std::string>& args, const Env& env = {}) {
  return run_exe(COMPAS_EXE, args, env);
}

// `compas args...` as every rank of a compas-run job of `nprocs` processes.
inline Outcome run_compas_job(int nprocs, const std::vector<std::string>& args,
                              const Env& env = {}) {
  std::vector<std::string> all = {"-n", std::to_string(nprocs), "-t", "1", COMPAS_EXE};
  all.insert(all.end(), args.begin(), args.end());
  return run_exe(COMPAS_RUN_EXE, all, env);
}

// The records of a JSON Lines file.
inline std::vector<json> jsonl(const std::string& file) {
  std::vector<json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(line);
  return out;
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

// A fresh directory per test, removed afterwards.
class Cli : public compas::testing::TempDirTest {
 protected:
  Cli() : TempDirTest("compas-cli-test") {}
  std::set<std::string> files() const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.insert(e.path().filename().string());
    return out;
  }
  json load_json(const std::string& name) const {
    const std::string text = read_file(dir_ / name);
    json j = json::parse(text, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << name << " is not valid JSON:\n" << text;
    return j;
  }
};

// The host's PU count, from `compas topology --json`.
inline int host_pus() {
  static const int pus = [] {
    const fs::path f = fs::temp_directory_path() / ("compas-cli-pus." + std::to_string(getpid()));
    const Outcome r = run_compas({"topology", "--quiet", "--json", f.string()});
    int n = 0;
    if (r.exit_code == 0) {
      json j = json::parse(read_file(f), nullptr, false);
      if (!j.is_discarded()) n = j["machine"].value("pus", 0);
    }
    std::error_code ec;
    fs::remove(f, ec);
    return n;
  }();
  return pus;
}

// The "run" object: what the result was measured with and when.
inline void expect_run_metadata(const json& j, const std::string& command) {
  ASSERT_TRUE(j.contains("run") && j["run"].is_object()) << "no run metadata: " << j.dump();
  const json& r = j["run"];
  const std::string date = r.value("date", "");
  EXPECT_EQ(date.size(), 20u) << date;  // 2026-11-28T06:47:59Z
  EXPECT_EQ(date.substr(10, 1), "T") << date;
  EXPECT_EQ(date.back(), 'Z') << date;
  ASSERT_TRUE(r.contains("command_line") && r["command_line"].is_array()) << r.dump();
  ASSERT_GE(r["command_line"].size(), 2u) << r.dump();
  const std::string first = command.substr(0, command.find(' '));  // "run laplace" -> run
  EXPECT_EQ(r["command_line"][1], first) << r.dump();
  EXPECT_EQ(r.value("compas_version", ""), j.value("version", "?"));
  EXPECT_FALSE(r.value("git_commit", "").empty()) << r.dump();
  ASSERT_TRUE(r.contains("build") && r["build"].is_object()) << r.dump();
  for (const char* k : {"type", "compiler", "flags"})
    EXPECT_TRUE(r["build"].contains(k) && r["build"][k].is_string()) << k << " " << r.dump();
  ASSERT_TRUE(r.contains("libraries")) << r.dump();
  for (const char* lib : {"ucx", "hwloc", "papi", "mpi"})
    EXPECT_FALSE(r["libraries"].value(lib, "").empty()) << lib << " " << r.dump();
  EXPECT_GT(r.value("memory_bytes", 0ull), 0ull) << r.dump();
  ASSERT_TRUE(r.contains("cpu_frequency")) << r.dump();
  EXPECT_FALSE(r["cpu_frequency"].value("governor", "").empty()) << r.dump();
  ASSERT_TRUE(r.contains("virtual_machine") && r["virtual_machine"].is_boolean()) << r.dump();
  EXPECT_FALSE(r.value("hypervisor", "").empty()) << r.dump();
  // The machine's load besides this process over the command (/proc/stat is readable here).
  ASSERT_TRUE(r.contains("machine_load") && r["machine_load"].is_object()) << r.dump();
  const json& load = r["machine_load"];
  for (const char* share : {"other_processes_cpu_share", "steal_share"}) {
    EXPECT_GE(load.value(share, -1.0), 0.0) << share << " " << r.dump();
    EXPECT_LE(load.value(share, 2.0), 1.0) << share << " " << r.dump();
  }
  EXPECT_GT(load.value("seconds", 0.0), 0.0) << r.dump();
}

inline void expect_report_header(const json& j, const std::string& command) {
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.value("command", ""), command);
  ASSERT_TRUE(j.contains("version"));
  EXPECT_TRUE(j["version"].is_string());
  ASSERT_TRUE(j.contains("machine"));
  const json& m = j["machine"];
  for (const char* k : {"sockets", "numa_nodes", "cores", "pus"}) {
    ASSERT_TRUE(m.contains(k)) << k;
    EXPECT_TRUE(m[k].is_number_integer()) << k;
    EXPECT_GE(m[k].get<int>(), 1) << k;
  }
  ASSERT_TRUE(m.contains("caches"));
  ASSERT_TRUE(m["caches"].is_array());
  for (const auto& c : m["caches"]) {
    EXPECT_TRUE(c.contains("level") && c["level"].is_number_integer()) << c.dump();
    EXPECT_TRUE(c.contains("size_bytes") && c["size_bytes"].is_number_integer()) << c.dump();
    EXPECT_TRUE(c.contains("shared_by") && c["shared_by"].is_number_integer()) << c.dump();
  }
  EXPECT_TRUE(m.contains("cpu_model") && m["cpu_model"].is_string());
  EXPECT_TRUE(m.contains("compiler") && m["compiler"].is_string());
  EXPECT_TRUE(j.contains("params"));
  ASSERT_TRUE(j.contains("results"));
  ASSERT_TRUE(j["results"].is_array());
  expect_run_metadata(j, command);
}

// CSV: a header naming `columns` among others, and one row per record.
inline void expect_csv(const std::string& text, std::size_t records,
                       const std::vector<std::string>& columns) {
  const auto lines = lines_of(text);
  ASSERT_FALSE(lines.empty()) << "empty CSV";
  const auto header = split(lines[0], ',');
  for (const auto& c : columns)
    EXPECT_NE(std::find(header.begin(), header.end(), c), header.end())
        << "CSV header lacks '" << c << "': " << lines[0];
  EXPECT_EQ(lines.size() - 1, records) << text;
  for (std::size_t i = 1; i < lines.size(); ++i)
    EXPECT_EQ(split(lines[i], ',').size(), header.size()) << "row " << i << ": " << lines[i];
}

}  // namespace cli
