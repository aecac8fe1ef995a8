// The job's output under --tag-output: each rank's pipes (Stream) feed compas-run's stdout and
// stderr (Outlet) line by line with the rank's prefix.
#pragma once

#include <limits.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common.hpp"

namespace compas::run {

// Output waiting for compas-run's stdout or stderr (--tag-output). Written only as far as the
// reader takes it without blocking, so a reader that stops reading (`| sleep 30`) never stalls the
// supervision loop (timeouts, signals, the first failure); above kMaxPendingBytes the ranks' pipes
// are not read until it drains, so the ranks wait on their own writes instead.
constexpr std::size_t kMaxPendingBytes = 4 << 20;
struct Outlet {
  int fd = STDOUT_FILENO;
  std::string pending;
  bool gone = false;  // the reader went away (EPIPE, ...): output is dropped

  // Writes what the reader takes now, PIPE_BUF bytes at a time (a pipe that polls writable
  // takes that many without blocking).
  void flush() {
    std::size_t done = 0;
    while (done < pending.size() && !gone) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 0) <= 0 || !(p.revents & POLLOUT)) break;
      const std::size_t chunk = std::min<std::size_t>(pending.size() - done, PIPE_BUF);
      const ssize_t n = ::write(fd, pending.data() + done, chunk);
      if (n > 0)
        done += static_cast<std::size_t>(n);
      else if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      else
        gone = true;
    }
    pending.erase(0, done);
    if (gone) pending.clear();
  }
  bool full() const { return pending.size() >= kMaxPendingBytes; }
};

// One output pipe of one rank, for --tag-output: complete lines are queued with the prefix.
struct Stream {
  int fd = -1;
  Outlet* target = nullptr;
  std::string prefix;
  std::string partial;

  void take(const char* data, std::size_t n) {
    std::string out;
    std::size_t start = 0;
    while (start < n) {
      const void* nl = std::memchr(data + start, '\n', n - start);
      if (!nl) break;
      const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(nl) - data);
      out += prefix;
      out += partial;
      partial.clear();
      out.append(data + start, end - start + 1);
      start = end + 1;
    }
    partial.append(data + start, n - start);
    if (partial.size() > kMaxLineBytes) {  // a line without end: pass it on in pieces
      out += prefix + partial + "\n";
      partial.clear();
    }
    if (!out.empty() && !target->gone) target->pending += out;
  }
  // At the end of the stream, the last line even if it has no newline.
  void finish() {
    if (!partial.empty() && !target->gone) target->pending += prefix + partial + "\n";
    partial.clear();
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

}  // namespace compas::run
