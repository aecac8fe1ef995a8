// Internal: file descriptors, non-blocking sockets and deadline-bounded I/O for the tcp
// bootstrap. Every wait is a poll() with a timeout; nothing here blocks without one.
#pragma once

#include <netinet/in.h>

#include <chrono>
#include <string>
#include <string_view>
#include <utility>

namespace compas::comm::net {

using Clock = std::chrono::steady_clock;

// Owns one file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

Clock::time_point deadline_after(double seconds);
// Milliseconds from now to `t` for poll(): 0 when past, rounded up, at most 1 hour.
int ms_until(Clock::time_point t);

std::string errno_text(int err);
void set_nonblocking(int fd);
void set_cloexec(int fd);
void set_nodelay(int fd);

// "1.2.3.4" or a host name resolved to IPv4; false when it cannot be resolved.
bool resolve_ipv4(const std::string& host, in_addr& out);

enum class IoStatus {
  ok,       // done
  closed,   // the peer is gone (EOF, EPIPE, ECONNRESET, ...)
  timeout,  // the deadline passed first
};

// Sends all of `data` on a non-blocking socket, waiting for room until `deadline`. Never raises
// SIGPIPE. `error` receives the system error text when closed.
IoStatus send_all(int fd, std::string_view data, Clock::time_point deadline,
                  std::string* error = nullptr);
// One send attempt of a small frame that must not delay the caller: true when all of it went.
bool send_now(int fd, std::string_view data);

// Appends whatever can be read now (up to `max_bytes`) to `in`. Returns closed when the peer has
// closed (bytes read before the end are still appended), ok otherwise (also when nothing was
// there).
IoStatus read_available(int fd, std::string& in, std::size_t max_bytes = std::size_t{4} << 20);

// Reads and discards pending input, so a close() that follows sends FIN rather than RST.
void drain(int fd);

}  // namespace compas::comm::net
