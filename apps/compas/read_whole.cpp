#include "read_whole.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace compas::app {

std::string file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "of an unknown kind";
}

namespace {

std::string too_large(std::uint64_t limit, const std::string& size) {
  return fmt::format("larger than the limit of {} bytes ({})", limit, size);
}

// Reads up to limit + 1 bytes: a file that grew past the limit since fstat is refused too.
std::string read_up_to(int fd, std::uint64_t limit) {
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UnreadableFile(std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) return text;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > limit) throw UnreadableFile(too_large(limit, "and growing"));
  }
}

}  // namespace

std::string read_whole(const std::string& path, std::uint64_t limit, Links links) {
  // O_NONBLOCK: opening a FIFO does not wait for a writer (it is refused below).
  const int flags =
      O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (links == Links::refuse ? O_NOFOLLOW : 0);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0 && errno == ELOOP && links == Links::refuse)
    throw UnreadableFile("a symbolic link, not followed here");
  if (fd < 0) throw UnreadableFile(std::string("cannot read: ") + std::strerror(errno));
  struct stat st {};
  std::string problem;
  if (::fstat(fd, &st) != 0)
    problem = std::string("cannot read: ") + std::strerror(errno);
  else if (!S_ISREG(st.st_mode))
    problem = "not a regular file (" + file_kind(st.st_mode) + ")";
  else if (static_cast<std::uint64_t>(st.st_size) > limit)
    problem = too_large(limit, fmt::format("{} bytes", st.st_size));
  if (!problem.empty()) {
    ::close(fd);
    throw UnreadableFile(problem);
  }
  try {
    std::string text = read_up_to(fd, limit);
    ::close(fd);
    return text;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

}  // namespace compas::app
