#include "openmp.hpp"

#include "compas/runtime/thread_order.hpp"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

namespace compas::detail {

namespace {

std::string lower_trimmed(const char* text) {
  std::string s(text);
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  s = s.substr(first, s.find_last_not_of(" \t") - first + 1);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const char* set_env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// ---- regions the Runtime runs itself: each of threads 0..n-1 does one action ----

enum class Action { pin, restore, read };

struct alignas(64) ThreadReport {
  std::vector<int> cpus;  // what the thread is bound to afterwards, read back
  std::string error;
  std::atomic<bool> done{false};
};

struct RegionJob {
  const threads::Topology* topo = nullptr;
  Action action = Action::read;
  const std::vector<int>* cpus = nullptr;  // pin: thread i on cpus[i]; restore: all on cpus
  int threads = 0;
  std::unique_ptr<ThreadReport[]> reports;
};

// The job reaches the region's threads through this atomic, not as a shared variable of the
// region (see openmp.hpp: ThreadSanitizer does not see libgomp's hand-over).
std::atomic<RegionJob*> g_job{nullptr};
std::mutex g_job_mutex;  // one such region at a time in the process

void do_job() {
  RegionJob* job = g_job.load(std::memory_order_acquire);
  const int tid = omp_get_thread_num();
  if (!job || tid >= job->threads) return;
  ThreadReport& r = job->reports[static_cast<std::size_t>(tid)];
  try {
    switch (job->action) {
      case Action::pin:
        r.cpus = job->topo->bind_current_thread((*job->cpus)[static_cast<std::size_t>(tid)]);
        break;
      case Action::restore:
        r.cpus = job->topo->bind_current_thread(*job->cpus);
        break;
      case Action::read:
        r.cpus = job->topo->current_thread_binding();
        break;
    }
  } catch (const std::exception& e) {
    r.error = e.what();
  } catch (...) {  // nothing may leave an OpenMP region
    r.error = "an exception that is not a std::exception";
  }
  r.done.store(true, std::memory_order_release);
}

// Runs the job in one parallel region of job.threads threads; returns how many of them did it
// (fewer when OpenMP gave fewer threads, e.g. under OMP_THREAD_LIMIT).
int run_region(RegionJob& job) {
  job.reports = std::make_unique<ThreadReport[]>(static_cast<std::size_t>(job.threads));
  const std::lock_guard<std::mutex> lock(g_job_mutex);
  g_job.store(&job, std::memory_order_release);
  const int n = job.threads;
#pragma omp parallel num_threads(n)
  do_job();
  g_job.store(nullptr, std::memory_order_relaxed);
  int ran = 0;
  for (int i = 0; i < n; ++i)
    if (job.reports[static_cast<std::size_t>(i)].done.load(std::memory_order_acquire)) ++ran;
  return ran;
}

}  // namespace

OpenMP resolve_openmp(OpenMP requested, std::string* why) {
  if (why) why->clear();
  if (requested != OpenMP::automatic) return requested;
  // libgomp binds its threads when OMP_PROC_BIND says so, or, when OMP_PROC_BIND is not set, when
  // OMP_PLACES or GOMP_CPU_AFFINITY is (OMP_PROC_BIND=false disables both).
  const char* chosen = nullptr;
  if (const char* bind = set_env("OMP_PROC_BIND")) {
    if (lower_trimmed(bind) != "false") chosen = "OMP_PROC_BIND";
  } else if (set_env("OMP_PLACES")) {
    chosen = "OMP_PLACES";
  } else if (set_env("GOMP_CPU_AFFINITY")) {
    chosen = "GOMP_CPU_AFFINITY";
  }
  if (!chosen) return OpenMP::pin;
  if (why) *why = std::string(chosen) + "=" + std::getenv(chosen);
  return OpenMP::leave;
}

std::vector<int> widen_to_openmp_places() {
  if (omp_in_parallel() || omp_get_proc_bind() == omp_proc_bind_false) return {};
  const int places = omp_get_num_places();
  if (places <= 0) return {};
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int p = 0; p < places; ++p) {
    std::vector<int> ids(static_cast<std::size_t>(std::max(0, omp_get_place_num_procs(p))));
    omp_get_place_proc_ids(p, ids.data());
    for (int id : ids)
      if (id >= 0 && id < CPU_SETSIZE) CPU_SET(id, &all);
  }
  cpu_set_t now, both;
  if (sched_getaffinity(0, sizeof now, &now) != 0 || CPU_EQUAL(&now, &all)) return {};
  CPU_AND(&both, &now, &all);
  if (!CPU_EQUAL(&both, &now)) return {};  // not where libgomp put it: someone else's binding
  std::vector<int> before;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &now)) before.push_back(c);
  if (sched_setaffinity(0, sizeof all, &all) != 0) return {};
  return before;
}

OpenMpThreads::OpenMpThreads(const threads::Topology& topo, OpenMpSetup setup)
    : topo_(&topo),
      setup_(std::move(setup)),
      threads_(static_cast<int>(setup_.cpu_of_thread.size())),
      saved_max_threads_(omp_get_max_threads()),
      saved_dynamic_(omp_get_dynamic()) {
  grow_slots(std::max(threads_, saved_max_threads_));
}

void OpenMpThreads::start() {
  omp_set_dynamic(0);
  omp_set_num_threads(threads_);
  std::string why;
  const OpenMP mode = resolve_openmp(setup_.requested, &why);
  if (mode == OpenMP::pin)
    pin();
  else if (setup_.requested == OpenMP::automatic)
    check_inside(why);
}

OpenMpThreads::~OpenMpThreads() {
  restore();
  if (!setup_.start.empty() && !omp_in_parallel()) {
    try {
      topo_->bind_current_thread(setup_.start);
    } catch (...) {  // best effort: the Runtime is going away
    }
  }
  omp_set_num_threads(saved_max_threads_);
  omp_set_dynamic(saved_dynamic_);
}

void OpenMpThreads::pin() {
  const std::vector<int>& cpu_of_thread = setup_.cpu_of_thread;
  RegionJob job;
  job.topo = topo_;
  job.action = Action::pin;
  job.cpus = &cpu_of_thread;
  job.threads = threads_;
  const int ran = run_region(job);
  binding_.assign(static_cast<std::size_t>(threads_), {});
  std::string errors;
  auto add = [&](const std::string& e) { errors += (errors.empty() ? "" : "; ") + e; };
  if (ran < threads_)
    add("OpenMP ran " + std::to_string(ran) + " of the " + std::to_string(threads_) +
        " threads asked for (OMP_THREAD_LIMIT?)");
  for (int i = 0; i < threads_; ++i) {
    ThreadReport& r = job.reports[static_cast<std::size_t>(i)];
    if (!r.done.load(std::memory_order_acquire)) continue;
    const int cpu = cpu_of_thread[static_cast<std::size_t>(i)];
    binding_[static_cast<std::size_t>(i)] = r.cpus;
    if (!r.error.empty())
      add("OpenMP thread " + std::to_string(i) + " asked for cpu " + std::to_string(cpu) + ": " +
          r.error);
    else if (r.cpus.size() != 1 || r.cpus[0] != cpu)
      add("OpenMP thread " + std::to_string(i) + " asked for cpu " + std::to_string(cpu) +
          " but is bound to " +
          (r.cpus.empty() ? std::string("nothing readable") : threads::format_cpu_list(r.cpus)));
  }
  pinned_ = true;
  if (!errors.empty()) {
    restore();
    binding_.clear();
    throw std::runtime_error("OpenMP thread binding failed: " + errors);
  }
}

void OpenMpThreads::check_inside(const std::string& why) const {
  const std::vector<int>& process_cpus = setup_.process_cpus;
  RegionJob job;
  job.topo = topo_;
  job.action = Action::read;
  job.threads = threads_;
  run_region(job);
  std::string outside;
  int count = 0;
  for (int i = 0; i < threads_; ++i) {
    const ThreadReport& r = job.reports[static_cast<std::size_t>(i)];
    if (!r.done.load(std::memory_order_acquire) || r.cpus.empty()) continue;
    const bool inside = std::all_of(r.cpus.begin(), r.cpus.end(), [&](int c) {
      return std::find(process_cpus.begin(), process_cpus.end(), c) != process_cpus.end();
    });
    if (inside) continue;
    outside += (count++ ? ", " : "") + std::to_string(i) + " (cpu" +
               (r.cpus.size() > 1 ? "s " : " ") + threads::format_cpu_list(r.cpus) + ")";
  }
  if (count == 0) return;
  std::fprintf(stderr,
               "compas: rank %d: OpenMP thread%s %s %s bound outside this process's cpus %s (%s "
               "left OpenMP's binding to OpenMP; COMPAS_OPENMP=pin pins its threads like the "
               "team)\n",
               setup_.rank, count > 1 ? "s" : "", outside.c_str(), count > 1 ? "are" : "is",
               threads::format_cpu_list(process_cpus).c_str(), why.c_str());
}

void OpenMpThreads::restore() noexcept {
  if (!pinned_) return;
  pinned_ = false;
  // Not from inside a parallel region (that would be a nested region of other threads), nor
  // without a mask to go back to.
  if (setup_.original.empty() || omp_in_parallel()) return;
  try {
    RegionJob job;
    job.topo = topo_;
    job.action = Action::restore;
    job.cpus = &setup_.original;
    job.threads = threads_;
    run_region(job);
  } catch (...) {  // best effort: the Runtime is going away
  }
}

void OpenMpThreads::wait_for_readers(const Slots& s, int readers) const {
  // Every reader has copied out already (an OpenMP barrier or the end of its region lies
  // between); these loads only make that order visible to ThreadSanitizer.
  for (int i = 1; i < std::min(readers, s.capacity); ++i)
    (void)s.slot[i].copied.load(std::memory_order_acquire);
}

void OpenMpThreads::grow_slots(int threads) {
  if (Slots* old = slots_.load(std::memory_order_relaxed))
    wait_for_readers(*old, old->capacity);  // the new slots do not hold their copies
  auto s = std::make_unique<Slots>();
  s->capacity = threads;
  s->slot = std::make_unique<Slot[]>(static_cast<std::size_t>(threads));
  slots_.store(s.get(), std::memory_order_release);
  all_slots_.push_back(std::move(s));  // earlier ones stay until the end: cheap, and no thread
                                       // can be reading one that is freed
}

void OpenMpThreads::allreduce_in_region(const void* value, void* result, std::size_t size,
                                        Combine combine, const void* op, Across across, void* ctx) {
  const int n = omp_get_num_threads();
  const int tid = omp_get_thread_num();
  Slots* s = slots_.load(std::memory_order_acquire);
  if (s->capacity < n) {  // every thread of the region sees the same capacity
#pragma omp barrier
    if (tid == 0) grow_slots(n);
#pragma omp barrier
    s = slots_.load(std::memory_order_acquire);
  }
  const std::uint32_t call = calls_.load(std::memory_order_acquire);
  Result& r = results_[call & 1u];
  s->slot[tid].value.store(value, std::memory_order_release);
#pragma omp barrier
  if (tid == 0) {
    // Nobody reads results_[call & 1] now: its last readers copied call - 2 out before they
    // published their values for call - 1, or left their region.
    wait_for_readers(*s, r.readers);
    r.readers = n;
    try {
      r.error = nullptr;
      r.message.clear();
      r.bytes.resize(size);
      std::memcpy(r.bytes.data(), value, size);
      for (int i = 1; i < n; ++i)
        combine(r.bytes.data(), s->slot[i].value.load(std::memory_order_acquire), op);
      if (across) across(ctx, r.bytes.data());
    } catch (const std::exception& e) {
      r.error = std::current_exception();
      r.message = e.what();
    } catch (...) {
      r.error = std::current_exception();
      r.message = "an exception that is not a std::exception";
    }
    calls_.store(call + 1, std::memory_order_release);
  }
#pragma omp barrier
  if (tid != 0) (void)calls_.load(std::memory_order_acquire);  // thread 0's writes to r
  if (r.error) {
    const std::exception_ptr error = r.error;
    const std::string message = r.message;
    s->slot[tid].copied.store(call + 1, std::memory_order_release);
    if (tid == 0) std::rethrow_exception(error);
    throw std::runtime_error("Runtime::allreduce: failed on OpenMP thread 0: " + message);
  }
  std::memcpy(result, r.bytes.data(), size);
  s->slot[tid].copied.store(call + 1, std::memory_order_release);
}

}  // namespace compas::detail

namespace compas {

bool Runtime::openmp_pinned() const {
  return openmp_ && openmp_->pinned();
}

const std::vector<std::vector<int>>& Runtime::openmp_binding() const {
  static const std::vector<std::vector<int>> none;
  return openmp_ ? openmp_->binding() : none;
}

bool Runtime::openmp_region_call() const {
  if (!omp_in_parallel()) {
    check_funneled("Runtime::allreduce(value, op)",
                   "inside run() the team's threads use allreduce(t, value, op)");
    return false;
  }
  if (in_run())
    throw std::logic_error(
        "Runtime::allreduce(value, op): called while run() runs; the team's threads use "
        "allreduce(t, value, op)");
  if (omp_get_active_level() == 1 && omp_get_num_threads() > 1) return true;
  throw std::logic_error(
      "Runtime::allreduce(value, op): called from an OpenMP parallel region nested in another "
      "active one; call it from every thread of one region, or from one thread per process "
      "outside any");
}

void Runtime::openmp_allreduce(const void* value, void* result, const ErasedOp& op) {
  struct Ctx {
    Runtime* rt;
    const ErasedOp* op;
  } ctx{this, &op};
  detail::OpenMpThreads::Across across = nullptr;
  if (processes() > 1)
    across = [](void* c, void* acc) {
      auto* x = static_cast<Ctx*>(c);
      x->op->across(*x->rt, acc, x->op->op);
    };
  openmp_->allreduce_in_region(value, result, op.size, op.combine, op.op, across, &ctx);
}

}  // namespace compas

namespace compas::detail {

double openmp_wtime() {
  return omp_get_wtime();
}

}  // namespace compas::detail

namespace compas::detail {

// thread_order.hpp (for the porting layer's update batches): where a thread's updates go at flush,
// and whether a team adds at once.
std::uint64_t batch_order(int thread) {
  if (omp_in_parallel()) return static_cast<std::uint64_t>(omp_get_thread_num());
  return (std::uint64_t{1} << 32) + static_cast<std::uint64_t>(thread);
}
int batch_threads() {
  return std::max(omp_get_max_threads(), 1);
}

}  // namespace compas::detail
