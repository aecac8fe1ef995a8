// The counters over PAPI (counters.hpp): initialisation, what this machine counts, the fallback
// chain and one thread's event set. counters_none.cpp stands in for it in a build without PAPI.
#include "compas/perf/counters.hpp"

#include <papi.h>
#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace compas::perf {

namespace {

std::mutex g_mutex;  // guards initialisation and event probing, never a measurement
bool g_init_done = false;
bool g_papi_ok = false;
bool g_multiplex_ok = false;
std::string g_papi_error;
std::string g_perf_event_off;  // why PAPI's perf_event component is disabled; empty when enabled
pthread_t g_init_thread;       // the thread that initialised PAPI: it stays registered

unsigned long thread_id() {
  return static_cast<unsigned long>(pthread_self());
}

void init_locked() {
  if (g_init_done) return;
  g_init_done = true;
  g_init_thread = pthread_self();
  const int v = PAPI_library_init(PAPI_VER_CURRENT);
  if (v != PAPI_VER_CURRENT) {
    g_papi_error = v > 0 ? "PAPI library version mismatch" : PAPI_strerror(v);
    return;
  }
  if (const int rc = PAPI_thread_init(thread_id); rc != PAPI_OK) {
    g_papi_error = std::string("PAPI_thread_init: ") + PAPI_strerror(rc);
    return;
  }
  g_multiplex_ok = PAPI_multiplex_init() == PAPI_OK;
  g_papi_ok = true;
  // Every CPU event, the software ones (perf::TASK-CLOCK, ...) included, comes through the
  // perf_event component. PAPI disables it as a whole when libpfm4 does not know the CPU (a
  // processor newer than the library, some hypervisors): then nothing can be counted.
  const int cid = PAPI_get_component_index("perf_event");
  const PAPI_component_info_t* info = cid >= 0 ? PAPI_get_component_info(cid) : nullptr;
  if (!info)
    g_perf_event_off = "PAPI has no perf_event component";
  else if (info->disabled)
    g_perf_event_off = std::string("PAPI's perf_event component is disabled: ") +
                       (info->disabled_reason[0] ? info->disabled_reason : "no reason given");
}

// Can this event be counted on this machine, alone? Adds it to a scratch set and starts it.
bool countable(const std::string& event) {
  int es = PAPI_NULL;
  if (PAPI_create_eventset(&es) != PAPI_OK) return false;
  bool ok = PAPI_add_named_event(es, event.c_str()) == PAPI_OK;
  if (ok) {
    ok = PAPI_start(es) == PAPI_OK;
    long long v = 0;
    if (ok) PAPI_stop(es, &v);
  }
  PAPI_cleanup_eventset(es);
  PAPI_destroy_eventset(&es);
  return ok;
}

// Can these events be counted together, without multiplexing?
bool fit_together(const std::vector<std::string>& events) {
  int es = PAPI_NULL;
  if (PAPI_create_eventset(&es) != PAPI_OK) return false;
  bool ok = true;
  for (const auto& e : events) ok = ok && PAPI_add_named_event(es, e.c_str()) == PAPI_OK;
  if (ok) {
    ok = PAPI_start(es) == PAPI_OK;
    std::vector<long long> v(events.size());
    if (ok) PAPI_stop(es, v.data());
  }
  PAPI_cleanup_eventset(es);
  PAPI_destroy_eventset(&es);
  return ok;
}

bool is_software(const std::string& e) {
  const auto& sw = software_events();
  return std::find(sw.begin(), sw.end(), e) != sw.end();
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

bool papi_available() {
  std::lock_guard<std::mutex> lock(g_mutex);
  init_locked();
  return g_papi_ok;
}

std::string papi_error() {
  std::lock_guard<std::mutex> lock(g_mutex);
  init_locked();
  return g_papi_error;
}

std::string cpu_events_unavailable() {
  std::lock_guard<std::mutex> lock(g_mutex);
  init_locked();
  return g_papi_ok ? g_perf_event_off : g_papi_error;
}

std::string papi_version() {
  return std::to_string(PAPI_VERSION_MAJOR(PAPI_VERSION)) + "." +
         std::to_string(PAPI_VERSION_MINOR(PAPI_VERSION)) + "." +
         std::to_string(PAPI_VERSION_REVISION(PAPI_VERSION));
}

EventChoice choose_events(const std::string& request) {
  EventChoice c;
  c.requested = expand_event_request(request);
  if (c.requested.empty()) return c;

  std::lock_guard<std::mutex> lock(g_mutex);
  init_locked();
  if (!g_papi_ok) {
    c.unavailable = c.requested;
    c.notice = "counters: PAPI unavailable (" + g_papi_error + "); measuring time only";
    return c;
  }
  for (const auto& e : c.requested) {
    if (PAPI_query_named_event(e.c_str()) != PAPI_OK) {
      int code = 0;
      // With the perf_event component disabled PAPI knows no native CPU event at all: a
      // native name (pmu::event) cannot be checked here, so it is not countable, not unknown.
      const bool native_name = e.find("::") != std::string::npos;
      if (PAPI_event_name_to_code(e.c_str(), &code) != PAPI_OK &&
          !(native_name && !g_perf_event_off.empty()))
        throw std::invalid_argument(
            "unknown event '" + e +
            "': not a PAPI preset or native event here (see papi_avail, papi_native_avail) "
            "and not a group (ipc, cache, mem, soft)");
    }
    (countable(e) ? c.events : c.unavailable).push_back(e);
  }
  bool any_hw_requested = false;
  for (const auto& e : c.requested) any_hw_requested = any_hw_requested || !is_software(e);

  if (c.events.empty()) {
    // Fallback chain: hardware -> software events -> time only.
    for (const auto& e : software_events())
      if (countable(e)) c.events.push_back(e);
    c.source = c.events.empty() ? CounterSource::time_only : CounterSource::software;
    c.notice =
        "counters: " + join(c.unavailable) + " not countable here" +
        (!g_perf_event_off.empty()
             ? " (" + g_perf_event_off + ")"
             : (any_hw_requested ? " (no hardware counters: virtual machine or restricted perf)"
                                 : "")) +
        "; " +
        (c.events.empty() ? std::string("measuring time only")
                          : "using PAPI software events " + join(c.events));
  } else {
    c.source = std::all_of(c.events.begin(), c.events.end(), is_software) ? CounterSource::software
                                                                          : CounterSource::hardware;
    if (!c.unavailable.empty())
      c.notice =
          "counters: " + join(c.unavailable) + " not countable here; counting " + join(c.events);
  }
  if (c.events.size() > 1 && !fit_together(c.events)) {
    if (g_multiplex_ok) {
      c.multiplexed = true;
      c.notice += std::string(c.notice.empty() ? "" : "; ") +
                  "counters: " + std::to_string(c.events.size()) +
                  " events do not fit the counters together: multiplexing (values are estimates)";
    } else {
      // Keep the largest prefix that fits.
      while (c.events.size() > 1 && !fit_together(c.events)) {
        c.unavailable.push_back(c.events.back());
        c.events.pop_back();
      }
      c.notice += std::string(c.notice.empty() ? "" : "; ") +
                  "counters: events do not fit together and multiplexing is unavailable; "
                  "counting " +
                  join(c.events);
    }
  }
  return c;
}

ThreadCounters::ThreadCounters(const EventChoice& choice) {
  if (!choice.counting()) return;
  // Returns an error message, or "" once the set is counting.
  auto setup = [&]() -> std::string {
    int rc = PAPI_register_thread();
    if (rc != PAPI_OK) return std::string("PAPI_register_thread: ") + PAPI_strerror(rc);
    eventset_ = PAPI_NULL;
    if ((rc = PAPI_create_eventset(&eventset_)) != PAPI_OK)
      return std::string("PAPI_create_eventset: ") + PAPI_strerror(rc);
    if (choice.multiplexed) {
      // A multiplexed set must be bound to its component before events are added.
      if ((rc = PAPI_assign_eventset_component(eventset_, 0)) != PAPI_OK)
        return std::string("PAPI_assign_eventset_component: ") + PAPI_strerror(rc);
      if ((rc = PAPI_set_multiplex(eventset_)) != PAPI_OK)
        return std::string("PAPI_set_multiplex: ") + PAPI_strerror(rc);
    }
    for (const auto& e : choice.events)
      if ((rc = PAPI_add_named_event(eventset_, e.c_str())) != PAPI_OK)
        return "adding " + e + ": " + PAPI_strerror(rc);
    values_.assign(choice.events.size(), 0);
    if ((rc = PAPI_start(eventset_)) != PAPI_OK)
      return std::string("PAPI_start: ") + PAPI_strerror(rc);
    started_ = true;
    return "";
  };
  error_ = setup();
  if (!error_.empty()) {
    if (eventset_ != PAPI_NULL) {
      PAPI_cleanup_eventset(eventset_);
      PAPI_destroy_eventset(&eventset_);
    }
    eventset_ = PAPI_NULL;
    values_.clear();
  }
}

ThreadCounters::~ThreadCounters() {
  if (eventset_ == PAPI_NULL) return;
  if (started_) PAPI_stop(eventset_, values_.data());
  PAPI_cleanup_eventset(eventset_);
  PAPI_destroy_eventset(&eventset_);
  // Other threads leave PAPI with their event set; the initialising thread's record is PAPI's
  // own and must stay (unregistering it breaks later calls on that thread).
  if (!pthread_equal(pthread_self(), g_init_thread)) PAPI_unregister_thread();
}

void ThreadCounters::read(long long* out) {
  if (values_.empty()) return;
  PAPI_read(eventset_, out);
}

}  // namespace compas::perf
