#include "common.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>

#include <fmt/core.h>

#include <cctype>
#include <cmath>
#include <stdexcept>

#include "compas/threads/placement.hpp"

namespace compas::app {

void add_output_flags(CLI::App& cmd, OutputFlags& out) {
  cmd.add_option("--json", out.json,
                 "write results as JSON to FILE (- : stdout, the table then on stderr)")
      ->type_name("FILE");
  cmd.add_option("--csv", out.csv,
                 "write results as CSV to FILE (- : stdout, the table then on stderr)")
      ->type_name("FILE");
  cmd.add_flag("--quiet", out.quiet, "print no table");
  // Internal (compas study gives it to its runs): no help line.
  cmd.add_flag("--replace-outputs", out.replace,
               "write --json and --csv by rename only: whatever is at the path (a link, a FIFO, "
               "a device) is replaced, never written through")
      ->group("");
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

void check_writable(const char* flag, const std::string& path, bool replace) {
  if (path.empty()) return;
  struct stat st {};
  // Replaced by rename: what the name itself is counts, never what a link points at.
  const bool exists = (replace ? ::lstat(path.c_str(), &st) : ::stat(path.c_str(), &st)) == 0;
  if (exists && S_ISDIR(st.st_mode))
    throw std::invalid_argument(std::string(flag) + " '" + path + "' is a directory, not a file");
  // A FIFO or a character device is written through (report::write_file_atomic), never replaced.
  if (exists && !replace && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
    if (::access(path.c_str(), W_OK) != 0)
      throw std::invalid_argument(std::string(flag) + " '" + path + "' is not writable");
    return;
  }
  if (exists && !replace && !S_ISREG(st.st_mode))
    throw std::invalid_argument(std::string(flag) + " '" + path +
                                "' is not a regular file, a FIFO or a character device");
  const auto slash = path.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw std::invalid_argument(std::string(flag) + " '" + path + "': directory '" + dir +
                                "' does not exist or is not writable");
}

}  // namespace

void check_outputs(const OutputFlags& out) {
  if (out.json == "-" && out.csv == "-")
    throw std::invalid_argument(
        "--json - and --csv -: only one of them can go to stdout (give the other a file)");
  if (out.json == "-" || out.csv == "-") {
    report::claim_stdout_for_data();  // the table and messages go to stderr
    check_writable(out.json == "-" ? "--csv" : "--json", out.json == "-" ? out.csv : out.json,
                   out.replace);
    return;
  }
  check_writable("--json", out.json, out.replace);
  check_writable("--csv", out.csv, out.replace);
}

void write_output(const OutputFlags& out, const std::string& path, const std::string& contents) {
  if (path.empty()) return;
  if (out.replace && path != "-")
    report::replace_file_atomic(path, contents);
  else
    report::write_file_atomic(path, contents);
}

void write_outputs(const report::Report& report, const OutputFlags& out) {
  write_output(out, out.json, report.to_json().dump(2) + "\n");
  write_output(out, out.csv, report::to_csv(report.results()));
}

void add_events_flag(CLI::App& cmd, std::string& events) {
  cmd.add_option("--events", events,
                 "PAPI events to count around each measured point: a comma list "
                 "(PAPI_TOT_CYC,PAPI_L3_TCM, perf::TASK-CLOCK) or a group: ipc | cache | mem | "
                 "soft (default: none)")
      ->envname("COMPAS_EVENTS")
      ->type_name("LIST|GROUP");
}

perf::EventChoice choose_events_flag(const std::string& request) {
  // Spaces around the items are not part of any event name.
  std::string items;
  for (char c : request)
    if (!std::isspace(static_cast<unsigned char>(c))) items += c;
  perf::EventChoice choice;
  try {
    choice = perf::choose_events(items);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("--events '" + request + "': " + e.what());
  }
  perf::announce(choice);
  return choice;
}

report::json events_params(const perf::EventChoice& choice) {
  report::json j = {{"requested", choice.requested}};
  if (choice.requested.empty()) return j;
  j["counted"] = choice.events;
  j["unavailable"] = choice.unavailable;
  j["source"] = perf::to_string(choice.source);
  j["multiplexed"] = choice.multiplexed;
  if (!choice.notice.empty()) j["notice"] = choice.notice;
  return j;
}

void add_counters_json(report::json& record, const perf::RegionSummary& region) {
  report::json counters = report::json::object();
  for (const auto& [event, stat] : region.counters)
    if (stat.n == region.threads) counters[event] = std::llround(stat.sum);  // exact to 2^53
  report::json derived = report::json::object();
  for (const auto& [name, value] : region.derived) derived[name] = value;
  record["counters"] = std::move(counters);
  record["derived"] = std::move(derived);
}

void print_regions(const std::vector<perf::RegionSummary>& regions,
                   const perf::EventChoice& choice) {
  if (choice.requested.empty()) return;
  std::string counted;
  for (const auto& e : choice.events) counted += (counted.empty() ? "" : ", ") + e;
  fmt::print(
      "\nregions, the timed repeats only ({}); per thread min / mean / max, sum over threads:\n",
      choice.counting() ? "counters " + counted : std::string("time only, no counters"));
  fmt::print("{}", perf::format_table(regions));
}

void warn_counter_errors(const std::vector<std::string>& errors) {
  for (const auto& e : errors) fmt::print(stderr, "compas: counters: {}\n", e);
}

threads::Topology load_topology(const std::string& synthetic) {
  return synthetic.empty() ? threads::Topology::host() : threads::Topology::synthetic(synthetic);
}

}  // namespace compas::app
