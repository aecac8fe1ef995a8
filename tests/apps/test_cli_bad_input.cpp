// Tests of the `compas` command line, run as a user runs it (cli.hpp): bad input and output errors:
// exit code 2, a message on stderr naming the flag or value, nothing measured and no output file
// written. Sizes are tiny; no test passes or fails on a measured time or rate.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>
#include "../common/proc.hpp"
#include "cli.hpp"
#include "compas/analysis/extrap.hpp"
#include "compas/threads/domain.hpp"

namespace {

using namespace cli;

// ---- output errors ---------------------------------------------------------------------------

// An unwritable output path is reported by name. The exit code is 1 ("failed") or 2 ("bad
// input"); the test records which in its output.
TEST_F(Cli, UnwritableJsonPathIsNamed) {
  const std::string bad = "/nonexistent-dir/x.json";
  ASSERT_FALSE(fs::exists("/nonexistent-dir"));
  const Outcome r = run_compas({"topology", "--quiet", "--json", bad});
  // Checked before measuring: bad input, exit 2.
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.describe();
}

// --json and --csv naming a character device (here one with /dev/null's numbers, made in the
// test's directory) write through it: it stays the device, and no temporary is left beside it.
TEST_F(Cli, JsonAndCsvToACharacterDeviceWriteThroughIt) {
  const std::string dev = path("null");
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "cannot make a device node here (" << std::strerror(errno) << "; needs root)";
  const Outcome r = run_compas({"topology", "--quiet", "--json", dev, "--csv", dev});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  struct stat st {};
  ASSERT_EQ(::lstat(dev.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode))
      << dev << " was replaced by a file of mode " << std::oct << st.st_mode;
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  EXPECT_EQ(files(), std::set<std::string>{"null"});
}

// A FIFO gets the report through it, and stays a FIFO; one without a reader is refused at once
// (naming it), never waited on.
TEST_F(Cli, JsonToAFifoWritesThroughItAndOneWithoutAReaderIsRefused) {
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const Outcome lonely = run_compas({"topology", "--quiet", "--json", fifo});
  EXPECT_EQ(lonely.exit_code, 1) << lonely.describe();
  EXPECT_NE(lonely.err.find(fifo + "': a FIFO with no reader"), std::string::npos)
      << lonely.describe();
  // A reader, and a writer of ours that keeps the FIFO open until the report is in it.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0) << std::strerror(errno);
  const int writer = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(writer, 0) << std::strerror(errno);
  ASSERT_GT(::fcntl(reader, F_SETPIPE_SZ, 1 << 20), 0) << std::strerror(errno);
  const Outcome r = run_compas({"topology", "--quiet", "--json", fifo});
  ::close(writer);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(reader, buf, sizeof buf)) > 0;) text.append(buf, n);
  ::close(reader);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  expect_report_header(json::parse(text, nullptr, false), "topology");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << fifo << " was replaced";
  EXPECT_EQ(files(), std::set<std::string>{"fifo"});
}

// ---- bad input: exit 2, a message naming the flag or value, no output file -------------------

struct BadInput {
  std::string name;                  // test name suffix
  std::vector<std::string> args;     // the command line; --json <file> is appended if json
  std::vector<std::string> mention;  // stderr must contain one of these (case-insensitive)
  Env env{};
  bool json = true;
};

// Printed as its name only: CTest (gtest_discover_tests) names each case after the printed
// parameter, e.g. CliBadInput.ExitsTwoNamesTheProblemWritesNothing/topology_threads_zero.
void PrintTo(const BadInput& b, std::ostream* os) {
  *os << b.name;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Placeholders in BadInput args and mentions, resolved when the test runs (not when the tests
// are listed): {too_many} = this machine's PUs + 1, {absent_cpu} = a cpu number it lacks.
std::string resolve(const std::string& text) {
  auto replace = [](std::string s, const std::string& from, const std::string& to) {
    for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
      s.replace(at, from.size(), to);
    return s;
  };
  if (text.find('{') == std::string::npos) return text;
  const int pus = host_pus();
  std::string out = replace(text, "{too_many}", std::to_string(pus > 0 ? pus + 1 : 3));
  return replace(out, "{absent_cpu}", pus < 99 ? "99" : "999999");
}

class CliBadInput : public Cli, public ::testing::WithParamInterface<BadInput> {};

TEST_P(CliBadInput, ExitsTwoNamesTheProblemWritesNothing) {
  const BadInput& b = GetParam();
  std::vector<std::string> args;
  for (const auto& a : b.args) args.push_back(resolve(a));
  if (b.json) {
    args.push_back("--json");
    args.push_back(path("out.json"));
  }
  const Outcome r = run_compas(args, b.env);
  std::string command = "compas";
  for (const auto& a : args) command += " '" + a + "'";
  SCOPED_TRACE(command);
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_FALSE(r.err.empty()) << "no message on stderr\n" << r.describe();
  const std::string err = lower(r.err);
  bool named = false;
  std::string wanted;
  for (const auto& m : b.mention) {
    named = named || err.find(lower(resolve(m))) != std::string::npos;
    wanted += (wanted.empty() ? "'" : " or '") + resolve(m) + "'";
  }
  EXPECT_TRUE(named) << "stderr should mention " << wanted << "\n" << r.describe();
  EXPECT_TRUE(files().empty()) << "an output file was created\n" << r.describe();
  // Input is checked before anything is measured or printed.
  EXPECT_EQ(r.out, "") << "something was printed\n" << r.describe();
}

std::vector<BadInput> bad_measure_inputs() {
  return {
      {"topology_threads_zero", {"topology", "--threads", "0"}, {"--threads"}},
      {"topology_threads_negative", {"topology", "--threads", "-1"}, {"--threads"}},
      {"topology_threads_text", {"topology", "--threads", "abc"}, {"--threads"}},
      {"topology_threads_huge", {"topology", "--threads", "99999"}, {"--threads"}},
      {"topology_threads_above_pus", {"topology", "--threads", "{too_many}"}, {"oversubscri"}},
      {"topology_bind_bogus", {"topology", "--bind", "bogus"}, {"bogus"}},
      {"topology_bind_absent_cpu", {"topology", "--bind", "0,{absent_cpu}"}, {"{absent_cpu}"}},
      {"topology_bind_empty", {"topology", "--bind", ""}, {"--bind", "bind"}},
      {"topology_synthetic_garbage", {"topology", "--topology", "garbage:3"}, {"garbage:3"}},
      {"topology_unknown_flag", {"topology", "--frobnicate"}, {"--frobnicate"}},
      {"topology_threads_env_text",
       {"topology"},
       {"COMPAS_THREADS", "abc"},
       {{"COMPAS_THREADS", "abc"}}},
      // The environment's values take the flag's syntax: plain decimal, no blanks.
      {"topology_threads_env_hexadecimal",
       {"topology"},
       {"COMPAS_THREADS", "0x10"},
       {{"COMPAS_THREADS", "0x10"}}},
      {"topology_threads_env_leading_blank",
       {"topology"},
       {"COMPAS_THREADS", "' 2'"},
       {{"COMPAS_THREADS", " 2"}}},
      {"topology_threads_env_trailing_blank",
       {"topology"},
       {"COMPAS_THREADS", "'2 '", "--threads"},
       {{"COMPAS_THREADS", "2 "}}},
      {"barrier_threads_zero", {"barrier", "--threads", "0"}, {"--threads"}},
      {"barrier_threads_text", {"barrier", "--threads", "x"}, {"--threads"}},
      {"barrier_threads_backwards", {"barrier", "--threads", "3-1"}, {"3-1"}},
      {"barrier_wait_unknown", {"barrier", "--wait", "nope"}, {"nope"}},
      {"barrier_algorithms_unknown", {"barrier", "--algorithms", "nope"}, {"nope"}},
      {"barrier_omp_unknown", {"barrier", "--omp", "nope"}, {"nope"}},
      {"barrier_repeats_zero", {"barrier", "--repeats", "0"}, {"--repeats"}},
      {"barrier_target_ms_negative", {"barrier", "--target-ms", "-1"}, {"--target-ms"}},
      {"barrier_unknown_flag", {"barrier", "--frobnicate"}, {"--frobnicate"}},
      {"barrier_threads_above_pus", {"barrier", "--threads", "{too_many}"}, {"oversubscri"}},
      {"barrier_bind_bogus", {"barrier", "--bind", "bogus"}, {"bogus"}},
      {"barrier_wait_env_unknown", {"barrier"}, {"COMPAS_WAIT", "nope"}, {{"COMPAS_WAIT", "nope"}}},
      {"pingpong_single_process", {"pingpong"}, {"at least 2 processes"}},
      {"pingpong_ops_bogus", {"pingpong", "--ops", "put,bogus"}, {"'bogus'"}},
      {"pingpong_sizes_text", {"pingpong", "--sizes", "8,lots"}, {"'lots'"}},
      {"pingpong_sizes_above_max", {"pingpong", "--sizes", "2MiB", "--max-size", "1MiB"}, {"2MiB"}},
      {"pingpong_repeats_zero", {"pingpong", "--repeats", "0"}, {"--repeats"}},
      {"membw_size_zero", {"membw", "--size", "0"}, {"--size '0'"}},
      {"membw_size_text", {"membw", "--size", "lots"}, {"'lots'"}},
      {"membw_kernels_bogus", {"membw", "--kernels", "bogus"}, {"'bogus'"}},
      {"membw_kernels_one_bogus", {"membw", "--kernels", "copy,bogus"}, {"'bogus'"}},
      {"membw_events_unknown", {"membw", "--events", "NOT_AN_EVENT"}, {"NOT_AN_EVENT"}},
      {"membw_events_unknown_in_list",
       {"membw", "--events", "perf::TASK-CLOCK,NOT_AN_EVENT"},
       {"'NOT_AN_EVENT'"}},
      {"membw_events_unknown_group", {"membw", "--events", "ipc,bogusgroup"}, {"'bogusgroup'"}},
      {"membw_events_env_unknown",
       {"membw"},
       {"NOT_AN_EVENT"},
       {{"COMPAS_EVENTS", "NOT_AN_EVENT"}}},
      {"membw_stores_bogus", {"membw", "--stores", "bogus"}, {"'bogus'"}},
      // An empty word after a flag whose own check would run first (a range) still says empty.
      {"membw_workgroup_no_such_domain", {"membw", "--workgroup", "S64:1MiB"}, {"'S64'", "S0"}},
      {"membw_workgroup_bad_domain", {"membw", "--workgroup", "Q1:1MiB"}, {"'Q1'", "S<i>"}},
      {"membw_workgroup_threads_zero", {"membw", "--workgroup", "S0:1MiB:0"}, {"'0'"}},
      {"membw_numa_matrix_thread_list",
       {"membw", "--numa-matrix", "--threads", "1,2"},
       {"--threads '1,2'", "one thread count"}},
      {"membw_numa_matrix_with_bind",
       {"membw", "--numa-matrix", "--bind", "scatter"},
       {"--numa-matrix", "--bind"}},
      {"membw_workgroup_with_size",
       {"membw", "--workgroup", "S0:1MiB", "--size", "1MiB"},
       {"--workgroup 'S0:1MiB'", "--size"}},
      {"membw_isa_bogus", {"membw", "--isa", "bogus"}, {"'bogus'"}},
      {"membw_repeats_zero", {"membw", "--repeats", "0"}, {"--repeats"}},
      {"membw_threads_above_pus",
       {"membw", "--threads", "{too_many}", "--size", "1MiB"},
       {"oversubscri"}},
      {"membw_json_unwritable",
       {"membw", "--json", "/nonexistent-dir/m.json"},
       {"/nonexistent-dir/m.json"},
       {},
       false},
      {"cache_min_zero", {"cache", "--min", "0"}, {"'0'"}},
      {"cache_min_above_max", {"cache", "--min", "1GiB", "--max", "4KiB"}, {"'1GiB'"}},
      {"cache_max_text", {"cache", "--max", "banana"}, {"'banana'"}},
      {"cache_cpu_not_ours", {"cache", "--cpu", "4096", "--max", "8KiB"}, {"--cpu 4096"}},
      {"cache_events_unknown", {"cache", "--events", "NOT_AN_EVENT"}, {"NOT_AN_EVENT"}},
  };
}

std::vector<BadInput> bad_run_study_inputs() {
  return {
      {"study_repeats_empty_word_says_empty",
       {"study", "--repeats", ""},
       {"--repeats: an empty value is not allowed (expected int:int in [1 - 100])"}},
      {"study_launcher_without_p", {"study", "--launcher", "mpirun -n 4"}, {"{P}"}, {}, false},
      {"study_grid_bad", {"study", "--grid", "2by2"}, {"2by2"}, {}, false},
      {"study_grid_zero", {"study", "--grid", "0x1"}, {"0x1"}, {}, false},
      {"study_grid_blank", {"study", "--grid", " 1x1"}, {"' 1x1'"}, {}, false},
      {"study_grid_plus", {"study", "--grid", "+1x1"}, {"+1x1"}, {}, false},
      {"study_run_timeout_hexadecimal_float",
       {"study", "--run-timeout", "0x1p3"},
       {"--run-timeout"},
       {},
       false},

      {"study_kernels_bogus", {"study", "--kernels", "bogus"}, {"'bogus'"}, {}, false},
      {"study_budget_zero", {"study", "--budget", "0"}, {"--budget"}, {}, false},
      {"study_run_timeout_zero", {"study", "--run-timeout", "0"}, {"--run-timeout"}, {}, false},
      {"study_repeats_zero", {"study", "--repeats", "0"}, {"--repeats"}, {}, false},
      {"study_scaling_bogus",
       {"study", "--scaling", "medium"},
       {"'medium'", "strong", "weak"},
       {},
       false},
      {"study_scaling_empty", {"study", "--scaling", ""}, {"--scaling"}, {}, false},
      {"study_run_timeout_empty", {"study", "--run-timeout", ""}, {"--run-timeout"}, {}, false},
      {"run_laplace_n_empty_word_says_empty",
       {"run", "laplace", "--n", ""},
       {"--n: an empty value is not allowed (expected"}},
      {"run_no_kernel", {"run"}, {"laplace", "subcommand"}, {}, false},
      {"run_unknown_kernel", {"run", "bogosort"}, {"bogosort"}, {}, false},
      {"run_laplace_n_zero", {"run", "laplace", "--n", "0"}, {"--n"}},
      {"run_laplace_n_text", {"run", "laplace", "--n", "big"}, {"--n"}},
      {"run_laplace_iters_zero", {"run", "laplace", "--iters", "0"}, {"--iters"}},
      {"run_laplace_tol_negative", {"run", "laplace", "--tol", "-1"}, {"--tol"}},
      {"run_laplace_threads_zero", {"run", "laplace", "--threads", "0"}, {"--threads"}},
      {"run_laplace_threads_above_pus",
       {"run", "laplace", "--threads", "{too_many}"},
       {"oversubscri"}},
      {"run_laplace_wait_bogus", {"run", "laplace", "--wait", "bogus"}, {"bogus"}},
      {"run_laplace_stores_bogus", {"run", "laplace", "--stores", "bogus"}, {"bogus"}},
      {"run_laplace_schedule_bogus", {"run", "laplace", "--schedule", "guided"}, {"guided"}},
      {"run_laplace_events_unknown",
       {"run", "laplace", "--events", "NOT_AN_EVENT"},
       {"NOT_AN_EVENT"}},
      {"run_laplace_json_unwritable",
       {"run", "laplace", "--json", "/nonexistent-dir/l.json"},
       {"/nonexistent-dir/l.json"},
       {},
       false},
      {"run_cg_class_unknown", {"run", "cg", "--class", "Q"}, {"'Q'"}},
      {"run_cg_class_two_letters", {"run", "cg", "--class", "SW"}, {"'SW'"}},
      {"run_cg_decomposition_bogus", {"run", "cg", "--decomposition", "cols"}, {"cols"}},
      {"run_cg_decomposition_empty", {"run", "cg", "--decomposition", ""}, {"empty"}},
      {"run_cg_sum_order_bogus", {"run", "cg", "--sum-order", "kahan"}, {"kahan"}},
      {"run_cg_sum_order_empty", {"run", "cg", "--sum-order", ""}, {"empty"}},
      {"run_cg_grid_one_process",
       {"run", "cg", "--class", "W", "--threads", "1", "--decomposition", "grid"},
       {"C x C processes", "not 1 process"}},
      {"run_cg_threads_zero", {"run", "cg", "--threads", "0"}, {"--threads"}},
      {"run_sort_keys_text", {"run", "sort", "--keys", "lots"}, {"'lots'"}},
      {"run_sort_keys_zero", {"run", "sort", "--keys", "0"}, {"'0'"}},
      {"run_sort_keys_bad_suffix", {"run", "sort", "--keys", "4X"}, {"'4X'"}},
      {"run_sort_keys_fraction", {"run", "sort", "--keys", "1.5M"}, {"'1.5M'"}},
      {"run_sort_keys_negative", {"run", "sort", "--keys", "-4M"}, {"-4M"}},
      {"run_sort_keys_beyond_memory", {"run", "sort", "--keys", "1024G"}, {"--keys"}},
      {"run_sort_dist_bogus", {"run", "sort", "--dist", "gauss"}, {"'gauss'"}},
      {"run_sort_iters_zero", {"run", "sort", "--iters", "0"}, {"--iters"}},
      {"run_sort_digit_bits_bogus", {"run", "sort", "--digit-bits", "9"}, {"--digit-bits"}},
      {"run_sort_stores_bogus", {"run", "sort", "--stores", "bogus"}, {"bogus"}},
      {"run_gemm_n_zero", {"run", "gemm", "--n", "0"}, {"--n"}},
      {"run_gemm_n_negative", {"run", "gemm", "--n", "-5"}, {"--n"}},
      {"run_gemm_n_text", {"run", "gemm", "--n", "big"}, {"--n"}},
      {"run_gemm_n_too_large", {"run", "gemm", "--n", "99999999"}, {"--n"}},
      {"run_gemm_n_beyond_memory", {"run", "gemm", "--n", "1000000"}, {"--n 1000000"}},
      {"run_gemm_iters_zero", {"run", "gemm", "--iters", "0"}, {"--iters"}},
      {"run_gemm_threads_zero", {"run", "gemm", "--threads", "0"}, {"--threads"}},
      {"run_gemm_isa_env_bogus",
       {"run", "gemm", "--n", "8"},
       {"COMPAS_GEMM_ISA", "bogus"},
       {{"COMPAS_GEMM_ISA", "bogus"}}},
      {"run_cg_report_binding_env_bogus",
       {"run", "cg", "--class", "S"},
       {"COMPAS_REPORT_BINDING='yes'"},
       {{"COMPAS_REPORT_BINDING", "yes"}}},
      {"run_cg_report_binding_env_empty",
       {"run", "cg", "--class", "S"},
       {"COMPAS_REPORT_BINDING='' is not allowed: an empty value"},
       {{"COMPAS_REPORT_BINDING", ""}}},
      {"unknown_subcommand", {"frobnicate"}, {"frobnicate"}},
      {"no_subcommand", {}, {"subcommand", "command"}, {}, false},
  };
}

std::vector<BadInput> bad_inputs() {
  std::vector<BadInput> all = bad_measure_inputs();
  for (auto& b : bad_run_study_inputs()) all.push_back(std::move(b));
  return all;
}

INSTANTIATE_TEST_SUITE_P(, CliBadInput, ::testing::ValuesIn(bad_inputs()));

// Every value-taking flag of every command against the hostile values that are wrong for it:
// e empty, n negative, z zero, h huge (past any integer type), t text; a numeric flag also
// x hexadecimal and b a leading blank (decimal only, as the environment's parser takes it). Each
// must be refused with exit 2 and a message naming the flag or the value, before anything is
// written or printed.
std::vector<BadInput> hostile_values() {
  struct Flag {
    std::vector<std::string> command;
    std::string flag;
    std::string kinds;
  };
  const std::vector<Flag> flags = {
      {{"topology"}, "--threads", "enzhtxb"},
      {{"topology"}, "--bind", "et"},
      {{"topology"}, "--topology", "t"},
      {{"barrier"}, "--threads", "enzhtxb"},
      {{"barrier"}, "--bind", "et"},
      {{"barrier"}, "--wait", "enzt"},
      {{"barrier"}, "--algorithms", "ent"},
      {{"barrier"}, "--omp", "nt"},
      {{"barrier"}, "--repeats", "enzhtxb"},
      {{"barrier"}, "--target-ms", "enzhtxb"},
      {{"membw"}, "--threads", "enzhtxb"},
      {{"membw"}, "--size", "enzht"},
      {{"membw"}, "--kernels", "ent"},
      {{"membw"}, "--bind", "et"},
      {{"membw"}, "--stores", "ent"},
      {{"membw"}, "--isa", "ent"},
      {{"membw"}, "--repeats", "enzhtxb"},
      {{"membw"}, "--min-repeat-ms", "enhtxb"},
      {{"membw"}, "--events", "nt"},
      {{"membw"}, "--workgroup", "enzht"},
      {{"cache"}, "--min", "enzht"},
      {{"cache"}, "--max", "enzt"},
      {{"cache"}, "--steps-per-octave", "enzhtxb"},
      {{"cache"}, "--cpu", "enhtxb"},
      {{"cache"}, "--repeats", "enzhtxb"},
      {{"cache"}, "--repeat-ms", "enzhtxb"},
      {{"cache"}, "--events", "nt"},
      {{"run", "laplace"}, "--n", "enzhtxb"},
      {{"run", "laplace"}, "--iters", "enzhtxb"},
      {{"run", "laplace"}, "--tol", "enhtxb"},
      {{"run", "laplace"}, "--check-every", "enzhtxb"},
      {{"run", "laplace"}, "--stores", "ent"},
      {{"run", "laplace"}, "--schedule", "ent"},
      {{"run", "laplace"}, "--threads", "enzhtxb"},
      {{"run", "laplace"}, "--bind", "et"},
      {{"run", "laplace"}, "--wait", "ent"},
      {{"run", "laplace"}, "--events", "nt"},
      {{"run", "cg"}, "--class", "enzht"},
      {{"run", "cg"}, "--threads", "enzhtxb"},
      {{"run", "cg"}, "--wait", "ent"},
      {{"run", "gemm"}, "--n", "enzhtxb"},
      {{"run", "gemm"}, "--iters", "enzhtxb"},
      {{"run", "gemm"}, "--threads", "enzhtxb"},
      {{"run", "gemm"}, "--bind", "et"},
      {{"run", "gemm"}, "--wait", "ent"},
      {{"run", "gemm"}, "--events", "nt"},
      {{"run", "sort"}, "--keys", "enzhtxb"},
      {{"run", "sort"}, "--dist", "enzt"},
      {{"run", "sort"}, "--iters", "enzhtxb"},
      {{"run", "sort"}, "--digit-bits", "enzhtxb"},
      {{"run", "sort"}, "--stores", "ent"},
      {{"run", "sort"}, "--threads", "enzhtxb"},
      {{"study"}, "--budget", "enzhtxb"},
      {{"study"}, "--grid", "enzt"},
      {{"study"}, "--kernels", "enzt"},
      {{"study"}, "--run-timeout", "enzhtxb"},
      {{"study"}, "--repeats", "enzhtxb"},
  };
  std::vector<BadInput> out;
  for (const auto& f : flags)
    for (char kind : f.kinds) {
      std::string value, kind_name;
      switch (kind) {
        case 'e':
          value = "", kind_name = "empty";
          break;
        case 'n':
          value = "-1", kind_name = "negative";
          break;
        case 'z':
          value = "0", kind_name = "zero";
          break;
        case 'h':
          value = "99999999999999999999", kind_name = "huge";
          break;
        case 'x':
          value = "0x10", kind_name = "hexadecimal";
          break;
        case 'b':
          value = " 2", kind_name = "blank";
          break;
        default:
          value = "x9y", kind_name = "text";
          break;
      }
      BadInput b;
      for (const auto& w : f.command) b.name += w + "_";
      b.name += f.flag.substr(2) + "_" + kind_name;
      for (auto& c : b.name)
        if (c == '-') c = '_';
      b.args = f.command;
      b.args.push_back(f.flag + "=" + value);
      b.mention = {f.flag, "'" + value + "'"};
      if (value.size() >= 3) b.mention.push_back(value);
      b.json = f.command[0] != "study";
      if (kind == 'e') {
        // The same empty value as a word of its own (`--size ""`: a script's unset variable).
        BadInput word = b;
        word.name += "_word";
        word.args.back() = f.flag;
        word.args.push_back("");
        out.push_back(std::move(word));
      }
      out.push_back(std::move(b));
    }
  return out;
}

INSTANTIATE_TEST_SUITE_P(HostileValue, CliBadInput, ::testing::ValuesIn(hostile_values()));

}  // namespace
