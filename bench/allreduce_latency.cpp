// allreduce_latency: the latency of a job-wide allreduce of one double with one thread per
// process, every way compas does it and MPI's, measured in the same job. Run under a launcher:
//
//   mpirun -np P allreduce_latency [--repeats N] [--target-ms MS] [--json FILE] [Runtime flags]
//   compas-run -n P -t 1 allreduce_latency ...              (no MPI_Allreduce then)
//
// Variants, each a loop of calls from thread 0 of a T = 1 Runtime (rt.run):
//   runtime  Runtime::allreduce(t, x, op::sum{}): comm's recursive doubling with the caller's op
//   fold     what Runtime::allreduce did before: an allgather of the P values (ProcessCollectives),
//            folded left to right on every process
//   builtin  ProcessCollectives::allreduce(x, Op::sum): recursive doubling with a built-in op
//   mpi      MPI_Allreduce(MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), when MPI is built in and the job
//            was started by mpirun (the Runtime's bootstrap is then MPI)
// A warm-up picks each variant's call count so that one repeat lasts about --target-ms (the
// largest over the ranks, so all ranks make the same calls). Every repeat runs the variants in an
// order rotated by the repeat, each after the process barrier; a repeat's figure is the slowest
// rank's mean time per call. Rank 0 prints the median, min and max over the repeats and the
// ratio to MPI's median, and writes them as JSON. Every call's result is checked (exit 1 if any
// is wrong); timing decides nothing else.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifdef COMPAS_WITH_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#include "compas/base/statistics.hpp"
#include "compas/report/report.hpp"
#include "compas/runtime/runtime.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using compas::report::json;

struct Args {
  int repeats = 9;
  double target_ms = 50;
  std::string json_path;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--repeats") {
      const std::string v = value();
      a.repeats = std::atoi(v.c_str());
      if (a.repeats < 1 || v.find_first_not_of("0123456789") != std::string::npos)
        throw std::invalid_argument("--repeats '" + v + "' is not a positive integer");
    } else if (flag == "--target-ms") {
      const std::string v = value();
      char* end = nullptr;
      a.target_ms = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(a.target_ms > 0))
        throw std::invalid_argument("--target-ms '" + v + "' is not a positive number");
    } else if (flag == "--json") {
      a.json_path = value();
    } else if (flag == "-h" || flag == "--help") {
      std::printf(
          "usage: mpirun -np P allreduce_latency [--repeats N (9)] [--target-ms MS (50)] "
          "[--json FILE] [Runtime flags]\n");
      std::exit(0);
    } else {
      throw std::invalid_argument("unknown argument '" + flag + "' (see --help)");
    }
  }
  return a;
}

// One way to reduce: a call returning the job's sum of `x`.
using Call = std::function<double(compas::threads::ThreadCtx&, double)>;
struct Variant {
  Variant(std::string n, Call c) : name(std::move(n)), call(std::move(c)) {}
  std::string name;
  Call call;
  long calls = 0;          // per repeat
  std::vector<double> ns;  // per repeat: the slowest rank's mean ns per call
};

std::vector<Variant> variants(compas::Runtime& rt) {
  std::vector<Variant> v;
  v.emplace_back("runtime", [&rt](compas::threads::ThreadCtx& t, double x) {
    return rt.allreduce(t, x, compas::op::sum{});
  });
  v.emplace_back("fold", [&rt](compas::threads::ThreadCtx&, double x) {
    std::vector<double> all(static_cast<std::size_t>(rt.processes()));
    rt.collectives().allgather(std::span<const double>(&x, 1), std::span<double>(all));
    double acc = all[0];
    for (std::size_t r = 1; r < all.size(); ++r) acc += all[r];
    return acc;
  });
  v.emplace_back("builtin", [&rt](compas::threads::ThreadCtx&, double x) {
    return rt.collectives().allreduce(x, compas::comm::Op::sum);
  });
#ifdef COMPAS_WITH_MPI
  int mpi_up = 0;
  MPI_Initialized(&mpi_up);
  if (mpi_up && rt.bootstrap().kind() == "mpi")
    v.emplace_back("mpi", [](compas::threads::ThreadCtx&, double x) {
      double sum = 0;
      MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      return sum;
    });
#endif
  return v;
}

// `calls` calls after the process barrier: this rank's mean ns per call. Counts wrong results.
double time_calls(compas::Runtime& rt, compas::threads::ThreadCtx& t, Variant& v, long calls,
                  long& wrong) {
  const double mine = rt.process() + 1.0;
  const double want = rt.processes() * (rt.processes() + 1) / 2.0;
  rt.comm().barrier();
  const auto t0 = Clock::now();
  for (long i = 0; i < calls; ++i)
    if (v.call(t, mine) != want) ++wrong;
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
         static_cast<double>(calls);
}

double slowest(compas::Runtime& rt, double ns) {
  return rt.collectives().allreduce(ns, compas::comm::Op::max);
}

void measure(compas::Runtime& rt, compas::threads::ThreadCtx& t, std::vector<Variant>& vs,
             const Args& a, long& wrong) {
  for (Variant& v : vs) {  // warm-up, then the call count for target_ms
    time_calls(rt, t, v, 16, wrong);
    const double ns = slowest(rt, time_calls(rt, t, v, 16, wrong));
    v.calls = static_cast<long>(std::clamp(a.target_ms * 1e6 / std::max(ns, 1.0), 16.0, 1e7));
  }
  for (int r = 0; r < a.repeats; ++r)
    for (std::size_t k = 0; k < vs.size(); ++k) {
      Variant& v = vs[(k + static_cast<std::size_t>(r)) % vs.size()];
      v.ns.push_back(slowest(rt, time_calls(rt, t, v, v.calls, wrong)));
    }
}

void report(compas::Runtime& rt, const std::vector<Variant>& vs, const Args& a) {
  const unsigned cpus = std::thread::hardware_concurrency();
  const bool over = static_cast<unsigned>(rt.processes()) > cpus;
  fmt::print(
      "allreduce of one double: P = {} processes x 1 thread on {} cpus{}, bootstrap {}\n",
      rt.processes(), cpus,
      over ? fmt::format(" (oversubscribed: {} processes share {} cpus)", rt.processes(), cpus)
           : "",
      rt.bootstrap().kind());
  double mpi_median = 0;
  for (const Variant& v : vs)
    if (v.name == "mpi") mpi_median = compas::base::spread(v.ns).median;
  fmt::print("{:<8} {:>12} {:>12} {:>12} {:>8} {:>10}\n", "variant", "median us", "min us",
             "max us", "/ mpi", "calls");
  compas::report::Report rep("allreduce_latency", compas::report::machine_json(rt.topology()),
                             {{"processes", rt.processes()},
                              {"threads", 1},
                              {"cpus", cpus},
                              {"oversubscribed", over},
                              {"bootstrap", rt.bootstrap().kind()},
                              {"repeats", a.repeats},
                              {"target_ms", a.target_ms}});
  for (const Variant& v : vs) {
    const auto s = compas::base::spread(v.ns);
    const double ratio = mpi_median > 0 ? s.median / mpi_median : 0;
    fmt::print("{:<8} {:>12.2f} {:>12.2f} {:>12.2f} {:>8} {:>10}\n", v.name, s.median / 1e3,
               s.min / 1e3, s.max / 1e3, mpi_median > 0 ? fmt::format("{:.2f}", ratio) : "-",
               v.calls);
    json rec = {{"variant", v.name},           {"processes", rt.processes()},
                {"median_us", s.median / 1e3}, {"min_us", s.min / 1e3},
                {"max_us", s.max / 1e3},       {"calls_per_repeat", v.calls}};
    if (mpi_median > 0) rec["ratio_to_mpi"] = ratio;
    rep.add(rec);
  }
  rep.write_json(a.json_path);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    compas::Runtime rt(argc, argv);
    const Args a = parse_args(argc, argv);
    if (rt.threads() != 1)
      throw std::invalid_argument("--threads " + std::to_string(rt.threads()) +
                                  " is not allowed: one thread per process (--threads 1)");
    if (rt.processes() < 2)
      throw std::invalid_argument("one process: run under a launcher with 2 or more processes");
    std::vector<Variant> vs = variants(rt);
    long wrong = 0;
    rt.run([&](compas::threads::ThreadCtx& t) { measure(rt, t, vs, a, wrong); });
    const long wrong_anywhere = rt.allreduce(wrong, compas::op::sum{});
    if (rt.process() == 0) report(rt, vs, a);
    if (wrong_anywhere) {
      std::fprintf(stderr, "allreduce_latency: %ld results were wrong\n", wrong_anywhere);
      return 1;
    }
    return 0;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "allreduce_latency: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "allreduce_latency: %s\n", e.what());
    return 1;
  }
}
