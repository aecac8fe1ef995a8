#include "compas/report/report.hpp"
#include "compas/report/run_info.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#ifndef COMPAS_VERSION
#define COMPAS_VERSION "0.0.0"
#endif

namespace compas::report {

std::string version() {
  return COMPAS_VERSION;
}

namespace {

json topology_fields(const threads::Topology& topo) {
  json m;
  m["sockets"] = topo.sockets();
  m["numa_nodes"] = topo.numa_nodes();
  m["cores"] = topo.cores();
  m["pus"] = topo.pus();
  json caches = json::array();
  for (const auto& c : topo.caches()) {
    caches.push_back({{"level", c.level},
                      {"type", c.type},
                      {"size_bytes", c.size_bytes},
                      {"line_bytes", c.line_bytes},
                      {"shared_by", c.shared_by},
                      {"count", c.count}});
  }
  m["caches"] = caches;
  m["cpu_model"] = topo.cpu_model();
  m["topology"] = topo.description();
  return m;
}

// "0-3,6": the OS numbers of a topology's PUs.
std::string cpu_list(const threads::Topology& topo) {
  std::vector<int> ids;
  for (const auto& pu : topo.pu_list()) ids.push_back(pu.os_index);
  std::sort(ids.begin(), ids.end());
  std::string out;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out.push_back(',');
    out.append(std::to_string(ids[i]));
    if (j > i) out.append("-").append(std::to_string(ids[j]));
    i = j + 1;
  }
  return out;
}

// What this process was given of the machine: its PUs, cores and sockets.
json slice_fields(const threads::Topology& topo) {
  return {{"sockets", topo.sockets()},
          {"cores", topo.cores()},
          {"pus", topo.pus()},
          {"cpus", cpu_list(topo)}};
}

}  // namespace

json machine_json(const threads::Topology& topo) {
  // The whole machine, whatever slice of it a launcher gave this process; the slice beside it.
  json m;
  if (topo.is_synthetic()) {
    m = topology_fields(topo);
  } else {
    const auto whole = threads::Topology::machine();
    m = topology_fields(whole);
    m["slice"] = slice_fields(topo);
    m["slice"]["whole_machine"] = topo.pus() == whole.pus();
  }
#if defined(__clang__)
  m["compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  m["compiler"] = std::string("gcc ") + __VERSION__;
#else
  m["compiler"] = "unknown";
#endif
  struct utsname u {};
  if (uname(&u) == 0) {
    m["hostname"] = u.nodename;
    m["os"] = std::string(u.sysname) + " " + u.release;
  }
  m["libraries"] = {{"hwloc", threads::hwloc_version()}};
  return m;
}

namespace {

// Writes all of `contents` to `fd`; false with errno set on failure.
bool write_all(int fd, const std::string& contents) {
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool is_stream(mode_t mode) {
  return S_ISFIFO(mode) || S_ISCHR(mode);
}

// A FIFO or a character device (/dev/null, a terminal, /dev/stdout's pipe) is written through,
// never replaced by a file of ours. O_NONBLOCK: a FIFO without a reader fails at once instead
// of blocking the command.
void write_through(const std::string& path, const std::string& contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw std::runtime_error("cannot write '" + path + "': " +
                             (errno == ENXIO ? std::string("a FIFO with no reader")
                                             : std::string(std::strerror(errno))));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !is_stream(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error("cannot write '" + path + "': it changed while being opened");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  bool ok = flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 && write_all(fd, contents);
  int err = errno;
  if (::close(fd) != 0 && ok) ok = false, err = errno;
  if (!ok) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(err));
}

}  // namespace

void replace_file_atomic(const std::string& path, const std::string& contents) {
  // A fresh name next to the target, made with O_EXCL (mkostemp): never another process's file,
  // never a link planted under a predictable name.
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
  auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error(std::string(what) + " '" + path + "': " + std::strerror(err));
  };
  if (::fchmod(fd, 0644) != 0) fail("cannot write");
  if (!write_all(fd, contents)) fail("cannot write");
  if (::fsync(fd) != 0) fail("cannot write");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write '" + path + "': " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot rename onto '" + path + "': " + std::strerror(err));
  }
  // The rename lives in the directory: sync it too, or a crash can bring back the old file.
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

namespace {
int g_data_fd = -1;  // the standard output, kept for the data by claim_stdout_for_data
}  // namespace

void claim_stdout_for_data() {
  if (g_data_fd >= 0) return;
  std::fflush(stdout);
  g_data_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (g_data_fd < 0)
    throw std::runtime_error(std::string("cannot keep stdout: ") + std::strerror(errno));
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

void write_file_atomic(const std::string& path, const std::string& contents) {
  if (path == "-") {
    claim_stdout_for_data();
    if (!write_all(g_data_fd, contents))
      throw std::runtime_error(std::string("cannot write to stdout: ") + std::strerror(errno));
    return;
  }
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && is_stream(st.st_mode)) return write_through(path, contents);
  // A block device or a socket is neither replaced nor written (a directory fails at the rename).
  if (exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    throw std::runtime_error("cannot write '" + path +
                             "': not a regular file, a FIFO or a character device");
  replace_file_atomic(path, contents);
}

namespace {

std::string csv_cell(const json& v) {
  if (v.is_null()) return "";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") != std::string::npos) {
    std::string q = "\"";
    for (char c : s) q += (c == '"') ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  return s;
}

}  // namespace

std::string to_csv(const std::vector<json>& records) {
  std::vector<std::string> columns;
  for (const auto& r : records)
    for (auto it = r.begin(); it != r.end(); ++it)
      if (std::find(columns.begin(), columns.end(), it.key()) == columns.end())
        columns.push_back(it.key());
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + columns[i];
  out += '\n';
  for (const auto& r : records) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (i) out += ',';
      if (r.contains(columns[i])) out += csv_cell(r.at(columns[i]));
    }
    out += '\n';
  }
  return out;
}

json Report::to_json() const {
  json j;
  j["command"] = command_;
  j["version"] = version();
  j["run"] = run_info();
  j["machine"] = machine_;
  j["params"] = params_;
  j["results"] = results_;
  return j;
}

void Report::write_json(const std::string& path) const {
  if (!path.empty()) write_file_atomic(path, to_json().dump(2) + "\n");
}

}  // namespace compas::report
