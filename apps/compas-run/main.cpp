// compas-run: starts the P processes of a job on this host, T threads each, with the cores split
// between them (threads::process_slice). Each process is pinned to
// its slice before exec and finds the others through the tcp bootstrap, configured by COMPAS_*
// variables. The first process to fail ends the job: the others get SIGTERM, then SIGKILL after
// a grace period, and compas-run exits with the failing rank's status. Bad input exits 2.
//
// The rendezvous port: compas-run itself binds 127.0.0.1:0 and listens, and hands the listening
// socket to rank 0 (COMPAS_RENDEZVOUS_FD) along with its port (COMPAS_RENDEZVOUS). No other
// process can take the port between choosing it and rank 0 listening, so no retry is needed; a
// retry would mean restarting every rank of a job that may already have had side effects.
#include <unistd.h>

#include <fmt/core.h>
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "common.hpp"
#include "compas/base/number.hpp"
#include "compas/base/spawn.hpp"
#include "compas/threads/placement.hpp"

namespace {

using namespace compas::run;

int parse_count(const char* flag, const std::string& text, int max, const char* what) {
  const auto v = compas::base::parse_integer(text, 1, max);
  if (!v)
    throw std::invalid_argument(
        fmt::format("{} '{}' is not {}: expected an integer 1..{}", flag, text, what, max));
  return static_cast<int>(*v);
}

double parse_seconds(const char* flag, const std::string& text) {
  const auto v = compas::base::parse_decimal(text);
  if (!v || *v < 0 || *v > 1e7)
    throw std::invalid_argument(fmt::format(
        "{} '{}' is not a time limit: expected a number of seconds, 0 for none", flag, text));
  return *v;
}

// The program as a path execve() can run: searched in PATH when it has no slash.
std::string find_program(const std::string& prog) {
  const compas::base::ProgramPath found = compas::base::find_program(prog);
  if (!found.path.empty()) return found.path;
  if (prog.find('/') != std::string::npos)
    throw std::invalid_argument(fmt::format("program '{}' {}", prog, found.problem));
  if (found.problem == "not found")
    throw std::invalid_argument(fmt::format("program '{}' not found in PATH", prog));
  throw std::invalid_argument(
      fmt::format("program '{}' not found in PATH ({})", prog, found.problem));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "compas-run: start P processes of T threads each on this host, cores split "
      "between them",
      "compas-run"};
  std::string n_text, t_text = "1", timeout_text = "0";
  Options o;
  app.add_option("-n,--processes", n_text, "number of processes P, 1..4096")
      ->required()
      ->type_name("P");
  app.add_option("-t,--threads", t_text, "threads per process T (default 1), as COMPAS_THREADS")
      ->type_name("T");
  app.add_option("--bind", o.bind,
                 "thread placement in each process, as COMPAS_BIND: compact, scatter, sockets "
                 "(or a cpu list when P is 1)")
      ->type_name("POLICY");
  app.add_flag("--tag-output", o.tag_output, "prefix each output line of rank r with \"[r] \"");
  app.add_option("--timeout", timeout_text, "stop the job after S seconds (default 0: never)")
      ->type_name("S");
  app.add_flag("--oversubscribe", o.oversubscribe,
               "declare the job oversubscribed even when it fits the cores "
               "(COMPAS_OVERSUBSCRIBED=1, waits back off), and do not print the note");
  app.set_version_flag("--version", COMPAS_RUN_VERSION);
  app.prefix_command();
  app.footer(
      "Usage: compas-run -n P [-t T] [--bind POLICY] [--tag-output] [--timeout S] "
      "[--oversubscribe] PROG ARGS...\n"
      "PROG and ARGS are passed untouched. Each process runs pinned to its slice of the cores "
      "and gets COMPAS_RANK, COMPAS_SIZE, COMPAS_LOCAL_RANK, COMPAS_LOCAL_SIZE, COMPAS_THREADS, "
      "COMPAS_CPUS, COMPAS_RENDEZVOUS, COMPAS_JOB_TOKEN, COMPAS_BIND (with --bind) and "
      "COMPAS_OVERSUBSCRIBED=1 when P x T exceeds the PUs or processes share cores. The first "
      "process to fail stops the others; the exit status is its own (128+N for signal N), 124 "
      "after --timeout.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "compas-run: %s (see compas-run --help)\n", e.what());
    return 2;
  }
  try {
    o.processes = parse_count("-n", n_text, kMaxProcesses, "a process count");
    o.threads = parse_count("-t", t_text, kMaxThreads, "a thread count");
    o.timeout_s = parse_seconds("--timeout", timeout_text);
    if (app.count("--bind") && o.bind.empty())
      throw std::invalid_argument(
          "--bind '': an empty value is not allowed: compact, scatter, sockets or a cpu list");
    if (!o.bind.empty()) {
      compas::threads::BindSpec spec;
      try {
        spec = compas::threads::BindSpec::parse(o.bind);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("--bind: ") + e.what());
      }
      if (spec.policy == compas::threads::BindPolicy::list && o.processes > 1)
        throw std::invalid_argument(fmt::format(
            "--bind '{}': a cpu list places the threads of one process; with -n {} use compact, "
            "scatter or sockets (each process gets its own slice of the cores)",
            o.bind, o.processes));
    }
    auto rest = app.remaining();
    if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());
    if (rest.empty())
      throw std::invalid_argument("no program given: usage: compas-run -n P [-t T] PROG ARGS...");
    if (rest.front().size() > 1 && rest.front()[0] == '-')
      throw std::invalid_argument(fmt::format(
          "unknown option '{}' (options go before PROG; see compas-run --help)", rest.front()));
    o.program = rest.front();
    o.args.assign(rest.begin() + 1, rest.end());
    o.path = find_program(o.program);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "compas-run: %s\n", e.what());
    return 2;
  }
  try {
    return run_job(o);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "compas-run: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compas-run: failed: %s\n", e.what());
    return 1;
  }
}
