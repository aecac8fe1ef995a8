#include "study_runs.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../read_json.hpp"
#include "../read_whole.hpp"
#include "study_dir.hpp"

namespace compas::app {

namespace {

using json = report::json;

bool has_field(const json& j, const char* key, bool (json::*check)() const noexcept) {
  return j.contains(key) && (j[key].*check)();
}

// "failed": true needs what the report shows of a failure: its reason and the end of its log.
bool failure_fields_whole(const json& j) {
  if (!j.contains("failed")) return true;
  if (!j["failed"].is_boolean()) return false;
  return !j["failed"].get<bool>() ||
         (has_field(j, "reason", &json::is_string) && has_field(j, "log_tail", &json::is_string));
}

// A record as append_run writes it: anything else (a line torn by a kill mid-write, a line edited
// by hand into other types) counts as a run not finished, said once per line, and is run again.
bool is_run_record(const json& j) {
  return j.is_object() && has_field(j, "id", &json::is_string) &&
         has_field(j, "title", &json::is_string) && has_field(j, "kind", &json::is_string) &&
         has_field(j, "exit", &json::is_number_integer) &&
         has_field(j, "seconds", &json::is_number) && has_field(j, "json", &json::is_string) &&
         failure_fields_whole(j);
}

// A line of runs.jsonl, or null when it is not JSON within the reader's bounds.
json parsed_line(const std::string& line) {
  try {
    return parse_bounded_json(line);
  } catch (const BadJson&) {
    return nullptr;
  }
}

bool is_failure(const json& rec) {
  return rec.contains("failed") && rec["failed"].is_boolean() && rec["failed"].get<bool>();
}

}  // namespace

void RunBook::record(const json& rec) {
  const std::string id = rec["id"].get<std::string>();
  if (is_failure(rec)) {
    done.erase(id);
    failed[id] = rec;
  } else {
    failed.erase(id);
    done[id] = rec;
  }
}

RunBook read_runs(const std::filesystem::path& file) {
  RunBook book;
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) return book;  // nothing done yet
  std::string text;
  try {
    text = read_whole(file.string(), kStudyFileLimit, Links::refuse);
  } catch (const UnreadableFile& e) {
    throw std::invalid_argument(file.string() + ": " + e.what());
  }
  std::istringstream in(text);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty()) continue;
    const json j = parsed_line(line);
    if (!is_run_record(j)) {
      fmt::print(stderr,
                 "compas study: {} line {} is not a whole run record: that run runs again\n",
                 file.string(), number);
      continue;
    }
    book.record(j);
  }
  return book;
}

namespace {

// Whether the file's last line has no newline: torn by a kill mid-write.
bool ends_torn(int fd) {
  struct stat st {};
  char last = '\n';
  return ::fstat(fd, &st) == 0 && st.st_size > 0 && ::pread(fd, &last, 1, st.st_size - 1) == 1 &&
         last != '\n';
}

}  // namespace

// After a torn last line the record starts on a line of its own, so the torn line cannot
// swallow it.
void append_run(const std::filesystem::path& file, const json& record) {
  const int fd =
      ::open(file.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0)
    throw std::runtime_error("cannot append to " + file.string() + ": " + std::strerror(errno));
  // A file of its own only: not a FIFO or a device, not a hard link to a file elsewhere.
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    ::close(fd);
    throw std::runtime_error("cannot append to " + file.string() +
                             ": not a regular file with one link (refused)");
  }
  std::string line = ends_torn(fd) ? "\n" : "";
  line += record.dump();
  line += '\n';
  const ssize_t n = ::write(fd, line.data(), line.size());
  ::fsync(fd);
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size()))
    throw std::runtime_error("short write appending to " + file.string());
}

std::string log_tail(const std::filesystem::path& log, std::size_t max_lines,
                     std::size_t max_bytes) {
  // Never through a link, never a FIFO or a device.
  const int fd = ::open(log.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return "";
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return "";
  }
  const off_t from = std::max<off_t>(0, st.st_size - static_cast<off_t>(max_bytes));
  std::string text(static_cast<std::size_t>(st.st_size - from), '\0');
  const ssize_t got = ::pread(fd, text.data(), text.size(), from);
  ::close(fd);
  text.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  // A line begun before the window is left out, unless it is all there is.
  const std::size_t first_end = text.find('\n');
  if (from > 0 && first_end != std::string::npos) text.erase(0, first_end + 1);
  std::vector<std::string> lines;
  std::istringstream split(text);
  for (std::string line; std::getline(split, line);) lines.push_back(line);
  const std::size_t skip = lines.size() > max_lines ? lines.size() - max_lines : 0;
  std::string tail;
  for (std::size_t i = skip; i < lines.size(); ++i) tail += lines[i] + "\n";
  return tail;
}

std::string raw_damage(const std::filesystem::path& dir, const std::string& id) {
  const std::string rel = "raw/" + id + ".json";
  const std::filesystem::path file = dir / rel;
  // Every run of the plan writes one: a finished run without it (deleted, or a launcher that
  // exited 0 without starting the run) is not done.
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) return rel + " is missing";
  std::string why;
  try {
    const json j = read_json_file(file.string(), Links::refuse);
    if (!j.is_object() || !j.contains("results") || !j["results"].is_array())
      why = "not a compas report (no \"results\" list)";
  } catch (const BadJson& e) {
    why = e.what();
  } catch (const UnreadableFile& e) {
    why = e.what();
  }
  return why.empty() ? why : rel + " is damaged: " + why;
}

std::filesystem::path log_path(const std::filesystem::path& dir, const std::string& id) {
  return dir / "logs" / (id + ".log");
}

}  // namespace compas::app
