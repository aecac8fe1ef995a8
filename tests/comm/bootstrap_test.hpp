// What the bootstrap tests share: a scoped environment, a listening rendezvous socket, raw
// connections to it, and tcp jobs whose ranks are threads of the test.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "compas/comm/bootstrap.hpp"
#include "compas/comm/comm.hpp"
#include "handshake.hpp"
#include "ucx_tls.hpp"

namespace bootstrap_test {

using compas::comm::Bootstrap;
using compas::comm::BootstrapError;
using compas::comm::TcpOptions;
namespace wire = compas::comm::wire;
using Clock = std::chrono::steady_clock;

// Clears every variable the bootstrap looks at, sets the given ones, and restores all on exit.
using Vars = std::map<std::string, std::string>;

class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::string>& set = {}) {
    for (const char* v :
         {"COMPAS_RANK", "COMPAS_SIZE", "COMPAS_RENDEZVOUS", "COMPAS_JOB_TOKEN", "COMPAS_TIMEOUT",
          "COMPAS_RENDEZVOUS_FD", "COMPAS_BOOTSTRAP_MAX_FRAME", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
          "PMIX_RANK", "SLURM_NTASKS", "SLURM_PROCID"}) {
      if (const char* old = std::getenv(v))
        saved_[v] = old;
      else
        saved_[v] = std::nullopt;
      ::unsetenv(v);
    }
    for (const auto& [k, v] : set) {
      if (!saved_.count(k)) {
        const char* old = std::getenv(k.c_str());
        saved_[k] = old ? std::optional<std::string>(old) : std::nullopt;
      }
      ::setenv(k.c_str(), v.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [k, v] : saved_) {
      if (v)
        ::setenv(k.c_str(), v->c_str(), 1);
      else
        ::unsetenv(k.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

// A socket listening on 127.0.0.1 at a port the kernel chose.
struct Listener {
  int fd = -1;
  int port = 0;
  explicit Listener(int backlog = 512) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
        ::listen(fd, backlog) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
    port = ntohs(sa.sin_port);
  }
};

// A job token of the length the bootstrap asks for (compas-run makes 32 random hex digits).
const std::string kToken = "0123456789abcdef-test-token";

inline TcpOptions options(int rank, int size, int port, double timeout_s = 10,
                          const std::string& token = kToken) {
  TcpOptions o;
  o.rank = rank;
  o.size = size;
  o.port = port;
  o.token = token;
  o.timeout_s = timeout_s;
  return o;
}

// Runs `body` on `size` ranks, one thread each; rank 0 adopts a fresh listener. Returns each
// rank's exception message ("" when it succeeded).
inline std::vector<std::string> run_job(int size, const std::function<void(Bootstrap&)>& body,
                                        double timeout_s = 10,
                                        std::function<void(int port)> before = {}) {
  Listener l;
  if (before) before(l.port);
  std::vector<std::string> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      try {
        auto o = options(r, size, l.port, timeout_s);
        if (r == 0) o.listen_fd = l.fd;
        auto bs = Bootstrap::tcp(o);
        body(*bs);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

inline int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads from `fd` until the peer closes or `seconds` pass; returns what came, and whether it
// closed.
inline std::pair<std::string, bool> read_until_closed(int fd, double seconds) {
  std::string got;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return {got, true};
    got.append(buf, static_cast<std::size_t>(n));
  }
  return {got, false};
}

inline int connect_nonblocking(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  (void)::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  return fd;
}

// Connections waiting in `listener`'s accept queue (for a listening socket Linux reports the
// queue's length as tcpi_unacked).
inline int accept_queue_length(int listener) {
  tcp_info ti{};
  socklen_t len = sizeof ti;
  if (::getsockopt(listener, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return -1;
  return static_cast<int>(ti.tcpi_unacked);
}

inline bool wait_for_queue(int listener, int n, double seconds = 10) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  while (accept_queue_length(listener) < n)
    if (Clock::now() > deadline) return false;
  return true;
}

// A tcp job whose ranks are threads: join(r) starts rank r; finish() waits for all and returns
// each rank's exception message ("" when it succeeded). Every rank enters one barrier.
struct ThreadJob {
  ThreadJob(Listener& listener, int ranks, double timeout)
      : l(listener), size(ranks), timeout_s(timeout), errors(static_cast<std::size_t>(ranks)) {}
  Listener& l;
  int size;
  double timeout_s;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  void join(int r) {
    threads.emplace_back([this, r] {
      try {
        auto o = options(r, size, l.port, timeout_s);
        if (r == 0) o.listen_fd = l.fd;
        Bootstrap::tcp(o)->barrier();
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  std::vector<std::string> finish() {
    for (auto& t : threads) t.join();
    return errors;
  }
};

// A local user floods the rendezvous port with 2000 connections that never speak while the job
// starts, more than the 256 rank 0 keeps waiting for a HELLO. The ranks connect between the
// first and the second thousand, and rank 0 comes last, so it finds them all queued at once.
}  // namespace bootstrap_test
