// compas pingpong: latency and bandwidth of one-sided operations between ranks 0 and 1 of a job
// (COMPaS Fig. 2), for message sizes from 8 B up. Run under compas-run -n 2 (or mpirun -np 2).
//
//   put, put_signal, get, put_flush, put_bw   measured by compas/probes/pingpong.hpp
//   mpi_put_flush, mpi_sendrecv   (built with MPI and launched by mpirun) MPI_Put +
//               MPI_Win_flush on an MPI_Win_allocate window, and a send/recv ping-pong
// Each op times something else (probes::pingpong_measure: one way, a round trip, a put until remote
// completion, a put in a stream); bandwidth is bytes / that time (MB/s = 1e6 bytes per second).
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "compas/comm/comm.hpp"
#include "compas/perf/sde.hpp"
#include "compas/probes/membw.hpp"
#include "compas/probes/pingpong.hpp"
#include "compas/threads/topology.hpp"
#include "job_load.hpp"

#ifdef COMPAS_WITH_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace compas::app {

namespace {

// compas's operations (probes::pingpong_ops()) and the MPI baselines.
std::vector<std::string> all_ops() {
  auto ops = probes::pingpong_ops();
  ops.insert(ops.end(), {"mpi_put_flush", "mpi_sendrecv"});
  return ops;
}

struct PingpongArgs {
  std::string sizes;  // list; default 8 B .. max by powers of 4
  std::string max_size = "16MiB";
  std::string ops = "put,put_signal,get,put_flush,put_bw,mpi_put_flush,mpi_sendrecv";
  int iters = 0;  // 0: by size
  int repeats = 5;
  OutputFlags out;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= s.size()) {
    const auto comma = s.find(',', at);
    const auto end = comma == std::string::npos ? s.size() : comma;
    if (end > at) out.push_back(s.substr(at, end - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

std::uint64_t size_flag(const std::string& flag, const std::string& text) {
  try {
    return base::parse_size(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(flag + ": " + e.what());
  }
}

// --sizes, each at most max_bytes; by default 8 B to max_bytes by powers of 4.
std::vector<std::size_t> sizes_of(const PingpongArgs& a, std::uint64_t max_bytes) {
  std::vector<std::size_t> sizes;
  if (a.sizes.empty()) {
    for (std::uint64_t s = 8; s <= max_bytes; s *= 4) sizes.push_back(s);
    if (sizes.empty() || sizes.back() != max_bytes) sizes.push_back(max_bytes);
  } else {
    for (const auto& s : split(a.sizes)) {
      const auto v = size_flag("--sizes", s);
      if (v > max_bytes)
        throw std::invalid_argument("--sizes " + s + " is larger than --max-size " + a.max_size);
      sizes.push_back(v);
    }
    if (sizes.empty()) throw std::invalid_argument("--sizes is empty: give a list like 8,1KiB");
  }
  return sizes;
}

// --ops, in the order given.
std::vector<std::string> ops_of(const PingpongArgs& a) {
  std::vector<std::string> ops;
  const auto known = all_ops();
  for (const auto& o : split(a.ops)) {
    if (std::find(known.begin(), known.end(), o) == known.end()) {
      std::string allowed;
      for (const auto& k : known) allowed += (allowed.empty() ? "" : ", ") + k;
      throw std::invalid_argument("--ops: '" + o + "' is not an operation: allowed are " + allowed);
    }
    ops.push_back(o);
  }
  if (ops.empty()) throw std::invalid_argument("--ops is empty");
  return ops;
}

#ifdef COMPAS_WITH_MPI
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The MPI baselines, on MPI_COMM_WORLD (the job was launched by mpirun).
double mpi_run(const std::string& op, std::size_t n, int iters, MPI_Win win, std::byte* buf) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  double s = 0;
  if (rank <= 1) {
    const auto start = Clock::now();
    if (op == "mpi_put_flush") {
      if (rank == 0) {
        for (int k = 0; k < iters; ++k) {
          MPI_Put(buf, static_cast<int>(n), MPI_BYTE, 1, 0, static_cast<int>(n), MPI_BYTE, win);
          MPI_Win_flush(1, win);
        }
        s = seconds_since(start) / iters;
      }
    } else {
      for (int k = 0; k < iters; ++k) {
        if (rank == 0) {
          MPI_Send(buf, static_cast<int>(n), MPI_BYTE, 1, 7, MPI_COMM_WORLD);
          MPI_Recv(buf, static_cast<int>(n), MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf, static_cast<int>(n), MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, static_cast<int>(n), MPI_BYTE, 0, 7, MPI_COMM_WORLD);
        }
      }
      s = seconds_since(start) / iters / 2;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return s;
}
#endif

int run_pingpong(const PingpongArgs& a) {
  if (a.repeats < 1)
    throw std::invalid_argument("--repeats " + std::to_string(a.repeats) +
                                " is not allowed: at least 1");
  if (a.iters < 0)
    throw std::invalid_argument("--iters " + std::to_string(a.iters) +
                                " is not allowed: 0 (by size) or more");
  const std::uint64_t max_bytes = size_flag("--max-size", a.max_size);
  if (max_bytes < 1 || max_bytes > (std::uint64_t{1} << 30))
    throw std::invalid_argument("--max-size " + a.max_size + " is not allowed: 1 B to 1 GiB");
  const std::vector<std::size_t> sizes = sizes_of(a, max_bytes);
  const std::vector<std::string> ops = ops_of(a);

  auto boot = comm::Bootstrap::from_environment();
  if (boot->size() < 2)
    throw std::invalid_argument("compas pingpong needs at least 2 processes (this job has " +
                                std::to_string(boot->size()) +
                                "): run it as compas-run -n 2 compas pingpong, or under "
                                "mpirun -np 2");
  const bool leader = boot->rank() == 0;
  if (leader) check_outputs(a.out);
  comm::Comm c(*boot);
  perf::sde::register_counter("bytes_put", "bytes this process put to others",
                              [&c] { return static_cast<long long>(c.stats().bytes_put); });
  perf::sde::register_counter("bytes_got", "bytes this process got from others",
                              [&c] { return static_cast<long long>(c.stats().bytes_got); });

  const bool mpi = boot->kind() == "mpi";
#ifdef COMPAS_WITH_MPI
  MPI_Win win = MPI_WIN_NULL;
  std::byte* mpi_buf = nullptr;
  const bool want_mpi = mpi && std::any_of(ops.begin(), ops.end(), [](const std::string& o) {
                          return o.rfind("mpi_", 0) == 0;
                        });
  if (want_mpi) {
    MPI_Win_allocate(static_cast<MPI_Aint>(max_bytes), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mpi_buf,
                     &win);
    MPI_Win_lock_all(0, win);
  }
#endif

  probes::Pingpong pp(c, max_bytes);
  const std::string transport = c.transport(c.rank() == 0 ? 1 : 0);
  const bool direct = pp.direct();
  auto topo = threads::Topology::host();
  report::Report report("pingpong", report::machine_json(topo),
                        {{"processes", c.size()},
                         {"bootstrap", boot->kind()},
                         {"transport", transport},
                         {"direct_load_store", direct},
                         {"repeats", a.repeats},
                         {"iterations", a.iters}});
  if (leader && !a.out.quiet) {
    fmt::print("pingpong between ranks 0 and 1 of {} ({} bootstrap)\n", c.size(), boot->kind());
    fmt::print("UCX lanes to rank 1: {}; same-host load/store: {}\n", transport,
               direct ? "yes" : "no");
    fmt::print("(MB/s = 1e6 bytes per second: the bytes over the time of what is timed)\n");
    fmt::print("{:<14} {:>10} {:>12} {:>12} {:>12} {:>14}  {}\n", "op", "bytes", "us_per_op",
               "min_us", "max_us", "MB/s", "what is timed");
  }
  probes::PingpongOptions po;
  po.sizes = sizes;
  po.ops = ops;
  po.iters = a.iters;
  po.repeats = a.repeats;
#ifdef COMPAS_WITH_MPI
  po.other = [&](const std::string& op, std::size_t n, int iters) {
    return mpi_run(op, n, iters, win, mpi_buf);
  };
#endif
  po.start_op = [&](const std::string& op) {
    if (op.rfind("mpi_", 0) != 0 || mpi) return true;
    if (leader && !a.out.quiet)
      fmt::print("{:<14} skipped: {}\n", op,
                 comm::Bootstrap::mpi_supported()
                     ? "the MPI baselines need the job launched by mpirun / srun"
                     : "compas was built without MPI (COMPAS_WITH_MPI=OFF)");
    return false;
  };
  po.on_point = [&](const probes::PingpongPoint& p) {
    if (!leader) return;
    const bool is_mpi = p.op.rfind("mpi_", 0) == 0;
    report.add({{"op", p.op},
                {"bytes", p.bytes},
                {"measure", probes::pingpong_measure(p.op).key},
                {"measure_text", probes::pingpong_measure(p.op).text},
                {"latency_us", p.latency_us()},
                {"min_latency_us", p.min_s * 1e6},
                {"max_latency_us", p.max_s * 1e6},
                {"bandwidth_mbs", p.bandwidth_mbs()},
                {"iterations", p.iterations},
                {"transport", is_mpi ? std::string("mpi") : transport}});
    if (!a.out.quiet) {
      fmt::print("{:<14} {:>10} {:>12.3f} {:>12.3f} {:>12.3f} {:>14.1f}  {}\n", p.op, p.bytes,
                 p.latency_us(), p.min_s * 1e6, p.max_s * 1e6, p.bandwidth_mbs(),
                 probes::pingpong_measure(p.op).text);
      std::fflush(stdout);
    }
  };
  probes::measure_pingpong(pp, po);
#ifdef COMPAS_WITH_MPI
  if (want_mpi) {
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
  }
#endif
  count_job_cpu(*boot);
  if (leader) write_outputs(report, a.out);
  return 0;
}

}  // namespace

Command setup_pingpong(CLI::App& app) {
  auto args = std::make_shared<PingpongArgs>();
  auto* cmd = app.add_subcommand(
      "pingpong",
      "put / put_signal / get latency and bandwidth between ranks 0 and 1 (COMPaS Fig. 2); run "
      "under compas-run -n 2 or mpirun -np 2");
  cmd->add_option("--sizes", args->sizes,
                  "message sizes, e.g. 8,1KiB,1MiB (default: 8 B to --max-size by powers of 4)");
  cmd->add_option("--max-size", args->max_size, "largest message (default 16MiB)");
  cmd->add_option("--ops", args->ops,
                  "operations: put, put_signal, get, put_flush, put_bw, and with MPI under "
                  "mpirun mpi_put_flush, mpi_sendrecv (default: all)");
  cmd->add_option("--iters", args->iters,
                  "operations per repeat (default: by size, 20000 for small messages)");
  cmd->add_option("--repeats", args->repeats, "repeats; the median is reported (default 5)");
  add_output_flags(*cmd, args->out);
  return {cmd, [args] { return run_pingpong(*args); }};
}

}  // namespace compas::app
