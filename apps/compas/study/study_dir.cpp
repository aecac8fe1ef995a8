#include "study_dir.hpp"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "compas/report/report.hpp"
#include "../read_whole.hpp"

namespace compas::app {

namespace {

namespace fs = std::filesystem;

constexpr const char* kMarker = ".compas-study";
// The marker's first line: "compas study VERSION" (the first marked studies wrote no version).
constexpr const char* kMarkerHead = "compas study";

// lstat's answer: -1 when nothing is there.
int mode_at(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? static_cast<int>(st.st_mode) : -1;
}

bool is_regular_at(const fs::path& p) {
  const int m = mode_at(p);
  return m >= 0 && S_ISREG(static_cast<mode_t>(m));
}

bool is_dir_at(const fs::path& p) {
  const int m = mode_at(p);
  return m >= 0 && S_ISDIR(static_cast<mode_t>(m));
}

// A name the study writes: NAME, or SUB/NAME with SUB one of its folders. Anything else in a
// manifest (a prepared one may say "../x") is ignored.
bool is_study_name(const std::string& rel) {
  const auto slash = rel.find('/');
  const std::string sub = slash == std::string::npos ? "" : rel.substr(0, slash);
  const std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  const bool sub_ok =
      sub.empty() || sub == "raw" || sub == "logs" || sub == "plots" || sub == "extrap";
  return sub_ok && !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string::npos && name != kMarker;
}

std::string marker_problem(const fs::path& dir, const std::string& what) {
  return "--out '" + dir.string() + "': its " + kMarker + " " + what +
         ", not a study's marker: refused";
}

bool is_marker_head(const std::string& line) {
  const std::string head = kMarkerHead;
  return line == head || (line.size() > head.size() + 1 && line.rfind(head + " ", 0) == 0);
}

// The manifest, or nullopt when the directory has no marker.
std::optional<std::set<std::string>> read_manifest(const fs::path& dir) {
  const fs::path marker = dir / kMarker;
  const int m = mode_at(marker);
  if (m < 0) return std::nullopt;
  if (!S_ISREG(static_cast<mode_t>(m)))
    throw std::invalid_argument(marker_problem(dir, "is " + file_kind(static_cast<mode_t>(m))));
  std::string text;
  try {
    text = read_whole(marker.string(), kStudyFileLimit, Links::refuse);
  } catch (const UnreadableFile& e) {
    throw std::invalid_argument(
        marker_problem(dir, std::string("cannot be read (") + e.what() + ")"));
  }
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || !is_marker_head(line))
    throw std::invalid_argument(
        marker_problem(dir, "does not begin with '" + std::string(kMarkerHead) + "'"));
  std::set<std::string> files;
  while (std::getline(in, line))
    if (is_study_name(line)) files.insert(line);
  return files;
}

void save_manifest(const fs::path& dir, const std::set<std::string>& files) {
  std::string text = std::string(kMarkerHead) + " " + report::version() + "\n";
  for (const auto& f : files) text += f + "\n";
  report::replace_file_atomic((dir / kMarker).string(), text);
}

std::set<std::string> manifest_of(const fs::path& dir) {
  auto files = read_manifest(dir);
  if (!files) throw std::runtime_error(dir.string() + " has no " + kMarker);
  return *files;
}

// Removes dir/rel without following a link: neither the name itself nor its folder.
void unlink_study_file(const fs::path& dir, const std::string& rel) {
  const auto slash = rel.find('/');
  if (slash != std::string::npos && !is_dir_at(dir / rel.substr(0, slash))) return;
  if (::unlink((dir / rel).c_str()) != 0 && errno != ENOENT)
    throw std::runtime_error("cannot remove " + (dir / rel).string() + ": " + std::strerror(errno));
}

void own_study_file(const fs::path& dir, const std::string& rel) {
  auto files = manifest_of(dir);
  if (files.count(rel)) return;
  if (mode_at(dir / rel) >= 0)
    throw std::runtime_error((dir / rel).string() +
                             " is there and the study did not write it: move it away, or give "
                             "--out another directory");
  files.insert(rel);
  save_manifest(dir, files);
}

// A directory with files and no marker: a study of a compas from before the marker, or a
// directory of someone else's that holds files of the names a study writes. Neither is taken.
[[noreturn]] void refuse_unmarked(const fs::path& dir) {
  const std::string out = dir.string();
  if (is_regular_at(dir / "runs.jsonl"))
    throw std::invalid_argument(
        "--out '" + out + "' holds runs.jsonl but no " + kMarker +
        " marker, so no study of this compas wrote it (it may be a study of a compas from before "
        "the marker, or someone else's files): nothing in it is touched. To run the study, give "
        "--out a new or empty directory; an older study's files stay readable there (compas "
        "compare reads its study.json)");
  throw std::invalid_argument("--out '" + out +
                              "' is not a compas study directory (it has files and no " + kMarker +
                              "): a study writes only into a new or empty directory, or its own");
}

// The directory the study would write into, or the nearest existing one above it (where it
// would be created), must take new files: a read-only file system or a directory of someone
// else's is bad input, said before anything runs.
void refuse_unwritable(const fs::path& dir) {
  std::error_code ec;
  fs::path at = fs::absolute(dir, ec);
  while (!at.empty() && !fs::exists(at, ec) && at != at.parent_path()) at = at.parent_path();
  if (::access(at.c_str(), W_OK | X_OK) == 0) return;
  const int err = errno;
  throw std::invalid_argument("--out '" + dir.string() + "': " +
                              (at == fs::absolute(dir, ec)
                                   ? std::string("the directory")
                                   : "'" + at.string() + "', where it would be made,") +
                              " takes no new files (" + std::strerror(err) + ")");
}

}  // namespace

void check_study_dir(const std::string& out) {
  if (out.empty()) throw std::invalid_argument("--out is empty: give the study's directory");
  const fs::path dir = out;
  std::error_code ec;
  if (fs::weakly_canonical(dir, ec) == "/")
    throw std::invalid_argument("--out '" + out +
                                "' is the root directory: a study needs a directory of its own");
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec))
      throw std::invalid_argument("--out '" + out + "' is not a directory");
    if (!read_manifest(dir) && !(fs::is_empty(dir, ec) && !ec)) refuse_unmarked(dir);
  }
  refuse_unwritable(dir);
}

void claim_study_dir(const std::string& out) {
  check_study_dir(out);
  const fs::path dir = out;
  std::error_code ec;
  const std::set<std::string> fresh = {"runs.jsonl"};
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec)
      throw std::invalid_argument("--out '" + out +
                                  "' cannot be created as a directory: " + ec.message());
    save_manifest(dir, fresh);
  } else if (!fs::is_directory(dir, ec)) {
    throw std::invalid_argument("--out '" + out + "' is not a directory");
  } else if (read_manifest(dir)) {
    // A study's own: its manifest says which files it wrote, and only those are its.
  } else if (fs::is_empty(dir, ec) && !ec) {
    save_manifest(dir, fresh);
  } else {
    refuse_unmarked(dir);
  }
  study_subdir(dir, "raw");
  study_subdir(dir, "logs");
}

std::set<std::string> study_files(const fs::path& dir) {
  return manifest_of(dir);
}

void prepare_study_file(const fs::path& dir, const std::string& rel) {
  own_study_file(dir, rel);
  unlink_study_file(dir, rel);
}

void write_study_file(const fs::path& dir, const std::string& rel, const std::string& contents) {
  own_study_file(dir, rel);
  report::replace_file_atomic((dir / rel).string(), contents);
}

void remove_study_files(const fs::path& dir, const std::string& prefix, const std::string& suffix) {
  auto files = manifest_of(dir);
  for (auto it = files.begin(); it != files.end();) {
    const std::string& f = *it;
    const bool match = f.rfind(prefix, 0) == 0 && f.size() >= suffix.size() &&
                       f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0;
    if (!match) {
      ++it;
      continue;
    }
    unlink_study_file(dir, f);
    it = files.erase(it);
  }
  save_manifest(dir, files);
}

void take_study_plots(const fs::path& dir, const fs::path& drawn) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(drawn, ec)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".png" || !is_regular_at(e.path())) continue;
    const std::string rel = "plots/" + name;
    try {
      own_study_file(dir, rel);
    } catch (const std::runtime_error& err) {
      fmt::print(stderr, "compas study: plot {} left out: {}\n", name, err.what());
      continue;
    }
    if (::rename(e.path().c_str(), (dir / rel).c_str()) != 0)
      fmt::print(stderr, "compas study: plot {} left out: {}\n", name, std::strerror(errno));
  }
  fs::remove_all(drawn, ec);
}

void study_subdir(const fs::path& dir, const std::string& sub) {
  const fs::path p = dir / sub;
  if (mode_at(p) < 0 && ::mkdir(p.c_str(), 0755) != 0 && errno != EEXIST)
    throw std::invalid_argument("--out '" + dir.string() + "': cannot make " + sub +
                                "/: " + std::strerror(errno));
  const int m = mode_at(p);
  if (m < 0 || !S_ISDIR(static_cast<mode_t>(m)))
    throw std::invalid_argument(
        "--out '" + dir.string() + "': " + sub + " is " +
        (m < 0 ? std::string("missing") : file_kind(static_cast<mode_t>(m))) +
        ", not a directory: refused");
}

}  // namespace compas::app
