#include "compas/perf/region.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

#include "compas/perf/sde.hpp"
#include "compas/perf/timer.hpp"
#include "compas/threads/activity.hpp"

namespace compas::perf {

namespace {

std::atomic<Profile*> g_active{nullptr};

}  // namespace

Stat summarize(const std::vector<double>& values) {
  Stat s;
  s.n = static_cast<int>(values.size());
  if (values.empty()) return s;
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  for (double v : values) s.sum += v;
  s.mean = s.sum / static_cast<double>(values.size());
  return s;
}

// ---- ThreadProfile -----------------------------------------------------------------------

int ThreadProfile::region_id(const char* name) {
  for (const auto& [p, id] : ids_)
    if (p == name) return id;
  const int id = profile_->intern(name);
  ids_.emplace_back(name, id);
  return id;
}

void ThreadProfile::ensure_counters() {
  if (counters_ready_) return;
  counters_ready_ = true;
  counters_ = std::make_unique<ThreadCounters>(profile_->events_);
  ncounters_ = counters_->size();
}

void ThreadProfile::enter(int, std::uint64_t& t0, long long* c0) {
  ensure_counters();
  if (ncounters_) counters_->read(c0);
  t0 = now_ns();
}

void ThreadProfile::exit(int id, std::uint64_t t0, const long long* c0) {
  const std::uint64_t t1 = now_ns();
  long long c1[16];
  std::vector<long long> c1_heap;
  long long* c = c1;
  if (ncounters_ > 16) {
    c1_heap.resize(static_cast<std::size_t>(ncounters_));
    c = c1_heap.data();
  }
  if (ncounters_) counters_->read(c);
  if (static_cast<std::size_t>(id) >= totals_.size())
    totals_.resize(static_cast<std::size_t>(id) + 1);
  Totals& t = totals_[static_cast<std::size_t>(id)];
  if (t.counts.size() != static_cast<std::size_t>(ncounters_))
    t.counts.assign(static_cast<std::size_t>(ncounters_), 0);
  t.calls += 1;
  t.ns += t1 - t0;
  for (int i = 0; i < ncounters_; ++i) t.counts[static_cast<std::size_t>(i)] += c[i] - c0[i];
}

// ---- Profile -----------------------------------------------------------------------------

Profile::Profile(threads::Team& team, EventChoice events, int process)
    : team_(team), events_(std::move(events)), process_(process) {
  threads_ = std::make_unique<ThreadProfile[]>(static_cast<std::size_t>(team.threads()));
  for (int t = 0; t < team.threads(); ++t) {
    threads_[static_cast<std::size_t>(t)].profile_ = this;
    threads_[static_cast<std::size_t>(t)].tid_ = t;
  }
  announce(events_);
  // Event sets belong to the thread that reads them: make them on the team's threads now, so
  // that the first region does not pay for it.
  if (events_.counting())
    team_.run([this](threads::ThreadCtx& c) { thread(c.thread()).ensure_counters(); });
  previous_ = g_active.exchange(this);
  // While a profile is active, time spent waiting in barriers is measured and exported.
  sde::export_thread_activity();
  threads::set_wait_accounting(true);
}

Profile::~Profile() {
  Profile* expected = this;
  g_active.compare_exchange_strong(expected, previous_);
  if (!previous_) threads::set_wait_accounting(false);
  if (events_.counting()) {
    try {
      team_.run([this](threads::ThreadCtx& c) { thread(c.thread()).counters_.reset(); });
    } catch (...) {
    }
  }
}

Profile* Profile::active() {
  return g_active.load(std::memory_order_acquire);
}

int Profile::intern(const char* name) {
  std::lock_guard<std::mutex> lock(names_mutex_);
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<int>(i);
  names_.emplace_back(name);
  return static_cast<int>(names_.size() - 1);
}

std::vector<RegionSample> Profile::samples() const {
  std::lock_guard<std::mutex> lock(names_mutex_);
  std::vector<RegionSample> out;
  for (std::size_t id = 0; id < names_.size(); ++id) {
    for (int t = 0; t < team_.threads(); ++t) {
      const ThreadProfile& tp = threads_[static_cast<std::size_t>(t)];
      if (id >= tp.totals_.size() || tp.totals_[id].calls == 0) continue;
      const auto& tot = tp.totals_[id];
      RegionSample s;
      s.process = process_;
      s.thread = t;
      s.region = names_[id];
      s.calls = tot.calls;
      s.seconds = static_cast<double>(tot.ns) * 1e-9;
      if (tp.ncounters_ > 0) {
        s.events = events_.events;
        s.counts = tot.counts;
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

void Profile::reset() {
  for (int t = 0; t < team_.threads(); ++t) reset(t);
}

void Profile::reset(int tid) {
  threads_[static_cast<std::size_t>(tid)].totals_.clear();
}

std::vector<std::string> Profile::thread_errors() const {
  std::vector<std::string> out;
  for (int t = 0; t < team_.threads(); ++t) {
    const ThreadProfile& tp = threads_[static_cast<std::size_t>(t)];
    if (tp.counters_ && !tp.counters_->error().empty())
      out.push_back("thread " + std::to_string(t) + ": " + tp.counters_->error());
  }
  return out;
}

// ---- Region ------------------------------------------------------------------------------

Region::Region(const threads::ThreadCtx& ctx, const char* name) {
  Profile* p = Profile::active();
  if (!p || &ctx.team() != &p->team_) return;
  tp_ = &p->thread(ctx.thread());
  id_ = tp_->region_id(name);
  tp_->ensure_counters();
  long long* c0 = c0_;
  if (tp_->ncounters() > kInlineCounters) {
    c0_heap_ = std::make_unique<long long[]>(static_cast<std::size_t>(tp_->ncounters()));
    c0 = c0_heap_.get();
  }
  tp_->enter(id_, t0_, c0);
}

Region::~Region() {
  if (tp_) tp_->exit(id_, t0_, c0_heap_ ? c0_heap_.get() : c0_);
}

// ---- aggregation -------------------------------------------------------------------------

std::vector<RegionSummary> aggregate(const std::vector<RegionSample>& samples, int line_bytes,
                                     const std::map<std::string, WorkModel>& models) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const RegionSample*>> by_region;
  for (const auto& s : samples) {
    if (!by_region.count(s.region)) order.push_back(s.region);
    by_region[s.region].push_back(&s);
  }
  std::vector<RegionSummary> out;
  for (const auto& name : order) {
    const auto& group = by_region[name];
    RegionSummary r;
    r.region = name;
    r.threads = static_cast<int>(group.size());
    std::vector<int> processes;
    std::vector<double> calls, seconds;
    std::map<std::string, std::vector<double>> counts;
    for (const RegionSample* s : group) {
      if (std::find(processes.begin(), processes.end(), s->process) == processes.end())
        processes.push_back(s->process);
      calls.push_back(static_cast<double>(s->calls));
      seconds.push_back(s->seconds);
      for (std::size_t i = 0; i < s->events.size() && i < s->counts.size(); ++i)
        counts[s->events[i]].push_back(static_cast<double>(s->counts[i]));
    }
    r.processes = static_cast<int>(processes.size());
    r.calls = summarize(calls);
    r.seconds = summarize(seconds);
    // A counter is summarized only over the threads that read it; one missing on some thread
    // is reported with its own n, never padded with zeros.
    for (auto& [event, values] : counts) r.counters[event] = summarize(values);

    // Derived metrics, each only when every counter it needs was read. Rates use the slowest
    // thread's time (the region's wall time when threads run it together).
    auto sum_of = [&](const char* e) -> const Stat* {
      auto it = r.counters.find(e);
      return it == r.counters.end() || it->second.n != r.threads ? nullptr : &it->second;
    };
    const double wall = r.seconds.max;
    if (auto* cyc = sum_of("PAPI_TOT_CYC"); cyc && cyc->sum > 0)
      if (auto* ins = sum_of("PAPI_TOT_INS")) r.derived["ipc"] = ins->sum / cyc->sum;
    if (auto* m = sum_of("PAPI_L1_DCM"); m)
      if (auto* a = sum_of("PAPI_L1_DCA"); a && a->sum > 0)
        r.derived["l1_miss_ratio"] = m->sum / a->sum;
    if (auto* m = sum_of("PAPI_L2_DCM"); m)
      if (auto* a = sum_of("PAPI_L2_DCA"); a && a->sum > 0)
        r.derived["l2_miss_ratio"] = m->sum / a->sum;
    if (auto* m = sum_of("PAPI_L3_TCM"); m) {
      if (auto* a = sum_of("PAPI_L3_TCA"); a && a->sum > 0)
        r.derived["l3_miss_ratio"] = m->sum / a->sum;
      r.derived["memory_bytes_est"] = m->sum * line_bytes;
      if (wall > 0) r.derived["memory_gbs_est"] = m->sum * line_bytes / wall * 1e-9;
    }
    if (auto* clk = sum_of("perf::TASK-CLOCK"); clk && wall > 0)
      r.derived["cpu_utilization"] = clk->sum * 1e-9 / (wall * r.threads);
    if (auto it = models.find(name); it != models.end() && wall > 0) {
      if (it->second.flops > 0) r.derived["gflops"] = it->second.flops / wall * 1e-9;
      if (it->second.bytes > 0) r.derived["bandwidth_gbs"] = it->second.bytes / wall * 1e-9;
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<RegionSample> samples_since(const std::vector<RegionSample>& later,
                                        const std::vector<RegionSample>& earlier) {
  std::vector<RegionSample> out;
  for (const auto& s : later) {
    const auto it = std::find_if(earlier.begin(), earlier.end(), [&](const RegionSample& e) {
      return e.process == s.process && e.thread == s.thread && e.region == s.region;
    });
    RegionSample d = s;
    if (it != earlier.end()) {
      d.calls -= std::min(it->calls, s.calls);
      d.seconds -= it->seconds;
      // A thread counts the same events throughout one profile; should the two snapshots
      // differ anyway, no difference of counts is meaningful and none is reported.
      if (it->events == s.events && it->counts.size() == s.counts.size()) {
        for (std::size_t i = 0; i < d.counts.size(); ++i) d.counts[i] -= it->counts[i];
      } else {
        d.events.clear();
        d.counts.clear();
      }
    }
    if (d.calls > 0) out.push_back(std::move(d));
  }
  return out;
}

std::string format_table(const std::vector<RegionSummary>& summaries) {
  std::string out = fmt::format("{:<16} {:>7} {:>8} {:>11} {:>11} {:>11}\n", "region", "threads",
                                "calls", "min s", "mean s", "max s");
  for (const auto& s : summaries) {
    out += fmt::format("{:<16} {:>7} {:>8.0f} {:>11.6f} {:>11.6f} {:>11.6f}\n", s.region, s.threads,
                       s.calls.sum, s.seconds.min, s.seconds.mean, s.seconds.max);
    for (const auto& [e, st] : s.counters)
      out += fmt::format("  {:<24} min {:>14.0f}  mean {:>14.0f}  max {:>14.0f}  sum {:>15.0f}\n",
                         e, st.min, st.mean, st.max, st.sum);
    for (const auto& [k, v] : s.derived) out += fmt::format("  {:<24} {:.4g}\n", k, v);
  }
  return out;
}

}  // namespace compas::perf
