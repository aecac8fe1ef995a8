// compas pingpong: latency and bandwidth of one-sided operations between ranks 0 and 1 of a job
// (COMPaS Fig. 2), for message sizes from 8 B up. Run under compas-run -n 2 (or mpirun -np 2).
//
//   put         ping-pong: each side puts n bytes into the other and polls the last byte of its
//               own buffer (as ucx_perftest's ucp_put_lat does); latency = half the round trip
//   put_signal  ping-pong with put_signal / wait_until (data then signal, ordered): the halo
//               building block; latency = half the round trip
//   get         rank 0 gets n bytes from rank 1; latency = one blocking get
//   put_flush   rank 0 puts n bytes and flushes (remote completion); latency = one put + flush
//   put_bw      rank 0 streams non-blocking puts, then one flush; bandwidth of the stream
//   mpi_put_flush, mpi_sendrecv   (built with MPI and launched by mpirun) MPI_Put +
//               MPI_Win_flush on an MPI_Win_allocate window, and a send/recv ping-pong
// Bandwidth is bytes / latency for the latency ops (MB/s = 1e6 bytes per second).
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "compas/comm/comm.hpp"
#include "compas/perf/membw.hpp"
#include "compas/perf/sde.hpp"
#include "compas/threads/topology.hpp"
#include "compas/threads/wait.hpp"

#ifdef COMPAS_WITH_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace compas::app {

namespace {

using Clock = std::chrono::steady_clock;

const std::vector<std::string> kOps = {"put",    "put_signal",    "get",         "put_flush",
                                       "put_bw", "mpi_put_flush", "mpi_sendrecv"};

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
    return perf::parse_size(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(flag + ": " + e.what());
  }
}

int iterations_for(std::size_t bytes, int forced) {
  if (forced > 0) return forced;
  const std::size_t by_volume = (std::size_t{1} << 26) / std::max<std::size_t>(bytes, 1);
  return static_cast<int>(std::clamp<std::size_t>(by_volume, 20, 20000));
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The byte a ping-pong message ends with in round k: never 0 (the buffer's initial value) and
// different from the previous round's.
std::uint8_t tag_of(std::uint64_t k) {
  return static_cast<std::uint8_t>(k % 255 + 1);
}

class Pingpong {
 public:
  Pingpong(comm::Comm& c, std::size_t max_bytes)
      : c_(c),
        w_(c, std::max<std::size_t>(max_bytes, 8), 2),
        src_(std::max<std::size_t>(max_bytes, 8)) {
    for (std::size_t i = 0; i < src_.size(); ++i) src_[i] = static_cast<std::byte>(i * 7 + 1);
  }

  bool direct() { return w_.direct(peer()); }

  // Seconds per operation, for `iters` operations of `n` bytes (rank 0's clock; rank 1 serves).
  double run(const std::string& op, std::size_t n, int iters) {
    c_.barrier();
    if (c_.rank() > 1) {
      c_.barrier();
      return 0;
    }
    double s = 0;
    if (op == "put")
      s = put_pingpong(n, iters);
    else if (op == "put_signal")
      s = put_signal_pingpong(n, iters);
    else if (op == "get")
      s = one_sided(n, iters, [&] { w_.get(1, 0, sink(n), n); });
    else if (op == "put_flush")
      s = one_sided(n, iters, [&] {
        w_.put(1, 0, src_.data(), n);
        c_.flush(1);
      });
    else if (op == "put_bw")
      s = put_stream(n, iters);
    c_.barrier();
    return s;
  }

 private:
  int peer() const { return c_.rank() == 0 ? 1 : 0; }

  std::byte* sink(std::size_t n) {
    if (dst_.size() < n) dst_.resize(n);
    return dst_.data();
  }

  // Polls the last byte of the local buffer. A load/store peer's stores need no progress to
  // arrive, so then the worker is progressed only now and then (for its other duties): a message
  // landing during a progress call would wait for the call to end. The pause between polls keeps
  // few loads of the line in flight: without it, the peer's store that ends the wait clears the
  // pipeline of all of them (0.093 against 0.063 us one way between two cores here).
  void wait_byte(std::size_t n, std::uint8_t tag, bool direct) {
    std::atomic_ref<std::uint8_t> last(*reinterpret_cast<std::uint8_t*>(w_.local() + n - 1));
    const std::uint64_t every = direct ? 1023 : 15;
    const auto start = Clock::now();
    for (std::uint64_t i = 1; last.load(std::memory_order_acquire) != tag; ++i) {
      threads::cpu_relax();
      if ((i & every) == 0) c_.progress();
      if ((i & 0xffff) == 0 && seconds_since(start) > c_.options().timeout_s)
        throw comm::CommError(
            "timed out waiting for rank " + std::to_string(peer()) + "'s ping-pong message",
            peer());
    }
  }

  double put_pingpong(std::size_t n, int iters) {
    n = std::max<std::size_t>(n, 1);
    const bool first = c_.rank() == 0;
    const bool dir = direct();
    const auto start = Clock::now();
    for (int k = 0; k < iters; ++k) {
      const std::uint8_t tag = tag_of(round_++);
      src_[n - 1] = static_cast<std::byte>(tag);
      if (first) {
        w_.put(1, 0, src_.data(), n);
        wait_byte(n, tag, dir);
      } else {
        wait_byte(n, tag, dir);
        w_.put(0, 0, src_.data(), n);
      }
    }
    return seconds_since(start) / iters / 2;
  }

  double put_signal_pingpong(std::size_t n, int iters) {
    const bool first = c_.rank() == 0;
    const auto start = Clock::now();
    for (int k = 0; k < iters; ++k) {
      const std::uint64_t want = ++signal_round_;
      if (first) {
        w_.put_signal(1, 0, src_.data(), n, 0);
        w_.wait_until(0, want, 1);
      } else {
        w_.wait_until(0, want, 0);
        w_.put_signal(0, 0, src_.data(), n, 0);
      }
    }
    return seconds_since(start) / iters / 2;
  }

  template <class Op>
  double one_sided(std::size_t, int iters, Op op) {
    if (c_.rank() != 0) return 0;
    const auto start = Clock::now();
    for (int k = 0; k < iters; ++k) op();
    return seconds_since(start) / iters;
  }

  double put_stream(std::size_t n, int iters) {
    if (c_.rank() != 0) return 0;
    constexpr std::size_t kInFlight = 32;
    std::vector<comm::Request> reqs;
    reqs.reserve(kInFlight);
    const auto start = Clock::now();
    for (int k = 0; k < iters; ++k) {
      if (reqs.size() == kInFlight) {
        for (auto& r : reqs) r.wait();
        reqs.clear();
      }
      reqs.push_back(w_.put_nb(1, 0, src_.data(), n));
    }
    for (auto& r : reqs) r.wait();
    c_.flush(1);
    return seconds_since(start) / iters;
  }

  comm::Comm& c_;
  comm::WindowBytes w_;
  std::vector<std::byte> src_, dst_;
  std::uint64_t round_ = 0, signal_round_ = 0;
};

#ifdef COMPAS_WITH_MPI
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
  std::vector<std::string> ops;
  for (const auto& o : split(a.ops)) {
    if (std::find(kOps.begin(), kOps.end(), o) == kOps.end()) {
      std::string allowed;
      for (const auto& k : kOps) allowed += (allowed.empty() ? "" : ", ") + k;
      throw std::invalid_argument("--ops: '" + o + "' is not an operation: allowed are " + allowed);
    }
    ops.push_back(o);
  }
  if (ops.empty()) throw std::invalid_argument("--ops is empty");

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

  Pingpong pp(c, max_bytes);
  const std::string transport = c.transport(c.rank() == 0 ? 1 : 0);
  const bool direct = pp.direct();
  auto topo = threads::Topology::host();
  perf::Report report("pingpong", perf::machine_json(topo),
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
    fmt::print("{:<14} {:>10} {:>12} {:>12} {:>12} {:>14}\n", "op", "bytes", "latency_us", "min_us",
               "max_us", "bandwidth_mbs");
  }
  for (const auto& op : ops) {
    const bool is_mpi = op.rfind("mpi_", 0) == 0;
    if (is_mpi && !mpi) {
      if (leader && !a.out.quiet)
        fmt::print("{:<14} skipped: {}\n", op,
                   comm::Bootstrap::mpi_supported()
                       ? "the MPI baselines need the job launched by mpirun / srun"
                       : "compas was built without MPI (COMPAS_WITH_MPI=OFF)");
      continue;
    }
    for (const std::size_t n : sizes) {
      const int iters = iterations_for(n, a.iters);
      std::vector<double> per_op;
      for (int r = 0; r < a.repeats + 1; ++r) {  // the first repeat warms up
        double s = 0;
#ifdef COMPAS_WITH_MPI
        if (is_mpi)
          s = mpi_run(op, n, iters, win, mpi_buf);
        else
#endif
          s = pp.run(op, n, iters);
        if (r > 0) per_op.push_back(s);
      }
      if (!leader) continue;
      const double sec = median(per_op);
      const double lat_us = sec * 1e6;
      const double mbs = sec > 0 ? static_cast<double>(n) / sec / 1e6 : 0;
      report.add({{"op", op},
                  {"bytes", n},
                  {"latency_us", lat_us},
                  {"min_latency_us", *std::min_element(per_op.begin(), per_op.end()) * 1e6},
                  {"max_latency_us", *std::max_element(per_op.begin(), per_op.end()) * 1e6},
                  {"bandwidth_mbs", mbs},
                  {"iterations", iters},
                  {"transport", is_mpi ? std::string("mpi") : transport}});
      if (!a.out.quiet) {
        const auto& rec = report.results().back();
        fmt::print("{:<14} {:>10} {:>12.3f} {:>12.3f} {:>12.3f} {:>14.1f}\n", op, n, lat_us,
                   rec["min_latency_us"].get<double>(), rec["max_latency_us"].get<double>(), mbs);
        std::fflush(stdout);
      }
    }
  }
#ifdef COMPAS_WITH_MPI
  if (want_mpi) {
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
  }
#endif
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
  cmd->group("Commands");
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
