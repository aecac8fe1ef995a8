// Comm's node barrier: the choice between two-level and dissemination (a vote of all processes
// at construction), the dissemination rounds, and barrier() itself.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/comm/ucx.hpp"
#include "compas/comm/window.hpp"
#include "owner_thread.hpp"
#include "ucx_impl.hpp"

namespace compas::comm {

void Comm::Impl::choose_node_barrier() {
  if (size == 1) return;
  if (size >= (1 << 24))  // the dissemination's signals (see Comm::barrier)
    throw CommError("a job of " + std::to_string(size) + " processes: at most 16777215 allowed");
  // Every process votes (the same collective on all, whatever its options say): two-level only
  // when all want it and every one reaches its host leader by load/store.
  const std::vector<int>& mine = hosts[host_of[rank]];
  const int leader = mine.front();
  const bool want = opt.node_barrier == NodeBarrier::host ||
                    (opt.node_barrier == NodeBarrier::automatic && backoff);
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

void Comm::Impl::dissemination(const std::vector<int>& group, int me, std::uint64_t epoch,
                               std::size_t first_signal) {
  const int n = static_cast<int>(group.size());
  for (int k = 0, d = 1; d < n; ++k, d <<= 1) {
    const int to = group[static_cast<std::size_t>((me + d) % n)];
    const int from = group[static_cast<std::size_t>((me - d + n) % n)];
    ep(from);  // an endpoint to the rank waited for is how its death is noticed
    coll->signal_add(to, first_signal + static_cast<std::size_t>(k), 1);
    coll->wait_until(first_signal + static_cast<std::size_t>(k), epoch, from);
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
// has entered (a store to its own memory); a wait that gave up reads its host's words and adds
// to its error which of them did not arrive.
void Comm::Impl::host_barrier_wait(std::uint64_t epoch, const std::function<void()>& wait) {
  try {
    wait();
  } catch (const CommError& e) {
    const int h = host_of[rank];
    std::vector<int> absent, unread;
    for (int r : hosts[static_cast<std::size_t>(h)]) {
      std::uint64_t entered = 0;
      try {  // mapping a peer's window may connect to it, which fails if it has gone
        if (!coll->direct(r)) throw CommError("not reached by load/store", r);
        coll->get(r, 0, &entered, sizeof entered);
      } catch (const std::exception&) {
        unread.push_back(r);
        continue;
      }
      if (entered < epoch) absent.push_back(r);
    }
    const std::string host = "host '" + host_names[static_cast<std::size_t>(h)] + "' (ranks " +
                             rank_list(hosts[static_cast<std::size_t>(h)]) + ")";
    std::string what;
    if (!absent.empty())
      what = (absent.size() == 1 ? "rank " : "ranks ") + rank_list(absent) +
             " did not arrive, on " + host;
    else if (unread.empty())
      what = "every process of " + host + " arrived" +
             (hosts.size() == 1 ? std::string()
                                : "; its leader, rank " +
                                      std::to_string(hosts[static_cast<std::size_t>(h)].front()) +
                                      ", waits for the other hosts' leaders");
    if (!unread.empty())
      what += (what.empty() ? "" : "; ") + std::string(unread.size() == 1 ? "rank " : "ranks ") +
              rank_list(unread) + " of " + host + " could not be looked at";
    // The wait's own words first ("rank R is unreachable ...", "timed out after ..."), as every
    // wait of the Comm says them.
    throw CommError(
        std::string(e.what()) + "; two-level node barrier #" + std::to_string(epoch) + ": " + what,
        absent.empty() ? e.rank() : absent.front());
  }
}

void Comm::barrier() {
  barrier(NodeBarrier::automatic);
}

std::string Comm::barrier_algorithm() const {
  return impl_->host_barrier ? "host" : "dissemination";
}

bool Comm::host_barrier_possible() const {
  return impl_->size == 1 || impl_->host_barrier_possible;
}

void Comm::barrier(NodeBarrier how) {
  Impl& m = *impl_;
  detail::require_owner_thread(m, "Comm::barrier");
  if (how == NodeBarrier::host && !host_barrier_possible())
    throw std::logic_error(
        "the two-level node barrier needs every process to reach its host leader by load/store");
  const bool host = how == NodeBarrier::automatic ? m.host_barrier : how == NodeBarrier::host;
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
    if (m.coll->direct_fetch_add_signal(leader, kArrive, 1, /*wake=*/false) + 1 == epoch * n)
      m.coll->direct_fetch_add_signal(leader, kRelease, 1);
    else
      m.host_barrier_wait(epoch, [&] {
        m.coll->direct_wait_until(leader, kRelease, epoch, "the host barrier's release");
      });
    return;
  }
  if (m.rank != leader) {
    // The leader may sleep on the arrival word; only it releases.
    m.coll->direct_fetch_add_signal(leader, kArrive, 1);
    m.host_barrier_wait(epoch, [&] {
      m.coll->direct_wait_until(leader, kRelease, epoch, "the host barrier's release", leader);
    });
    return;
  }
  if (n > 1)
    m.host_barrier_wait(epoch, [&] {
      m.coll->direct_wait_until(leader, kArrive, epoch * (n - 1), "this host's processes arriving");
    });
  const int h = m.host_of[m.rank];
  m.dissemination(m.leaders, h, epoch, kLeaders);
  if (n > 1) m.coll->direct_fetch_add_signal(leader, kRelease, 1);
}

}  // namespace compas::comm
