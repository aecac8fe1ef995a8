#include "net.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

namespace compas::comm::net {

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Clock::time_point deadline_after(double seconds) {
  // Bounded so that huge timeouts cannot overflow the clock arithmetic.
  const double s = std::clamp(seconds, 0.0, 1e8);
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

int ms_until(Clock::time_point t) {
  const auto now = Clock::now();
  if (t <= now) return 0;
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t - now).count();
  return static_cast<int>(std::min<long long>((us + 999) / 1000, 3600 * 1000));
}

std::string errno_text(int err) {
  char buf[256];
  // GNU strerror_r returns the message pointer (possibly not buf).
  return ::strerror_r(err, buf, sizeof buf);
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

void set_cloexec(int fd) {
  const int flags = ::fcntl(fd, F_GETFD);
  if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

bool resolve_ipv4(const std::string& host, in_addr& out) {
  if (host.empty()) return false;
  if (::inet_pton(AF_INET, host.c_str(), &out) == 1) return true;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res) return false;
  out = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  ::freeaddrinfo(res);
  return true;
}

IoStatus send_all(int fd, std::string_view data, Clock::time_point deadline, std::string* error) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      const int r = ::poll(&p, 1, ms_until(deadline));
      if (r == 0) return IoStatus::timeout;
      if (r < 0 && errno != EINTR) {
        if (error) *error = errno_text(errno);
        return IoStatus::closed;
      }
      continue;
    }
    if (error) *error = errno_text(n < 0 ? errno : EPIPE);
    return IoStatus::closed;
  }
  return IoStatus::ok;
}

bool send_now(int fd, std::string_view data) {
  const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  return n == static_cast<ssize_t>(data.size());
}

IoStatus read_available(int fd, std::string& in, std::size_t max_bytes) {
  char buf[65536];
  std::size_t total = 0;
  while (total < max_bytes) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      in.append(buf, static_cast<std::size_t>(n));
      total += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) return IoStatus::closed;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return IoStatus::ok;
    return IoStatus::closed;  // ECONNRESET and friends: the peer is gone
  }
  return IoStatus::ok;
}

void drain(int fd) {
  char buf[4096];
  for (int i = 0; i < 64; ++i) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0 && !(n < 0 && errno == EINTR)) return;
  }
}

}  // namespace compas::comm::net
