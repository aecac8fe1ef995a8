// Counters: PAPI, initialised once per process with thread support; every thread that measures
// owns its own event set. Events are chosen by name (PAPI presets or native names) or by group
// (ipc, cache, mem, soft), checked against what this machine can count, and multiplexed when
// they do not fit the counters together. When hardware events are missing (virtual machines,
// locked-down clusters) the choice falls back to PAPI software events, then to time only, and
// says so once, in one line. A counter that was not read is never reported, least of all as 0.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace compas::perf {

enum class CounterSource { hardware, software, time_only };
std::string to_string(CounterSource source);

// The software events of the fallback chain.
const std::vector<std::string>& software_events();

// Group name -> events. Groups: ipc (cycles, instructions), cache (L1/L2/L3 data misses and
// accesses), mem (last-level misses, loads, stores, cycles), soft (the software events).
// Throws std::invalid_argument for an unknown group.
std::vector<std::string> group_events(const std::string& group);
bool is_group(const std::string& name);

// What a process measures, decided once from a request like "ipc" or "PAPI_TOT_CYC,PAPI_L3_TCM".
struct EventChoice {
  std::vector<std::string> requested;    // after expanding groups
  std::vector<std::string> events;       // the ones that are counted, in order
  std::vector<std::string> unavailable;  // requested but not countable here, with no number
  CounterSource source = CounterSource::time_only;
  bool multiplexed = false;
  std::string notice;  // one line when the request could not be met as asked, else empty

  bool counting() const { return !events.empty(); }
  int index_of(const std::string& event) const;  // -1 when not counted
};

// The events a request names, in order, without duplicates: comma-separated items, empty items
// skipped, groups expanded. Pure text work (no PAPI): throws std::invalid_argument only for an
// item that is not a plausible event name (control characters, spaces, over 256 characters).
std::vector<std::string> expand_event_request(const std::string& request);

// Initialises PAPI (once) and resolves `request` (comma-separated events and groups; empty means
// no counters). Unknown event *names* (not in PAPI at all) are bad input: std::invalid_argument,
// except native names (pmu::event) while PAPI's perf_event component is disabled, which cannot be
// checked and count as not countable.
// Known events the machine cannot count trigger the fallback chain. Thread-safe.
EventChoice choose_events(const std::string& request);

// Prints choice.notice to stderr once per process (per distinct notice).
void announce(const EventChoice& choice);

// True when PAPI initialised; papi_error() says why not.
bool papi_available();
std::string papi_error();
std::string papi_version();
// Empty when PAPI can count CPU events here (hardware or software); otherwise why it cannot: PAPI
// did not initialise, or its perf_event component is disabled (e.g. libpfm4 does not know this
// CPU), and every request then measures time only.
std::string cpu_events_unavailable();

// One thread's event set. Create, read and destroy it on the thread that measures.
class ThreadCounters {
 public:
  explicit ThreadCounters(const EventChoice& choice);
  ~ThreadCounters();
  ThreadCounters(const ThreadCounters&) = delete;
  ThreadCounters& operator=(const ThreadCounters&) = delete;

  int size() const { return static_cast<int>(values_.size()); }
  // Current counts since start (monotonic). `out` must hold size() values.
  void read(long long* out);
  // Empty when counting works on this thread; otherwise why it does not (then size() is 0).
  const std::string& error() const { return error_; }

 private:
  int eventset_ = -1;  // PAPI_NULL
  bool started_ = false;
  std::vector<long long> values_;
  std::string error_;
};

}  // namespace compas::perf
