// The job's output under --tag-output: each rank's pipes (Stream) feed compas-run's stdout and
// stderr (Outlet) line by line with the rank's prefix; compas-run's own messages go to the same
// stderr Outlet.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>

#include "common.hpp"

namespace compas::run {

// Output waiting for compas-run's stdout or stderr: the ranks' lines under --tag-output and, on
// stderr, compas-run's own messages (say). Written only as far as the reader takes it without
// blocking, so a reader that stops reading (`| sleep 30`) never stalls the supervision loop
// (timeouts, signals, the first failure); above kMaxPendingBytes the ranks' pipes are not read
// until it drains, so the ranks wait on their own writes instead. A pipe is written through a
// non-blocking description of its own (reopened from /proc/self/fd): the ranks, which may write
// to the same pipe, can fill it between a poll that saw room and our write.
constexpr std::size_t kMaxPendingBytes = 4 << 20;
// Room for compas-run's messages beyond that; past it they are dropped and counted.
constexpr std::size_t kMessageRoom = 64 << 10;
class Outlet {
 public:
  explicit Outlet(int fd);
  Outlet(const Outlet&) = delete;
  Outlet& operator=(const Outlet&) = delete;
  ~Outlet();

  int fd() const { return fd_; }
  bool gone() const { return gone_; }
  bool full() const { return pending_.size() >= kMaxPendingBytes; }
  bool empty() const { return pending_.empty(); }
  std::size_t pending() const { return pending_.size(); }
  // Queues a rank's output (dropped once the reader is gone).
  void add(const std::string& text) {
    if (!gone_) pending_ += text;
  }
  // Queues one of compas-run's messages, or counts it dropped when there is no room.
  void add_message(const std::string& line);
  // Writes what the reader takes now.
  void flush();
  // Writes what the reader takes until `until`, then gives up on the rest (the job is over).
  void flush_until(std::chrono::steady_clock::time_point until);

 private:
  bool write_some(const char* data, std::size_t n, std::size_t& done);
  int fd_;
  bool own_ = false;     // fd_ is a description of our own, non-blocking
  bool socket_ = false;  // written with send(MSG_DONTWAIT)
  std::string pending_;
  bool gone_ = false;  // the reader went away (EPIPE, ...): output is dropped
  std::size_t dropped_ = 0;
};

// compas-run's stdout and stderr.
Outlet& stdout_outlet();
Outlet& stderr_outlet();

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
    if (!out.empty()) target->add(out);
  }
  // At the end of the stream, the last line even if it has no newline.
  void finish() {
    if (!partial.empty()) target->add(prefix + partial + "\n");
    partial.clear();
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

}  // namespace compas::run
