// Comm's process barrier: the choice between two-level and dissemination (a vote of all processes
// at construction), the dissemination rounds, and barrier() itself.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/comm/ucx.hpp"
#include "compas/comm/window.hpp"
#include "internals.hpp"
#include "owner_thread.hpp"
#include "ucx_impl.hpp"

namespace compas::comm {

void CommImpl::choose_process_barrier() {
  if (size == 1) return;
  if (size >= (1 << 24))  // the dissemination's signals (see Comm::barrier)
    throw CommError("a job of " + std::to_string(size) + " processes: at most 16777215 allowed");
  // Every process votes (the same collective on all, whatever its options say): two-level only
  // when all want it and every one reaches its host leader by load/store.
  const std::vector<int>& mine = hosts[host_of[rank]];
  const int leader = mine.front();
  const bool want = opt.process_barrier == ProcessBarrier::host ||
                    (opt.process_barrier == ProcessBarrier::automatic && backoff);
  const bool can = leader == rank || coll->direct(leader);
  const std::vector<std::string> votes =
      boot->allgather(std::string(1, can ? '1' : '0') + (want ? '1' : '0'));
  bool all_can = true, all_want = true;
  for (const auto& v : votes) {
    all_can = all_can && v.size() == 2 && v[0] == '1';
    all_want = all_want && v.size() == 2 && v[1] == '1';
  }
  bool shared = false;  // some host has several processes
  for (const auto& h : hosts) shared = shared || h.size() > 1;
  host_barrier_possible = all_can;
  host_barrier = all_can && all_want && shared;
  for (const auto& h : hosts) leaders.push_back(h.front());
  everyone.resize(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) everyone[static_cast<std::size_t>(r)] = r;
}

void CommImpl::dissemination(const std::vector<int>& group, int me, std::uint64_t epoch,
                             std::size_t first_signal,
                             const std::function<void(const std::function<void()>&)>& guard) {
  const int n = static_cast<int>(group.size());
  for (int k = 0, d = 1; d < n; ++k, d <<= 1) {
    const int to = group[static_cast<std::size_t>((me + d) % n)];
    const int from = group[static_cast<std::size_t>((me - d + n) % n)];
    ep(from);  // an endpoint to the rank waited for is how its death is noticed
    const std::size_t signal = first_signal + static_cast<std::size_t>(k);
    coll->signal_add(to, signal, 1);
    const auto wait = [&] { coll->wait_until(signal, epoch, from); };
    if (guard)
      guard(wait);
    else
      wait();
  }
}

namespace {

// "1", "1, 2"
std::string rank_list(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

}  // namespace

// Each process keeps in the first word of its coll window the number of two-level barriers it
// has entered (a store to its own memory): which processes of this host have not entered barrier
// `epoch`, and which could not be looked at.
CommImpl::HostLook CommImpl::look_at_host(std::uint64_t epoch) {
  HostLook look;
  for (int r : hosts[static_cast<std::size_t>(host_of[rank])]) {
    std::uint64_t entered = 0;
    try {  // mapping a peer's window may connect to it, which fails if it has gone
      if (!coll->direct(r)) throw CommError("not reached by load/store", r);
      coll->get(r, 0, &entered, sizeof entered);
    } catch (const std::exception&) {
      look.unread.push_back(r);
      continue;
    }
    if (entered < epoch) look.absent.push_back(r);
  }
  return look;
}

// "rank 1 did not arrive, on host 'vm' (ranks 0, 1, 2)", or that all did.
std::string CommImpl::describe_host(const HostLook& look, bool waited_twice) const {
  const auto& mine = hosts[static_cast<std::size_t>(host_of[rank])];
  const std::string host = "host '" + host_names[static_cast<std::size_t>(host_of[rank])] +
                           "' (ranks " + rank_list(mine) + ")";
  std::string what;
  if (!look.absent.empty())
    what = (look.absent.size() == 1 ? "rank " : "ranks ") + rank_list(look.absent) +
           " did not arrive, on " + host;
  else if (look.unread.empty())
    what = "every process of " + host + " arrived" +
           (hosts.size() == 1 ? std::string()
                              : "; its leader, rank " + std::to_string(mine.front()) +
                                    ", waits for the other hosts' leaders");
  if (!look.unread.empty())
    what += (what.empty() ? "" : "; ") + std::string(look.unread.size() == 1 ? "rank " : "ranks ") +
            rank_list(look.unread) + " of " + host + " could not be looked at";
  if (waited_twice)
    what += " (it waited one COMPAS_TIMEOUT more for the host a process is missing from to say so)";
  return what;
}

void CommImpl::host_barrier_wait(std::uint64_t epoch, const std::function<void()>& wait) {
  const bool was_failed = failed.load();
  for (int attempt = 0;; ++attempt) {
    try {
      wait();
      failed.store(was_failed);  // a first timeout that the second wait outlasted
      return;
    } catch (const CommError& e) {
      const HostLook look = look_at_host(epoch);
      const bool timed_out = std::string(e.what()).rfind("timed out after ", 0) == 0;
      if (attempt == 0 && hosts.size() > 1 && timed_out && look.absent.empty() &&
          look.unread.empty())
        continue;
      throw CommError(std::string(e.what()) + "; two-level process barrier #" +
                          std::to_string(epoch) + ": " + describe_host(look, attempt > 0),
                      look.absent.empty() ? e.rank() : look.absent.front());
    }
  }
}

void Comm::barrier() {
  barrier(ProcessBarrier::automatic);
}

std::string Comm::barrier_algorithm() const {
  return impl_->host_barrier ? "host" : "dissemination";
}

bool Comm::host_barrier_possible() const {
  return impl_->size == 1 || impl_->host_barrier_possible;
}

void Comm::barrier(ProcessBarrier how) {
  Impl& m = *impl_;
  detail::require_owner_thread(m, "Comm::barrier");
  if (how == ProcessBarrier::host && !host_barrier_possible())
    throw std::logic_error(
        "the two-level process barrier needs every process to reach its host leader by load/store");
  const bool host = how == ProcessBarrier::automatic ? m.host_barrier : how == ProcessBarrier::host;
  if (m.size == 1) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return;
  }
  std::lock_guard lock(m.barrier_mu);
  flush_all();
  // The coll window's signals: 0-23 the dissemination among all (P < 2^24), 24-47 the one among
  // host leaders, 48 and 56 (lines of their own) the host's arrival and release words. Each
  // algorithm counts its own barriers, so the two may alternate.
  constexpr std::size_t kLeaders = 24, kArrive = 48, kRelease = 56;
  if (!host) {
    m.dissemination(m.everyone, m.rank, ++m.barrier_epoch, 0);
    return;
  }
  const std::uint64_t epoch = ++m.host_barrier_epoch;
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(m.coll->local()))
      .store(epoch, std::memory_order_relaxed);
  const std::vector<int>& mine = m.hosts[static_cast<std::size_t>(m.host_of[m.rank])];
  const int leader = mine.front();
  const auto n = static_cast<std::uint64_t>(mine.size());
  if (m.hosts.size() == 1) {
    // Nobody sleeps on the arrival word here; the last to arrive (any process) releases.
    if (detail::Internals::direct_fetch_add_signal(*m.coll, leader, kArrive, 1, /*wake=*/false) +
            1 ==
        epoch * n)
      detail::Internals::direct_fetch_add_signal(*m.coll, leader, kRelease, 1);
    else
      m.host_barrier_wait(epoch, [&] {
        detail::Internals::direct_wait_until(*m.coll, leader, kRelease, epoch,
                                             "the host barrier's release");
      });
    return;
  }
  if (m.rank != leader) {
    // The leader may sleep on the arrival word; only it releases.
    detail::Internals::direct_fetch_add_signal(*m.coll, leader, kArrive, 1);
    m.host_barrier_wait(epoch, [&] {
      detail::Internals::direct_wait_until(*m.coll, leader, kRelease, epoch,
                                           "the host barrier's release", leader);
    });
    return;
  }
  if (n > 1)
    m.host_barrier_wait(epoch, [&] {
      detail::Internals::direct_wait_until(*m.coll, leader, kArrive, epoch * (n - 1),
                                           "this host's processes arriving");
    });
  const int h = m.host_of[m.rank];
  m.dissemination(m.leaders, h, epoch, kLeaders,
                  [&](const std::function<void()>& wait) { m.host_barrier_wait(epoch, wait); });
  if (n > 1) detail::Internals::direct_fetch_add_signal(*m.coll, leader, kRelease, 1);
}

}  // namespace compas::comm
