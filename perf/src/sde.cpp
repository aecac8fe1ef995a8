#include "compas/perf/sde.hpp"

#if COMPAS_WITH_PAPI
#include <sde_lib.h>
#endif

#include <deque>
#include <mutex>
#include <stdexcept>

#include "compas/threads/activity.hpp"

namespace compas::perf::sde {

namespace {

struct Entry {
  std::string name;
  std::function<long long()> read;
};

std::mutex g_mutex;
std::deque<Entry> g_entries;  // stable addresses: PAPI holds pointers to them

#if COMPAS_WITH_PAPI
papi_handle_t g_handle = nullptr;

long long read_entry(void* param) {
  auto* e = static_cast<Entry*>(param);
  return e->read ? e->read() : 0;
}

// Makes `e` readable as sde:::compas::<name>.
void export_entry(Entry& e, const std::string& description) {
  if (!g_handle) g_handle = papi_sde_init("compas");
  if (papi_sde_register_counter_cb(g_handle, e.name.c_str(), PAPI_SDE_RO | PAPI_SDE_DELTA,
                                   PAPI_SDE_long_long, read_entry, &e) != SDE_OK)
    throw std::runtime_error("cannot register SDE counter " + e.name);
  papi_sde_describe_counter(g_handle, e.name.c_str(), description.c_str());
}
#else
// Without PAPI nothing reads the counters: they are only listed (registered()).
void export_entry(Entry&, const std::string&) {}
#endif

}  // namespace

void register_counter(const std::string& name, const std::string& description,
                      std::function<long long()> read) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& e : g_entries)
    if (e.name == name) {
      e.read = std::move(read);
      return;
    }
  g_entries.push_back({name, std::move(read)});
  export_entry(g_entries.back(), description);
}

void export_thread_activity() {
  register_counter("barriers", "thread barrier episodes passed, summed over threads",
                   [] { return static_cast<long long>(threads::activity_totals().barriers); });
  register_counter("waits", "thread waits that did not complete at once",
                   [] { return static_cast<long long>(threads::activity_totals().waits); });
  register_counter("wait_ns", "ns threads spent waiting (while a profile is active)",
                   [] { return static_cast<long long>(threads::activity_totals().wait_ns); });
}

std::vector<std::string> registered() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<std::string> out;
  for (const auto& e : g_entries) out.push_back(e.name);
  return out;
}

}  // namespace compas::perf::sde
