#include "compas/threads/team.hpp"

#include <cstdio>
#include <stdexcept>

#include "compas/base/env.hpp"
#include "compas/threads/activity.hpp"

namespace compas::threads {

Team::Team(const Topology& topo, const TeamOptions& options) : options_(options), topo_(&topo) {
  if (options.threads < 1)
    throw std::invalid_argument("invalid thread count " + std::to_string(options.threads) +
                                ": must be at least 1");
  if (options.pin && topo.is_synthetic())
    throw std::invalid_argument("cannot pin threads on synthetic topology '" + topo.description() +
                                "'; build the team with pin = false");
  const PuSet within = options.within.pu_indices.empty() ? whole_machine(topo) : options.within;
  placement_ =
      place_threads(topo, within, options.threads, options.bind, options.allow_oversubscribe);
  backoff_oversubscribed_ = placement_.oversubscribed || options.job_oversubscribed;
  backoff_ = resolve(options.wait, backoff_oversubscribed_);
  resolve_timeout();
  barrier_ = make_barrier();

  const int n = options.threads;
  ctx_.resize(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) {
    ThreadCtx& c = ctx_[static_cast<std::size_t>(t)];
    c.team_ = this;
    c.tid_ = t;
    c.nthreads_ = n;
    c.process_ = options.process;
    c.processes_ = options.processes;
    c.socket_ = placement_.socket_of_thread[static_cast<std::size_t>(t)];
    c.cpu_ = placement_.pu_of_thread[static_cast<std::size_t>(t)];
  }
  slots_ = std::make_unique<Slot[]>(static_cast<std::size_t>(n));
  binding_.resize(static_cast<std::size_t>(n));
  binding_errors_.resize(static_cast<std::size_t>(n));

  if (options.pin) {
    caller_original_binding_ = topo.current_thread_binding();
    pin(0);
  }
  workers_.reserve(static_cast<std::size_t>(n - 1));
  for (int t = 1; t < n; ++t) workers_.emplace_back([this, t] { worker_main(t); });
  wait_until_reached(started_, static_cast<std::uint32_t>(n - 1), resolve(WaitPolicy::block, true));

  std::string errors;
  for (const auto& e : binding_errors_)
    if (!e.empty()) errors += (errors.empty() ? "" : "; ") + e;
  if (!errors.empty()) {
    shutdown();
    throw std::runtime_error("thread binding failed: " + errors);
  }
}

Team::~Team() {
  shutdown();
}

void Team::resolve_timeout() {
  if (options_.timeout_s >= 0) {
    timeout_s_ = options_.timeout_s;
    timeout_source_ = "TeamOptions::timeout_s";
    return;
  }
  const auto env = base::env_seconds(base::vars::timeout);
  timeout_s_ = env.value_or(base::kTimeoutDefaultSeconds) + kTeamWaitGrace;
  char text[96];
  std::snprintf(text, sizeof text, "COMPAS_TIMEOUT%s %g s + %g s",
                env ? "" : " unset:", timeout_s_ - kTeamWaitGrace, kTeamWaitGrace);
  timeout_source_ = text;
}

std::unique_ptr<Barrier> Team::make_barrier() const {
  auto b =
      Barrier::create(options_.barrier, options_.threads, backoff_, placement_.socket_of_thread);
  b->set_timeout(timeout_s_,
                 options_.processes > 1 ? "rank " + std::to_string(options_.process) : "",
                 timeout_source_);
  return b;
}

void Team::shutdown() {
  if (!workers_.empty()) {
    stopping_ = true;
    generation_.add_and_wake(1);
    for (auto& w : workers_) w.join();
    workers_.clear();
  }
  if (options_.pin && !caller_original_binding_.empty()) {
    topo_->bind_current_thread(caller_original_binding_);
    caller_original_binding_.clear();
  }
}

void Team::pin(int tid) {
  const int cpu = placement_.pu_of_thread[static_cast<std::size_t>(tid)];
  auto got = topo_->bind_current_thread(cpu);
  binding_[static_cast<std::size_t>(tid)] = got;
  if (got.size() != 1 || got[0] != cpu)
    binding_errors_[static_cast<std::size_t>(tid)] =
        "thread " + std::to_string(tid) + " asked for cpu " + std::to_string(cpu) +
        " but is bound to " +
        (got.empty() ? std::string("nothing readable") : format_cpu_list(got));
}

void Team::worker_main(int tid) {
  if (options_.pin) pin(tid);
  started_.add_and_wake(1);
  // Idle threads wait like `auto`: a quick restart when runs follow each other closely, a
  // futex sleep when the team is idle for long.
  const Backoff idle = resolve(WaitPolicy::automatic, backoff_oversubscribed_);
  std::uint32_t seen = 0;
  for (;;) {
    seen = wait_until_reached(generation_, seen + 1, idle);
    if (stopping_) return;
    run_body(tid);
  }
}

void Team::run_body(int tid) {
  ThreadCtx& ctx = ctx_[static_cast<std::size_t>(tid)];
  try {
    (*body_)(ctx);
  } catch (...) {
    // The first failure is the one reported; a TeamCancelled it caused elsewhere is not.
    if (!failed_.exchange(true)) error_ = std::current_exception();
    barrier_->cancel(tid);
  }
  if (ctx.barriers_ != 0) {
    detail::add_barriers(ctx.barriers_);
    ctx.barriers_ = 0;
  }
  if (tid != 0) finished_.add_and_wake(1);
}

void Team::run(const std::function<void(ThreadCtx&)>& body) {
  failed_.store(false);
  error_ = nullptr;
  body_ = &body;
  ++runs_;
  if (!workers_.empty()) generation_.add_and_wake(1);
  run_body(0);
  // The join: not through the barrier, which a failure cancels.
  if (!workers_.empty())
    wait_until_reached(finished_, runs_ * static_cast<std::uint32_t>(workers_.size()), backoff_);
  body_ = nullptr;
  if (error_) {
    if (barrier_->cancelled()) {
      // Every thread is idle now. The next run gets a fresh barrier, and the collectives' slot
      // parity, which threads that left early did not advance alike, starts over.
      barrier_ = make_barrier();
      for (auto& c : ctx_) c.parity_ = 0;
    }
    std::rethrow_exception(error_);
  }
}

}  // namespace compas::threads
