#include "common.hpp"

#include <poll.h>
#include <unistd.h>

#include <fmt/core.h>
#include <cerrno>
#include <cstring>

namespace compas::run {

std::string signal_text(int sig) {
  const char* name = ::strsignal(sig);
  return fmt::format("signal {} ({})", sig, name ? name : "unknown");
}

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
    } else {
      return;  // our own output is gone (EPIPE, ...): drop it, keep the job going
    }
  }
}

void say(const std::string& line) {
  write_all(STDERR_FILENO, "compas-run: " + line + "\n");
}

std::string plural(int n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace compas::run
