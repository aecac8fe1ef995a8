// The pipe of the ranks' abort notices, read without waiting.
#include "abort_notices.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace compas::run {

AbortNotices::~AbortNotices() {
  close_writing_end();
  if (read_fd_ >= 0) ::close(read_fd_);
}

bool AbortNotices::open() {
  int fds[2] = {-1, -1};
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  ::fcntl(read_fd_, F_SETFL, ::fcntl(read_fd_, F_GETFL) | O_NONBLOCK);
  return true;
}

void AbortNotices::close_writing_end() {
  if (write_fd_ >= 0) ::close(write_fd_);
  write_fd_ = -1;
}

std::optional<base::AbortNotice> AbortNotices::first(int ranks) {
  base::AbortNotice n;
  while (read_fd_ >= 0) {
    const ssize_t got = ::read(read_fd_, &n, sizeof n);
    if (got < 0 && errno == EINTR) continue;
    if (got != static_cast<ssize_t>(sizeof n)) break;  // none left (EAGAIN), or EOF
    if (!first_ && n.rank >= 0 && n.rank < ranks && n.status >= 1 && n.status <= 255) first_ = n;
  }
  return first_;
}

}  // namespace compas::run
