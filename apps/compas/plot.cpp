#include "plot.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace compas::app {

namespace {

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

std::string exe_dir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<std::size_t>(n));
  return p.substr(0, p.find_last_of('/'));
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

void add_plot_flag(CLI::App& cmd, std::string& dir) {
  cmd.add_option("--plot", dir, "write PNG plots (and the JSON they come from) into DIR")
      ->type_name("DIR");
}

std::string plot_script_path() {
  const std::string installed = exe_dir() + "/../share/compas/plot.py";
  if (exists(installed)) return installed;
#ifdef COMPAS_SOURCE_PLOT_SCRIPT
  if (exists(COMPAS_SOURCE_PLOT_SCRIPT)) return COMPAS_SOURCE_PLOT_SCRIPT;
#endif
  return "";
}

void check_plot_dir(const std::string& dir) {
  if (dir.empty()) return;
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode) || ::access(dir.c_str(), W_OK | X_OK) != 0)
      throw std::invalid_argument("--plot '" + dir + "': not a writable directory");
    return;
  }
  const auto slash = dir.find_last_of('/');
  const std::string parent =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : dir.substr(0, slash));
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    throw std::invalid_argument("--plot '" + dir + "': cannot create it in '" + parent + "'");
}

std::string plot_python() {
  // The python3 first on PATH may be a private one without matplotlib; the distribution's has it
  // when python3-matplotlib is installed.
  for (const char* candidate : {"python3", "/usr/bin/python3"}) {
    const std::string probe = std::string(candidate) + " -c 'import matplotlib' >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return candidate;
  }
  return "";
}

bool plot_report(const report::Report& report, const std::string& dir) {
  if (dir.empty()) return false;
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw std::invalid_argument("--plot '" + dir + "': cannot create the directory");
  const auto j = report.to_json();
  const std::string json_path = dir + "/" + j["command"].get<std::string>() + ".json";
  report.write_json(json_path);
  const std::string script = plot_script_path();
  if (script.empty()) {
    std::fprintf(stderr, "compas: plot.py not found; data written to %s\n", json_path.c_str());
    return false;
  }
  const std::string python = plot_python();
  if (python.empty()) {
    std::fprintf(stderr,
                 "compas: no plots: python3 with matplotlib is needed "
                 "(Debian: apt-get install python3-matplotlib); data written to %s\n",
                 json_path.c_str());
    return false;
  }
  const std::string cmd = python + " " + shell_quote(script) + " " + shell_quote(json_path) +
                          " --out " + shell_quote(dir);
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    std::fprintf(stderr, "compas: plot.py failed on %s\n", json_path.c_str());
    return false;
  }
  return true;
}

}  // namespace compas::app
