// Regions: named, timed, counted pieces of code on every thread of a team.
//
//   perf::Profile profile(team, perf::choose_events("ipc"));   // one event set per thread
//   team.run([&](ThreadCtx& t) {
//     COMPAS_REGION(t, "sweep");                                 // RAII: enter here, exit at }
//     ...
//   });
//   auto summary = perf::aggregate(profile.samples());           // min/mean/max/sum per region
//
// Each thread accumulates its own totals (calls, seconds, counter deltas) without sharing a
// cache line with another thread; regions may nest and be entered any number of times, and
// each region's figures are inclusive of the regions inside it. Samples from several processes
// can be concatenated and aggregated the same way: that is the job-level view.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compas/perf/counters.hpp"
#include "compas/threads/team.hpp"

namespace compas::perf {

// One thread's totals for one region.
struct RegionSample {
  int process = 0;
  int thread = 0;
  std::string region;
  std::uint64_t calls = 0;
  double seconds = 0;
  std::vector<std::string> events;  // counted events, in order
  std::vector<long long> counts;    // their totals, same order
};

struct Stat {
  double min = 0, mean = 0, max = 0, sum = 0;
  int n = 0;
};
Stat summarize(const std::vector<double>& values);

// One region across the threads (and processes) whose samples were aggregated.
struct RegionSummary {
  std::string region;
  int threads = 0;  // samples aggregated
  int processes = 0;
  Stat calls;
  Stat seconds;
  std::map<std::string, Stat> counters;   // only events that were read
  std::map<std::string, double> derived;  // only metrics computable from read counters
};

// Model of the work a region does, for rates: flops and bytes moved, summed over all threads.
struct WorkModel {
  double flops = 0;
  double bytes = 0;
};

// Groups samples by region (first-appearance order) and summarizes each. `line_bytes` turns
// last-level misses into estimated memory traffic; `models` adds GFLOP/s and GB/s per region.
std::vector<RegionSummary> aggregate(const std::vector<RegionSample>& samples, int line_bytes = 64,
                                     const std::map<std::string, WorkModel>& models = {});

// What was recorded between two snapshots of Profile::samples(): `later` minus `earlier` per
// (process, thread, region), for per-step figures out of one running profile. Samples with no call
// in between are left out.
std::vector<RegionSample> samples_since(const std::vector<RegionSample>& later,
                                        const std::vector<RegionSample>& earlier);

// A summary as a JSON record: to_json(const RegionSummary&) in compas/report/report.hpp (JSON stays
// out of what programs that only time regions include). A readable table of the summaries.
std::string format_table(const std::vector<RegionSummary>& summaries);

class Profile;

// One thread's measurement state. Lives in a Profile; used only by its own thread.
class alignas(64) ThreadProfile {
 public:
  struct Totals {
    std::uint64_t calls = 0;
    std::uint64_t ns = 0;
    std::vector<long long> counts;
  };
  int region_id(const char* name);  // interned name of the profile
  void enter(int id, std::uint64_t& t0, long long* c0);
  void exit(int id, std::uint64_t t0, const long long* c0);
  int ncounters() const { return ncounters_; }

 private:
  friend class Profile;
  friend class Region;
  void ensure_counters();
  Profile* profile_ = nullptr;
  int tid_ = 0;
  int ncounters_ = 0;
  bool counters_ready_ = false;
  std::unique_ptr<ThreadCounters> counters_;
  std::vector<Totals> totals_;                    // by region id
  std::vector<std::pair<const char*, int>> ids_;  // name pointer -> id, this thread's cache
};

// The regions of one team. While a Profile lives, it is the active one: COMPAS_REGION on a
// thread of its team records into it. Creating a Profile makes every thread of the team set up
// its event set (through a team.run), and destroying it tears them down the same way.
class Profile {
 public:
  Profile(threads::Team& team, EventChoice events, int process = 0);
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  const EventChoice& events() const { return events_; }
  ThreadProfile& thread(int tid) { return threads_[static_cast<std::size_t>(tid)]; }
  // Per-thread totals of every region entered so far.
  std::vector<RegionSample> samples() const;
  void reset();  // zero all totals (between repetitions); call outside team.run
  // Zero one thread's totals, on that thread, while none of its regions is open (inside
  // team.run: each thread its own).
  void reset(int tid);
  // Errors of threads whose event set could not be made (counters then missing there).
  std::vector<std::string> thread_errors() const;

  static Profile* active();

 private:
  friend class ThreadProfile;
  friend class Region;
  int intern(const char* name);
  threads::Team& team_;
  EventChoice events_;
  int process_;
  std::unique_ptr<ThreadProfile[]> threads_;
  std::vector<std::string> names_;  // region id -> name; grown under a lock, read by ids
  mutable std::mutex names_mutex_;
  Profile* previous_ = nullptr;
};

// RAII region on the calling thread of the active profile; free when no profile is active.
class Region {
 public:
  Region(const threads::ThreadCtx& ctx, const char* name);
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

 private:
  static constexpr int kInlineCounters = 8;
  ThreadProfile* tp_ = nullptr;
  int id_ = -1;
  std::uint64_t t0_ = 0;
  long long c0_[kInlineCounters];
  std::unique_ptr<long long[]> c0_heap_;
};

}  // namespace compas::perf

#define COMPAS_REGION_CAT2(a, b) a##b
#define COMPAS_REGION_CAT(a, b) COMPAS_REGION_CAT2(a, b)
// Times and counts the rest of the enclosing scope as region `name` on thread `ctx`.
#define COMPAS_REGION(ctx, name) \
  ::compas::perf::Region COMPAS_REGION_CAT(compas_region_, __LINE__)((ctx), (name))
