// Latency and bandwidth of one-sided operations between ranks 0 and 1 of a job (COMPaS Fig. 2),
// the measurement of `compas pingpong`:
//
//   put         ping-pong: each side puts n bytes into the other and polls the last byte of its
//               own buffer (as ucx_perftest's ucp_put_lat does); latency = half the round trip
//   put_signal  ping-pong with put_signal / wait_until (data then signal, ordered): the halo
//               building block; latency = half the round trip
//   get         rank 0 gets n bytes from rank 1; latency = one blocking get: a round trip across
//               hosts, a copy by load/store from a peer on the same host
//   put_flush   rank 0 puts n bytes and flushes (remote completion); latency = one put + flush:
//               a round trip across hosts, a copy on the same host
//   put_bw      rank 0 streams non-blocking puts, then one flush; bandwidth of the stream
//
// Every call here is collective over the job: every rank makes the same calls in the same order
// (ranks above 1 only meet the others at the barriers). Times are rank 0's clock.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compas/comm/comm.hpp"

namespace compas::probes {

// The operations above, in that order.
const std::vector<std::string>& pingpong_ops();

// What an operation's time per operation is (each op times something else): `key` for JSON
// ("one_way", "round_trip", "remote_completion", "stream"), `text` for tables, which says where
// the two differ what is timed on the same host (a copy, for get and put_flush) and across hosts.
// Also for the MPI baselines compas pingpong adds (mpi_put_flush: remote completion, mpi_sendrecv:
// one way). std::invalid_argument for an unknown op.
struct PingpongMeasure {
  const char* key;
  const char* text;
};
PingpongMeasure pingpong_measure(const std::string& op);

// Operations per repeat for messages of `bytes`: `forced` when positive, else enough for 64 MiB
// of traffic, at least 20 and at most 20000.
int pingpong_iterations(std::size_t bytes, int forced);

// One operation at one message size.
struct PingpongPoint {
  std::string op;
  std::size_t bytes = 0;
  int iterations = 0;  // operations per repeat
  // Seconds per operation, one per timed repeat (the warm-up repeat is not kept). Rank 0's are
  // the measurement; other ranks hold their own view (0 where they only serve).
  std::vector<double> seconds;
  double median_s = 0, min_s = 0, max_s = 0;
  double latency_us() const { return median_s * 1e6; }
  // bytes / latency in MB/s (1e6 bytes per second); 0 when the latency is 0.
  double bandwidth_mbs() const;
};

// Times one repeat: seconds per operation over `iters` operations `op` of `bytes` each.
using PingpongRepeat = std::function<double(const std::string& op, std::size_t bytes, int iters)>;

// One warm-up repeat, then `repeats` timed ones of `one`, and their median, min and max.
PingpongPoint measure_pingpong_point(const std::string& op, std::size_t bytes, int iters,
                                     int repeats, const PingpongRepeat& one);

// The window (max_bytes, at least 8, and two signal words per rank) and the source buffer of the
// measurement. Making one is collective.
class Pingpong {
 public:
  Pingpong(comm::Comm& c, std::size_t max_bytes);
  ~Pingpong();
  Pingpong(const Pingpong&) = delete;
  Pingpong& operator=(const Pingpong&) = delete;

  // Whether this rank reaches its peer (rank 1 for rank 0, else rank 0) by load/store.
  bool direct();
  // One repeat of `op` (one of pingpong_ops()) with messages of n bytes: seconds per operation.
  // Collective; ranks above 1 return 0.
  double run(const std::string& op, std::size_t n, int iters);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct PingpongOptions {
  std::vector<std::size_t> sizes;  // message sizes in bytes, each at most the window's size
  std::vector<std::string> ops;    // in the order measured
  int iters = 0;                   // operations per repeat; 0: pingpong_iterations by size
  int repeats = 5;                 // timed repeats per point, after one warm-up repeat
  // Times one repeat of an operation that is not among pingpong_ops() (a baseline such as
  // MPI's); without it such an operation is refused (std::invalid_argument).
  PingpongRepeat other;
  // Asked before each operation is measured: false skips it.
  std::function<bool(const std::string& op)> start_op;
  // Called with each point as soon as it is measured, on every rank.
  std::function<void(const PingpongPoint&)> on_point;
};

// Every operation at every size, operation-major, in the order given.
std::vector<PingpongPoint> measure_pingpong(Pingpong& pp, const PingpongOptions& options);

}  // namespace compas::probes
