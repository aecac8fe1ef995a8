// The counters in a build without PAPI (COMPAS_PAPI=OFF, or AUTO without libpapi-dev): every
// request is checked as text and measured as time only, and the notice says why.
#include <string>

#include "compas/perf/counters.hpp"

namespace compas::perf {

namespace {

const char* const kWhy = "compas was built without PAPI (configure with -DCOMPAS_PAPI=ON)";

}  // namespace

bool papi_available() {
  return false;
}

std::string papi_error() {
  return kWhy;
}

std::string cpu_events_unavailable() {
  return kWhy;
}

std::string papi_version() {
  return "none";
}

EventChoice choose_events(const std::string& request) {
  EventChoice c;
  c.requested = expand_event_request(request);
  if (c.requested.empty()) return c;
  c.unavailable = c.requested;
  std::string names;
  for (const auto& e : c.requested) names += (names.empty() ? "" : ", ") + e;
  c.notice = "counters: " + names + " not countable here (" + kWhy + "); measuring time only";
  return c;
}

ThreadCounters::ThreadCounters(const EventChoice& choice) {
  if (choice.counting()) error_ = kWhy;
}

ThreadCounters::~ThreadCounters() = default;

void ThreadCounters::read(long long*) {}

}  // namespace compas::perf
