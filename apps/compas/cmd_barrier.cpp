// compas barrier: thread barrier latency vs thread count for every algorithm x wait policy,
// beside libgomp's `#pragma omp barrier` measured in the same run with the same pinning
// (COMPaS Table 3). libgomp reads OMP_WAIT_POLICY once at start-up, so each OpenMP policy is
// measured in a child process of this program started with that policy.
//
// Under a launcher (compas-run -n P, mpirun, srun) with P > 1 it measures the process barrier
// instead: comm's process barrier across the P processes, by the algorithm the job chose and by the
// other where it can run (dissemination; two-level over each host's shared memory), and, when the
// job was launched by mpirun and MPI is built in, MPI_Barrier, all interleaved in the same run
// (COMPaS Tables 4-5).
#include <fcntl.h>
#include <fmt/core.h>
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

#ifdef COMPAS_WITH_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#include "commands.hpp"
#include "common.hpp"
#include "compas/comm/bootstrap.hpp"
#include "compas/comm/ucx.hpp"
#include "compas/probes/barrier_latency.hpp"
#include "compas/threads/barrier.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/team.hpp"
#include "job_load.hpp"
#include "plot.hpp"

namespace compas::app {

namespace {

using Timing = probes::BarrierTiming;

// The OpenMP side, run inside the child process: pins each OpenMP thread to cpus[tid] and
// times `#pragma omp barrier` exactly as probes::time_team_barrier times compas barriers.
Timing time_omp(const std::vector<int>& cpus, int repeats, double target_ms) {
  const int n = static_cast<int>(cpus.size());
  const auto topo = threads::Topology::host();
  Timing timing;
  timing.ns.resize(static_cast<std::size_t>(repeats));
  long iters = 0;
  std::string bind_error;
  omp_set_dynamic(0);
#pragma omp parallel num_threads(n)
  {
    const int tid = omp_get_thread_num();
    const auto got = topo.bind_current_thread(cpus[static_cast<std::size_t>(tid)]);
    if (got.size() != 1 || got[0] != cpus[static_cast<std::size_t>(tid)]) {
#pragma omp critical
      bind_error = fmt::format("OpenMP thread {} could not be bound to cpu {}", tid,
                               cpus[static_cast<std::size_t>(tid)]);
    }
    probes::time_barrier(
        tid == 0, timing, repeats, target_ms,
        [] {
#pragma omp barrier
        },
        [&iters](long mine) {
#pragma omp single
          iters = mine;
          return iters;
        });
  }
  if (!bind_error.empty()) throw std::runtime_error(bind_error);
  return timing;
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot find this program's path in /proc/self/exe");
  return std::string(buf, static_cast<std::size_t>(n));
}

// Runs the hidden `_omp-barrier` command with OMP_WAIT_POLICY=policy ("" = libgomp's default).
Timing time_omp_child(const std::vector<int>& cpus, const std::string& policy, int repeats,
                      double target_ms) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  const std::string exe = self_exe();
  std::vector<std::string> args = {
      exe,         "_omp-barrier",          "--cpus",      threads::format_cpu_list(cpus),
      "--repeats", std::to_string(repeats), "--target-ms", std::to_string(target_ms)};
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    for (const char* v : {"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY", "GOMP_SPINCOUNT",
                          "OMP_NUM_THREADS", "OMP_DYNAMIC"})
      unsetenv(v);
    if (policy.empty())
      unsetenv("OMP_WAIT_POLICY");
    else
      setenv("OMP_WAIT_POLICY", policy.c_str(), 1);
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("the OpenMP barrier measurement (OMP_WAIT_POLICY=" +
                             (policy.empty() ? std::string("default") : policy) + ") failed");
  const auto j = report::json::parse(out);
  Timing t;
  t.ns = j.at("ns").get<std::vector<double>>();
  t.iterations = j.at("iterations").get<long>();
  return t;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

struct BarrierArgs {
  std::string threads;
  std::string bind = "compact";
  std::string algorithms = "central,dissemination,tree";
  std::string waits = "spin,yield,block,auto";
  std::string omp = "active,passive";
  int repeats = 7;
  double target_ms = 20;
  bool oversubscribe = false;
  OutputFlags out;
  std::string plot;
};

int run_process_barrier(const BarrierArgs& a, comm::Bootstrap& boot) {
  const bool leader = boot.rank() == 0;
  if (leader) {
    check_outputs(a.out);
    check_plot_dir(a.plot);
  }
  comm::Comm c(boot);
  const int p = c.size();
  const bool mpi = boot.kind() == "mpi";
  const auto topo = threads::Topology::host();
  const bool backoff =
      c.options().wait == comm::CommWait::backoff ||
      (c.options().wait == comm::CommWait::automatic && c.options().oversubscribed);
  const std::string transport = c.transport((c.rank() + 1) % p);
  report::Report report("barrier", report::machine_json(topo),
                        {{"processes", p},
                         {"hosts", c.hosts().size()},
                         {"bootstrap", boot.kind()},
                         {"transport", transport},
                         {"repeats", a.repeats},
                         {"target_ms", a.target_ms},
                         {"yields_hand_over", threads::yields_hand_over()}});
  auto record = [&](const std::string& algo, const std::string& policy, const Timing& tm) {
    const auto s = base::spread(tm.ns);
    report.add({{"scope", "process"},
                {"algorithm", algo},
                {"chosen", algo == c.barrier_algorithm()},  // what comm's barrier() runs
                {"policy", policy},
                {"processes", p},
                {"threads", 1},
                {"oversubscribed", c.options().oversubscribed},
                {"ns_per_barrier", s.median},
                {"min_ns_per_barrier", s.min},
                {"max_ns_per_barrier", s.max},
                {"iterations", tm.iterations},
                {"repeats", tm.ns.size()}});
  };
  // Every process barrier algorithm the job can run (the chosen one first), and MPI_Barrier.
  const std::string policy = backoff ? "backoff" : "spin";
  std::vector<std::string> names = {c.barrier_algorithm()};
  std::vector<std::function<void()>> variants = {[&] { c.barrier(); }};
  const bool one_per_host = static_cast<std::size_t>(p) == c.hosts().size();
  if (c.barrier_algorithm() == "dissemination" && c.host_barrier_possible() && !one_per_host) {
    names.push_back("host");
    variants.push_back([&] { c.barrier(comm::ProcessBarrier::host); });
  } else if (c.barrier_algorithm() == "host") {
    names.push_back("dissemination");
    variants.push_back([&] { c.barrier(comm::ProcessBarrier::dissemination); });
  }
#ifdef COMPAS_WITH_MPI
  if (mpi) {
    names.push_back("mpi");
    variants.push_back([] { MPI_Barrier(MPI_COMM_WORLD); });
  }
#endif
  const auto timings = probes::time_process_barriers(boot, variants, a.repeats, a.target_ms);
  for (std::size_t v = 0; v < variants.size(); ++v)
    record(names[v], names[v] == "mpi" ? "MPI_Barrier" : policy, timings[v]);
  count_job_cpu(boot);
  if (!leader) return 0;
  write_outputs(report, a.out);
  plot_report(report, a.plot);
  if (a.out.quiet) return 0;
  fmt::print("process barrier, {} processes on {} host(s), {} bootstrap, transport {}\n", p,
             c.hosts().size(), boot.kind(), transport);
  double compas_ns = 0, mpi_ns = 0;
  for (const auto& r : report.results()) {
    const double ns = r["ns_per_barrier"].get<double>();
    fmt::print("  {:<26} {:>10.0f} ns (min {:.0f}, max {:.0f}, {} x {} barriers)\n",
               r["algorithm"].get<std::string>() + " / " + r["policy"].get<std::string>(), ns,
               r["min_ns_per_barrier"].get<double>(), r["max_ns_per_barrier"].get<double>(),
               r["repeats"].get<std::size_t>(), r["iterations"].get<long>());
    if (r["algorithm"] == "mpi")
      mpi_ns = ns;
    else if (r["algorithm"] == c.barrier_algorithm())
      compas_ns = ns;
  }
  if (mpi_ns > 0)
    fmt::print("  compas ({}) / MPI_Barrier = {:.2f}\n", c.barrier_algorithm(), compas_ns / mpi_ns);
  if (!mpi)
    fmt::print("  (MPI_Barrier is measured beside it when the job is launched by mpirun{})\n",
               comm::Bootstrap::mpi_supported() ? "" : " and compas is built with MPI");
  // COMPaS Tables 4 and 5 (1998: Pentium Pro nodes, NICAM on Myrinet, MPICH on 100Base-T).
  static const std::map<int, std::pair<double, double>> paper = {
      {2, {23.79, 493}}, {4, {31.45, 1066}}, {8, {38.67, 1645}}};
  if (auto it = paper.find(p); it != paper.end())
    fmt::print(
        "  COMPaS 1998 at {} nodes: NICAM {:.2f} us, MPICH/100Base-T MPI_Barrier {:.0f} us\n", p,
        it->second.first, it->second.second);
  return 0;
}

int run_barrier(const BarrierArgs& a) {
  auto boot = comm::Bootstrap::from_environment();
  if (boot->size() > 1) return run_process_barrier(a, *boot);
  check_outputs(a.out);
  check_plot_dir(a.plot);
  const auto topo = threads::Topology::host();
  const auto spec = threads::BindSpec::parse(a.bind);
  std::vector<int> counts;
  if (a.threads.empty())
    for (int t = 1; t <= topo.cores(); ++t) counts.push_back(t);
  else
    counts = parse_thread_list("--threads", a.threads);
  std::vector<threads::BarrierAlgorithm> algos;
  for (const auto& s : split_list(a.algorithms))
    algos.push_back(threads::parse_barrier_algorithm(s));
  std::vector<threads::WaitPolicy> waits;
  for (const auto& s : split_list(a.waits)) waits.push_back(threads::parse_wait_policy(s));
  std::vector<std::string> omp_policies;
  if (a.omp != "none")
    for (const auto& s : split_list(a.omp)) {
      if (s != "active" && s != "passive" && s != "default")
        throw std::invalid_argument("--omp '" + a.omp +
                                    "': allowed are none or a list of active, passive, default");
      omp_policies.push_back(s);
    }
  // Check every placement before measuring anything, so a bad flag fails at once.
  for (int t : counts) threads::place_threads(topo, t, spec, a.oversubscribe);

  report::Report report("barrier", report::machine_json(topo),
                        {{"threads", counts},
                         {"bind", spec.to_string()},
                         {"repeats", a.repeats},
                         {"target_ms", a.target_ms},
                         {"yields_hand_over", threads::yields_hand_over()}});
  auto record = [&](const std::string& algo, const std::string& policy, int t, bool over,
                    const Timing& tm) {
    const auto s = base::spread(tm.ns);
    report.add({{"scope", "thread"},
                {"algorithm", algo},
                {"policy", policy},
                {"threads", t},
                {"oversubscribed", over},
                {"ns_per_barrier", s.median},
                {"min_ns_per_barrier", s.min},
                {"max_ns_per_barrier", s.max},
                {"iterations", tm.iterations},
                {"repeats", tm.ns.size()}});
  };
  for (int t : counts) {
    for (auto algo : algos)
      for (auto w : waits) {
        threads::TeamOptions o;
        o.threads = t;
        o.bind = spec;
        o.barrier = algo;
        o.wait = w;
        o.allow_oversubscribe = a.oversubscribe;
        bool over = false;
        const auto tm = probes::time_team_barrier(topo, o, a.repeats, a.target_ms, &over);
        record(threads::to_string(algo), threads::to_string(w), t, over, tm);
      }
    const auto placement = threads::place_threads(topo, t, spec, a.oversubscribe);
    for (const auto& p : omp_policies)
      record(
          "omp", p, t, placement.oversubscribed,
          time_omp_child(placement.pu_of_thread, p == "default" ? "" : p, a.repeats, a.target_ms));
  }
  write_outputs(report, a.out);
  plot_report(report, a.plot);
  if (a.out.quiet) return 0;

  // Table: one row per algorithm x policy, one column per thread count (COMPaS Table 3).
  std::map<std::pair<std::string, std::string>, std::map<int, double>> cells;
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& r : report.results()) {
    auto key = std::make_pair(r["algorithm"].get<std::string>(), r["policy"].get<std::string>());
    if (!cells.count(key)) rows.push_back(key);
    cells[key][r["threads"].get<int>()] = r["ns_per_barrier"].get<double>();
  }
  fmt::print("ns per barrier (median of {} repeats), bind {}\n", a.repeats, spec.to_string());
  fmt::print("{:<26}", "algorithm / policy");
  for (int t : counts) fmt::print(" {:>9}", fmt::format("T={}", t));
  fmt::print("\n");
  for (const auto& key : rows) {
    fmt::print("{:<26}", key.first + " / " + key.second);
    for (int t : counts) fmt::print(" {:>9.0f}", cells[key][t]);
    fmt::print("\n");
  }
  fmt::print("{:<26}", "COMPaS 1998 spin (PPro)");
  for (int t : counts) {
    static const std::map<int, double> paper = {{2, 1222}, {3, 1761}, {4, 1960}};
    if (paper.count(t))
      fmt::print(" {:>9.0f}", paper.at(t));
    else
      fmt::print(" {:>9}", "-");
  }
  fmt::print("\n");
  // Ratios against libgomp, the baseline: best compas barrier vs active, auto vs passive.
  for (int t : counts) {
    if (t < 2) continue;
    double best = 1e300, best_auto = 1e300;
    std::string best_name;
    for (const auto& key : rows) {
      if (key.first == "omp") continue;
      const double v = cells[key][t];
      if (v < best) best = v, best_name = key.first + "/" + key.second;
      if (key.second == "auto") best_auto = std::min(best_auto, v);
    }
    auto omp_at = [&](const std::string& p) {
      auto it = cells.find({"omp", p});
      return it == cells.end() ? 0.0 : it->second[t];
    };
    if (omp_at("active") > 0)
      fmt::print("T={}: best compas ({}) / omp active = {:.2f}\n", t, best_name,
                 best / omp_at("active"));
    if (omp_at("passive") > 0 && best_auto < 1e300)
      fmt::print("T={}: best compas auto / omp passive = {:.2f}\n", t,
                 best_auto / omp_at("passive"));
  }
  fmt::print("auto when oversubscribed: spin briefly, {}then sleep on a futex\n",
             threads::yields_hand_over() ? "yield (yields hand the core over here), "
                                         : "no yields (they do not hand the core over here), ");
  return 0;
}

struct OmpWorkerArgs {
  std::string cpus;
  int repeats = 7;
  double target_ms = 20;
};

}  // namespace

Command setup_barrier(CLI::App& app) {
  auto args = std::make_shared<BarrierArgs>();
  auto* cmd = app.add_subcommand(
      "barrier", "thread barrier latency per algorithm x wait policy, beside #pragma omp barrier");
  cmd->add_option("--threads", args->threads,
                  "thread counts, e.g. 2 or 1,2,4 or 1-8 "
                  "(default 1..cores)")
      ->envname("COMPAS_THREADS");
  cmd->add_option("--bind", args->bind, "compact | scatter | sockets | cpu list (0,2,4-7)")
      ->envname("COMPAS_BIND");
  cmd->add_option("--wait", args->waits, "wait policies to measure: spin,yield,block,auto")
      ->envname("COMPAS_WAIT");
  cmd->add_option("--algorithms", args->algorithms, "central,dissemination,tree");
  cmd->add_option(
      "--omp", args->omp,
      "OpenMP wait policies to measure as the baseline: active,passive,default or none");
  cmd->add_option("--repeats", args->repeats, "timed repeats per measurement (median reported)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--target-ms", args->target_ms, "duration of one repeat in milliseconds")
      ->check(CLI::Range(0.1, 60000.0));
  cmd->add_flag("--oversubscribe", args->oversubscribe, "allow more threads than PUs")
      ->envname("COMPAS_OVERSUBSCRIBE");
  add_output_flags(*cmd, args->out);
  add_plot_flag(*cmd, args->plot);
  return {cmd, [args] { return run_barrier(*args); }};
}

Command setup_omp_barrier_worker(CLI::App& app) {
  auto args = std::make_shared<OmpWorkerArgs>();
  auto* cmd = app.add_subcommand("_omp-barrier", "");  // internal: the OpenMP side of `barrier`
  cmd->group("");
  cmd->add_option("--cpus", args->cpus)->required();
  cmd->add_option("--repeats", args->repeats)->check(CLI::Range(1, 1000));
  cmd->add_option("--target-ms", args->target_ms)->check(CLI::Range(0.1, 60000.0));
  return {cmd, [args] {
            const auto t =
                time_omp(threads::parse_cpu_list(args->cpus), args->repeats, args->target_ms);
            fmt::print("{}\n", report::json{{"ns", t.ns}, {"iterations", t.iterations}}.dump());
            return 0;
          }};
}

}  // namespace compas::app
