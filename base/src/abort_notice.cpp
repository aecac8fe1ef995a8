// The notice of an abort to the launcher: the pipe from COMPAS_ABORT_FD, and the one write.
#include "compas/base/abort_notice.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>

#include "compas/base/env.hpp"
#include "compas/base/number.hpp"

namespace compas::base {

namespace {

std::atomic<int> g_pipe{-1};

// A descriptor open for writing on a pipe.
bool writable_pipe(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return false;
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && (flags & O_ACCMODE) != O_RDONLY;
}

}  // namespace

void adopt_abort_pipe() {
  const auto text = env_text(vars::abort_fd);
  if (!text) return;
  const auto fd = parse_integer(*text, 0, INT_MAX);
  if (!fd || !writable_pipe(static_cast<int>(*fd)))
    env_reject(vars::abort_fd.name, *text, vars::abort_fd.allowed());
  ::fcntl(static_cast<int>(*fd), F_SETFD, FD_CLOEXEC);
  g_pipe.store(static_cast<int>(*fd));
}

void tell_launcher_of_abort(int rank, int status) noexcept {
  const int fd = g_pipe.load();
  if (fd < 0) return;
  const AbortNotice notice{rank, status};
  while (::write(fd, &notice, sizeof notice) < 0 && errno == EINTR) {
  }
}

}  // namespace compas::base
