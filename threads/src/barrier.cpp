#include "compas/threads/barrier.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace compas::threads {

namespace {

// After cancelled_ is set: wakes the word's sleepers so that they see it.
void release_word(WaitWord& w) noexcept {
  w.add_and_wake(0);
}

// Each thread's episode number, on its own line: a thread writes only its own (plain loads and
// stores; atomic only so that a thread that timed out may read the others').
struct alignas(64) Episode {
  std::atomic<std::uint32_t> value{0};
  std::uint32_t next() noexcept {
    const std::uint32_t e = value.load(std::memory_order_relaxed) + 1;
    value.store(e, std::memory_order_relaxed);
    return e;
  }
};

struct alignas(64) Counter {
  std::atomic<int> remaining{0};
};

// Sense-reversing central barrier: the episode number plays the role of the sense, so there is
// nothing to flip back and no ABA between consecutive episodes.
class CentralBarrier final : public Barrier {
 public:
  CentralBarrier(int threads, Backoff b) : Barrier(b), n_(threads), episode_(threads) {
    count_.remaining.store(threads, std::memory_order_relaxed);
  }
  bool wait(int tid) noexcept override {
    const std::uint32_t e = episode_[static_cast<std::size_t>(tid)].next();
    if (cancelled_.load(std::memory_order_relaxed) && hopeless(e)) [[unlikely]]
      return false;
    if (count_.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      count_.remaining.store(n_, std::memory_order_relaxed);
      release_.publish(e, backoff_);
      return true;
    }
    return await(release_, e, tid);
  }
  int threads() const noexcept override { return n_; }
  BarrierAlgorithm algorithm() const noexcept override { return BarrierAlgorithm::central; }

 private:
  void release_all() noexcept override { release_word(release_); }
  std::uint32_t entered(int tid) const noexcept override {
    return episode_[static_cast<std::size_t>(tid)].value.load(std::memory_order_relaxed);
  }
  const int n_;
  Counter count_;
  WaitWord release_;
  std::vector<Episode> episode_;
};

// Dissemination barrier (Hensgen, Finkel, Manber): in round r thread i signals thread
// (i + 2^r) mod n and waits for thread (i - 2^r) mod n. Each flag has one writer, and its value
// is the episode number, which only grows, so a flag never needs resetting.
class DisseminationBarrier final : public Barrier {
 public:
  DisseminationBarrier(int threads, Backoff b) : Barrier(b), n_(threads), episode_(threads) {
    while ((1 << rounds_) < n_) ++rounds_;
    flags_ = std::make_unique<WaitWord[]>(static_cast<std::size_t>(rounds_ * n_));
  }
  bool wait(int tid) noexcept override {
    const std::uint32_t e = episode_[static_cast<std::size_t>(tid)].next();
    if (cancelled_.load(std::memory_order_relaxed) && hopeless(e)) [[unlikely]]
      return false;
    for (int r = 0; r < rounds_; ++r) {
      const int partner = (tid + (1 << r)) % n_;
      flag(r, partner).publish(e, backoff_);
      if (!await(flag(r, tid), e, tid)) return false;
    }
    return true;
  }
  int threads() const noexcept override { return n_; }
  BarrierAlgorithm algorithm() const noexcept override { return BarrierAlgorithm::dissemination; }

 private:
  void release_all() noexcept override {
    for (int i = 0; i < rounds_ * n_; ++i) release_word(flags_[static_cast<std::size_t>(i)]);
  }
  std::uint32_t entered(int tid) const noexcept override {
    return episode_[static_cast<std::size_t>(tid)].value.load(std::memory_order_relaxed);
  }
  WaitWord& flag(int round, int thread) {
    return flags_[static_cast<std::size_t>(round * n_ + thread)];
  }
  const int n_;
  int rounds_ = 0;
  std::unique_ptr<WaitWord[]> flags_;
  std::vector<Episode> episode_;
};

// Two-level barrier: threads of one socket meet on their socket's counter; the last of each
// socket meets the other sockets' last arrivers on a top counter; the last of those releases
// every socket through the socket's own flag, which its threads read locally.
class TreeBarrier final : public Barrier {
 public:
  TreeBarrier(int threads, Backoff b, const std::vector<int>& socket_of_thread)
      : Barrier(b), n_(threads), episode_(threads), group_of_(threads, 0) {
    std::map<int, int> group_index;
    for (int t = 0; t < threads; ++t) {
      const int s = socket_of_thread.empty() ? 0 : socket_of_thread[static_cast<std::size_t>(t)];
      auto [it, fresh] = group_index.emplace(s, static_cast<int>(group_index.size()));
      group_of_[static_cast<std::size_t>(t)] = it->second;
    }
    ngroups_ = static_cast<int>(group_index.size());
    groups_ = std::make_unique<Group[]>(static_cast<std::size_t>(ngroups_));
    for (int t = 0; t < threads; ++t) groups_[static_cast<std::size_t>(group_of_[t])].size++;
    for (int g = 0; g < ngroups_; ++g)
      groups_[static_cast<std::size_t>(g)].count.remaining.store(groups_[g].size);
    top_.remaining.store(ngroups_);
  }
  bool wait(int tid) noexcept override {
    const std::uint32_t e = episode_[static_cast<std::size_t>(tid)].next();
    if (cancelled_.load(std::memory_order_relaxed) && hopeless(e)) [[unlikely]]
      return false;
    Group& g = groups_[static_cast<std::size_t>(group_of_[static_cast<std::size_t>(tid)])];
    if (g.count.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      g.count.remaining.store(g.size, std::memory_order_relaxed);
      if (top_.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        top_.remaining.store(ngroups_, std::memory_order_relaxed);
        for (int k = 0; k < ngroups_; ++k)
          groups_[static_cast<std::size_t>(k)].release.publish(e, backoff_);
        return true;
      }
    }
    return await(g.release, e, tid);
  }
  int threads() const noexcept override { return n_; }
  BarrierAlgorithm algorithm() const noexcept override { return BarrierAlgorithm::tree; }

 private:
  void release_all() noexcept override {
    for (int g = 0; g < ngroups_; ++g) release_word(groups_[static_cast<std::size_t>(g)].release);
  }
  std::uint32_t entered(int tid) const noexcept override {
    return episode_[static_cast<std::size_t>(tid)].value.load(std::memory_order_relaxed);
  }
  struct Group {
    Counter count;
    WaitWord release;
    int size = 0;
  };
  const int n_;
  int ngroups_ = 0;
  std::unique_ptr<Group[]> groups_;
  Counter top_;
  std::vector<Episode> episode_;
  std::vector<int> group_of_;
};

}  // namespace

bool Barrier::await(WaitWord& word, std::uint32_t e, int tid) noexcept {
  WaitLimit limit{timeout_s_};
  std::uint32_t v =
      wait_until_reached(word, e, backoff_, &cancelled_, timeout_s_ > 0 ? &limit : nullptr);
  if (limit.expired && !reached(v, e)) timed_out(e, tid);
  // Cancelled: give up only on an episode the failed thread never entered; the others complete
  // (every thread has entered them). That is the rare path: poll, with a short sleep.
  while (!reached(v, e)) {
    if (hopeless(e)) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    v = word.value.load(std::memory_order_acquire);
  }
  return true;
}

void Barrier::timed_out(std::uint32_t e, int tid) const noexcept {
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true)) {
    std::string absent;
    int count = 0;
    for (int t = 0; t < threads(); ++t)
      if (!reached(entered(t), e)) {
        absent += (count++ ? ", " : "") + std::to_string(t);
      }
    const std::string what =
        count == 0 ? "every thread arrived but the barrier did not complete"
                   : (count == 1 ? "thread " : "threads ") + absent + " did not arrive";
    std::fprintf(stderr,
                 "compas: %s%steam barrier: %s within %g s (%s) while thread %d of %d waited "
                 "(episode %u); ending the process\n",
                 who_.c_str(), who_.empty() ? "" : ": ", what.c_str(), timeout_s_, limit_.c_str(),
                 tid, threads(), e);
    std::fflush(stderr);
    std::_Exit(1);
  }
  for (;;) pause();  // another thread reports and ends the process
}

void Barrier::cancel(int tid) noexcept {
  const std::uint32_t mine = entered(tid);
  {
    std::lock_guard lock(cancel_mu_);
    if (!cancelled_.load(std::memory_order_relaxed) ||
        static_cast<std::int32_t>(mine - last_episode_.load(std::memory_order_relaxed)) < 0)
      last_episode_.store(mine, std::memory_order_seq_cst);
    cancelled_.store(true, std::memory_order_seq_cst);
  }
  release_all();
}

BarrierAlgorithm parse_barrier_algorithm(const std::string& text) {
  if (text == "central") return BarrierAlgorithm::central;
  if (text == "dissemination") return BarrierAlgorithm::dissemination;
  if (text == "tree") return BarrierAlgorithm::tree;
  throw std::invalid_argument("invalid barrier algorithm '" + text +
                              "': allowed are central, dissemination, tree");
}

std::string to_string(BarrierAlgorithm algorithm) {
  switch (algorithm) {
    case BarrierAlgorithm::central:
      return "central";
    case BarrierAlgorithm::dissemination:
      return "dissemination";
    case BarrierAlgorithm::tree:
      return "tree";
  }
  return "?";
}

std::unique_ptr<Barrier> Barrier::create(BarrierAlgorithm algorithm, int threads, Backoff backoff,
                                         const std::vector<int>& socket_of_thread) {
  if (threads < 1)
    throw std::invalid_argument("invalid barrier size " + std::to_string(threads) +
                                ": must be at least 1");
  if (!socket_of_thread.empty() && static_cast<int>(socket_of_thread.size()) != threads)
    throw std::invalid_argument("socket_of_thread has " + std::to_string(socket_of_thread.size()) +
                                " entries for " + std::to_string(threads) + " threads");
  switch (algorithm) {
    case BarrierAlgorithm::central:
      return std::make_unique<CentralBarrier>(threads, backoff);
    case BarrierAlgorithm::dissemination:
      return std::make_unique<DisseminationBarrier>(threads, backoff);
    case BarrierAlgorithm::tree:
      return std::make_unique<TreeBarrier>(threads, backoff, socket_of_thread);
  }
  throw std::invalid_argument("unknown barrier algorithm");
}

}  // namespace compas::threads
