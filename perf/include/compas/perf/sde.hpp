// PAPI Software Defined Events: the runtime's own activity, readable by any PAPI tool by name as
// "sde:::compas::<counter>", e.g. sde:::compas::barriers. Counters are read through callbacks,
// so exporting costs nothing until someone reads them.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace compas::perf::sde {

// Exports `read` as sde:::compas::<name>. Names must be unique; registering one twice replaces
// its reader. Thread-safe.
void register_counter(const std::string& name, const std::string& description,
                      std::function<long long()> read);

// Exports the threads layer's activity: barriers (episodes passed, all threads), waits (waits
// that had to wait) and wait_ns (time in them, counted while a Profile is active). Idempotent.
void export_thread_activity();

// Names registered so far (without the sde:::compas:: prefix).
std::vector<std::string> registered();

// The full PAPI name of a compas SDE counter.
inline std::string papi_name(const std::string& counter) {
  return "sde:::compas::" + counter;
}

}  // namespace compas::perf::sde
