#include "common.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>

#include "compas/threads/placement.hpp"

namespace compas::app {

void add_output_flags(CLI::App& cmd, OutputFlags& out) {
  cmd.add_option("--json", out.json, "write results as JSON to FILE")
      ->envname("COMPAS_JSON")
      ->type_name("FILE");
  cmd.add_option("--csv", out.csv, "write results as CSV to FILE")
      ->envname("COMPAS_CSV")
      ->type_name("FILE");
  cmd.add_flag("--quiet", out.quiet, "print no table")->envname("COMPAS_QUIET");
}

std::vector<int> parse_thread_list(const std::string& flag, const std::string& text) {
  std::vector<int> cpus;
  try {
    cpus = threads::parse_cpu_list(text);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(flag + " '" + text +
                                "': expected thread counts like 4, 1,2,4 or 1-8");
  }
  for (int t : cpus)
    if (t < 1 || t > 4096)
      throw std::invalid_argument(flag + " '" + text + "': thread counts must be in 1..4096");
  return cpus;
}

namespace {

void check_writable(const char* flag, const std::string& path) {
  if (path.empty()) return;
  const auto slash = path.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw std::invalid_argument(std::string(flag) + " '" + path + "': directory '" + dir +
                                "' does not exist or is not writable");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw std::invalid_argument(std::string(flag) + " '" + path + "' is a directory, not a file");
}

}  // namespace

void check_outputs(const OutputFlags& out) {
  check_writable("--json", out.json);
  check_writable("--csv", out.csv);
}

void write_outputs(const perf::Report& report, const OutputFlags& out) {
  report.write_json(out.json);
  report.write_csv(out.csv);
}

threads::Topology load_topology(const std::string& synthetic) {
  return synthetic.empty() ? threads::Topology::host() : threads::Topology::synthetic(synthetic);
}

}  // namespace compas::app
