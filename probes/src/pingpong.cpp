// One-sided latency and bandwidth between ranks 0 and 1. See compas/probes/pingpong.hpp.
#include "compas/probes/pingpong.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>

#include "compas/base/machine.hpp"
#include "compas/base/statistics.hpp"

namespace compas::probes {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The byte a ping-pong message ends with in round k: never 0 (the buffer's initial value) and
// different from the previous round's.
std::uint8_t tag_of(std::uint64_t k) {
  return static_cast<std::uint8_t>(k % 255 + 1);
}

}  // namespace

const std::vector<std::string>& pingpong_ops() {
  static const std::vector<std::string> ops = {"put", "put_signal", "get", "put_flush", "put_bw"};
  return ops;
}

int pingpong_iterations(std::size_t bytes, int forced) {
  if (forced > 0) return forced;
  const std::size_t by_volume = (std::size_t{1} << 26) / std::max<std::size_t>(bytes, 1);
  return static_cast<int>(std::clamp<std::size_t>(by_volume, 20, 20000));
}

PingpongMeasure pingpong_measure(const std::string& op) {
  if (op == "put" || op == "put_signal" || op == "mpi_sendrecv")
    return {"one_way", "one way (half a ping-pong round trip)"};
  // A peer on this host is reached by load/store: its get and flushed put are a copy, with no
  // message and no reply. The keys keep their names (files written before stay comparable).
  if (op == "get")
    return {"round_trip", "one blocking get (same host: a copy; across hosts: a round trip)"};
  if (op == "put_flush")
    return {"remote_completion",
            "put until remotely complete (same host: a copy; across hosts: a round trip)"};
  if (op == "mpi_put_flush")  // what MPI does on one host is its own
    return {"remote_completion", "put until remotely complete (MPI_Put, MPI_Win_flush)"};
  if (op == "put_bw") return {"stream", "per put in a stream (32 in flight, one flush)"};
  throw std::invalid_argument("pingpong: '" + op + "' is not an operation");
}

double PingpongPoint::bandwidth_mbs() const {
  return median_s > 0 ? static_cast<double>(bytes) / median_s / 1e6 : 0;
}

PingpongPoint measure_pingpong_point(const std::string& op, std::size_t bytes, int iters,
                                     int repeats, const PingpongRepeat& one) {
  PingpongPoint p;
  p.op = op;
  p.bytes = bytes;
  p.iterations = iters;
  for (int r = 0; r < repeats + 1; ++r) {  // the first repeat warms up
    const double s = one(op, bytes, iters);
    if (r > 0) p.seconds.push_back(s);
  }
  const auto s = base::spread(p.seconds);
  p.median_s = s.median;
  p.min_s = s.min;
  p.max_s = s.max;
  return p;
}

struct Pingpong::Impl {
  Impl(comm::Comm& c, std::size_t max_bytes)
      : c_(c),
        w_(c, std::max<std::size_t>(max_bytes, 8), 2),
        src_(std::max<std::size_t>(max_bytes, 8)) {
    for (std::size_t i = 0; i < src_.size(); ++i) src_[i] = static_cast<std::byte>(i * 7 + 1);
  }

  bool direct() { return w_.direct(peer()); }

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
      base::cpu_relax();
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

Pingpong::Pingpong(comm::Comm& c, std::size_t max_bytes)
    : impl_(std::make_unique<Impl>(c, max_bytes)) {}

Pingpong::~Pingpong() = default;

bool Pingpong::direct() {
  return impl_->direct();
}

double Pingpong::run(const std::string& op, std::size_t n, int iters) {
  return impl_->run(op, n, iters);
}

std::vector<PingpongPoint> measure_pingpong(Pingpong& pp, const PingpongOptions& o) {
  const auto& ours = pingpong_ops();
  const PingpongRepeat own = [&pp](const std::string& op, std::size_t n, int iters) {
    return pp.run(op, n, iters);
  };
  std::vector<PingpongPoint> points;
  for (const auto& op : o.ops) {
    if (o.start_op && !o.start_op(op)) continue;
    const bool is_ours = std::find(ours.begin(), ours.end(), op) != ours.end();
    if (!is_ours && !o.other)
      throw std::invalid_argument("pingpong: '" + op + "' is not an operation");
    for (const std::size_t n : o.sizes) {
      points.push_back(measure_pingpong_point(op, n, pingpong_iterations(n, o.iters), o.repeats,
                                              is_ours ? own : o.other));
      if (o.on_point) o.on_point(points.back());
    }
  }
  return points;
}

}  // namespace compas::probes
