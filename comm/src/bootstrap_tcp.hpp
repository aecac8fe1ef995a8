// The tcp bootstrap's one class, TcpBootstrap (bootstrap_tcp.cpp: the connect phase;
// bootstrap_tcp_collective.cpp: the collectives), and the helpers of its messages.
#pragma once

#include <netinet/in.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "bootstrap_impl.hpp"
#include "compas/comm/bootstrap.hpp"
#include "net.hpp"
#include "tcp_admission.hpp"
#include "wire.hpp"

namespace compas::comm::detail {

using net::Clock;
using wire::FrameType;

// A client waits this much longer than its own timeout for rank 0's verdict, so that the message
// naming the culprit, which only rank 0 knows, arrives before the client gives up on its own.
inline constexpr double kClientGraceS = 2.0;

inline std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// "rank 2", "ranks 2, 3", "ranks 2, 3, 4, 5, 6, 7, 8, 9, ... (12 in all)"
inline std::string rank_list(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  const std::size_t shown = std::min<std::size_t>(ranks.size(), 8);
  for (std::size_t i = 0; i < shown; ++i) {
    if (i) out += ", ";
    out += std::to_string(ranks[i]);
  }
  if (shown < ranks.size()) out += ", ... (" + std::to_string(ranks.size()) + " in all)";
  return out;
}

inline const char* op_name(FrameType t) {
  return t == FrameType::barrier ? "barrier" : "allgather";
}

class TcpBootstrap final : public Bootstrap {
 public:
  explicit TcpBootstrap(const TcpOptions& options);
  ~TcpBootstrap() override;

  int rank() const override { return o_.rank; }
  int size() const override { return o_.size; }
  std::string kind() const override { return "tcp"; }
  std::vector<std::string> allgather(const std::string& mine) override;
  void barrier() override;

 private:
  struct Peer {
    net::Fd fd;
    std::string in;  // received, not yet parsed
    bool eof = false;
  };

  void listen_or_adopt();
  void serve_connect();
  std::string refusal(std::uint32_t r, std::uint32_t size) const;
  void accept_all(detail::Admission& admission, Clock::time_point& pause_until);
  [[noreturn]] void fail_missing_ranks();
  void send_welcome();
  std::vector<std::string> serve_collective(FrameType type, const std::string& mine);
  void join();
  net::Fd connect_to_rank0(const sockaddr_in& sa, Clock::time_point deadline);
  static bool connect_within(int fd, const sockaddr_in& sa, Clock::time_point deadline,
                             std::string& error);
  bool handshake_with_rank0(Clock::time_point deadline);
  void check_verdict(const wire::Frame& f, FrameType want);
  [[noreturn]] void fail_impostor(const std::string& how);
  std::vector<std::string> client_collective(FrameType type, const std::string& mine);
  wire::Frame client_receive(Clock::time_point deadline, const std::string& timeout_message);
  std::vector<std::string> collective(FrameType type, const std::string& mine);

  [[noreturn]] void fail(const std::string& message, int culprit);
  std::string disconnected(int r) const {
    return "bootstrap: rank " + std::to_string(r) + " disconnected (process died?)";
  }

  TcpOptions o_;
  std::string where_;  // rank 0's address, for messages
  net::Fd listener_;
  std::vector<Peer> peers_;  // rank 0: indexed by rank (entry 0 unused); others: [0] is rank 0
  std::uint32_t seq_ = 0;    // number of the last collective
  std::mutex mu_;
  std::string failed_;  // once the job has failed, every later call throws this again
  int failed_rank_ = -1;
};

}  // namespace compas::comm::detail
