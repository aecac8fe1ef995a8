// Reading a whole file the CLI was pointed at, or one in a study's directory: a regular file only
// (a FIFO would block, a device may never end), up to a size limit, and, for a directory others
// may have prepared, never through a symbolic link.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace compas::app {

// Why a file could not be read, without its path: "not a regular file (a FIFO)".
struct UnreadableFile : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Links { follow, refuse };

// The contents of `path`, at most `limit` bytes. Throws UnreadableFile when it cannot be opened,
// is not a regular file, is larger than `limit`, or (Links::refuse) is a symbolic link.
std::string read_whole(const std::string& path, std::uint64_t limit, Links links);

// "a FIFO", "a character device", "a directory", ... for a file's st_mode.
std::string file_kind(mode_t mode);

}  // namespace compas::app
