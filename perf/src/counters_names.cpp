// The PAPI-free half of the counters: names, groups, requests and notices (counters.hpp).
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "compas/perf/counters.hpp"

namespace compas::perf {

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

std::string to_string(CounterSource source) {
  switch (source) {
    case CounterSource::hardware:
      return "hardware";
    case CounterSource::software:
      return "software";
    case CounterSource::time_only:
      return "time-only";
  }
  return "?";
}

const std::vector<std::string>& software_events() {
  static const std::vector<std::string> events = {"perf::TASK-CLOCK", "perf::PAGE-FAULTS",
                                                  "perf::CONTEXT-SWITCHES"};
  return events;
}

bool is_group(const std::string& name) {
  return name == "ipc" || name == "cache" || name == "mem" || name == "soft";
}

std::vector<std::string> group_events(const std::string& group) {
  if (group == "ipc") return {"PAPI_TOT_CYC", "PAPI_TOT_INS"};
  if (group == "cache")
    return {"PAPI_L1_DCM", "PAPI_L1_DCA", "PAPI_L2_DCM",
            "PAPI_L2_DCA", "PAPI_L3_TCM", "PAPI_L3_TCA"};
  if (group == "mem") return {"PAPI_TOT_CYC", "PAPI_L3_TCM", "PAPI_LD_INS", "PAPI_SR_INS"};
  if (group == "soft") return software_events();
  throw std::invalid_argument("unknown event group '" + group +
                              "': allowed are ipc, cache, mem, soft");
}

int EventChoice::index_of(const std::string& event) const {
  auto it = std::find(events.begin(), events.end(), event);
  return it == events.end() ? -1 : static_cast<int>(it - events.begin());
}

std::vector<std::string> expand_event_request(const std::string& request) {
  std::vector<std::string> out;
  auto add = [&out](const std::string& e) {
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  };
  for (const auto& item : split(request)) {
    const bool plausible = item.size() <= 256 && std::all_of(item.begin(), item.end(), [](char ch) {
                             const auto u = static_cast<unsigned char>(ch);
                             return u > 0x20 && u < 0x7f;
                           });
    if (!plausible)
      throw std::invalid_argument("invalid event name '" + item.substr(0, 64) +
                                  "': event names are printable ASCII without spaces, at most "
                                  "256 characters (see papi_avail, papi_native_avail)");
    if (is_group(item))
      for (const auto& e : group_events(item)) add(e);
    else
      add(item);
  }
  return out;
}

void announce(const EventChoice& choice) {
  if (choice.notice.empty()) return;
  static std::mutex m;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(m);
  if (said.insert(choice.notice).second)
    std::fprintf(stderr, "compas: %s\n", choice.notice.c_str());
}

}  // namespace compas::perf
