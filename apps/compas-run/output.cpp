#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <fmt/core.h>
#include <algorithm>
#include <cerrno>

#include "output.hpp"

namespace compas::run {

Outlet::Outlet(int fd) : fd_(fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return;
  socket_ = S_ISSOCK(st.st_mode);
  if (!S_ISFIFO(st.st_mode)) return;
  // Opening a pipe through /proc gives a new description of it, whose O_NONBLOCK is ours alone
  // (setting it on fd itself would change it for whoever shares the description).
  const int own =
      ::open(fmt::format("/proc/self/fd/{}", fd).c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (own >= 0) {
    fd_ = own;
    own_ = true;
  }
}

Outlet::~Outlet() {
  if (own_) ::close(fd_);
}

void Outlet::add_message(const std::string& line) {
  if (gone_) return;
  if (pending_.size() + line.size() > kMaxPendingBytes + kMessageRoom) {
    ++dropped_;
    return;
  }
  pending_ += line;
  flush();
}

// Writes from data as far as the reader takes it without blocking; false once it takes no more.
bool Outlet::write_some(const char* data, std::size_t n, std::size_t& done) {
  if (!own_) {  // a description others share: a pipe that polls writable takes PIPE_BUF bytes
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, 0) <= 0 || !(p.revents & POLLOUT)) return false;
    n = std::min<std::size_t>(n, PIPE_BUF);
  }
  const ssize_t got =
      socket_ ? ::send(fd_, data, n, MSG_DONTWAIT | MSG_NOSIGNAL) : ::write(fd_, data, n);
  if (got > 0) {
    done += static_cast<std::size_t>(got);
    return true;
  }
  if (got < 0 && errno == EINTR) return true;
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
  gone_ = true;  // EPIPE, ...: our own output is gone; the job goes on
  return false;
}

void Outlet::flush() {
  std::size_t done = 0;
  while (done < pending_.size() && !gone_ &&
         write_some(pending_.data() + done, pending_.size() - done, done)) {
  }
  pending_.erase(0, done);
  if (gone_) pending_.clear();
  if (dropped_ && !gone_ && pending_.size() < kMaxPendingBytes) {
    pending_ += fmt::format("compas-run: {} message{} dropped: stderr was not read\n", dropped_,
                            dropped_ == 1 ? " was" : "s were");
    dropped_ = 0;
  }
}

void Outlet::flush_until(std::chrono::steady_clock::time_point until) {
  for (flush(); !pending_.empty() && !gone_; flush()) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        until - std::chrono::steady_clock::now())
                        .count();
    if (ms <= 0) break;
    pollfd p{fd_, POLLOUT, 0};
    ::poll(&p, 1, static_cast<int>(std::min<long long>(ms, 100)));
  }
}

Outlet& stdout_outlet() {
  static Outlet out(STDOUT_FILENO);
  return out;
}

Outlet& stderr_outlet() {
  static Outlet err(STDERR_FILENO);
  return err;
}

}  // namespace compas::run
