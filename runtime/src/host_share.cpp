#include "host_share.hpp"

#include <algorithm>
#include <iterator>
#include <set>

namespace compas::detail {

namespace {

std::string os_cpus(const threads::Topology& topo, const threads::PuSet& set) {
  std::vector<int> os;
  for (int i : set.pu_indices) os.push_back(topo.pu_list()[static_cast<std::size_t>(i)].os_index);
  std::sort(os.begin(), os.end());
  return threads::format_cpu_list(os);
}

bool overlap(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  return !both.empty();
}

}  // namespace

HostShare share_host_cpus(const threads::Topology& topo, const comm::Comm& comm,
                          threads::PuSet within, bool explicit_cpus) {
  HostShare out{std::move(within), {}};
  const int me = comm.rank();
  const auto& local = comm.hosts()[static_cast<std::size_t>(comm.host_of(me))];
  if (explicit_cpus || local.size() < 2) return out;
  const std::vector<int>& mine = comm.cpus_of(me);
  const bool all_same =
      std::all_of(local.begin(), local.end(), [&](int r) { return comm.cpus_of(r) == mine; });
  if (!all_same) {
    // The lowest rank of the first overlapping pair says it.
    const auto other = std::find_if(local.begin(), local.end(), [&](int r) {
      return r != me && overlap(comm.cpus_of(r), mine);
    });
    if (other != local.end() && *other > me)
      out.notice = "compas: rank " + std::to_string(me) + " and rank " + std::to_string(*other) +
                   " were given overlapping cpus (" + threads::format_cpu_list(mine) + " and " +
                   threads::format_cpu_list(comm.cpus_of(*other)) +
                   "): their threads may share cores; bind the processes apart with the launcher";
    return out;
  }
  const int count = static_cast<int>(local.size());
  const int index = static_cast<int>(std::find(local.begin(), local.end(), me) - local.begin());
  out.within = threads::process_slice(topo, index, count);
  if (local.front() == me) {
    std::string shares;
    for (int i = 0; i < count; ++i)
      shares += (i ? ", rank " : "rank ") + std::to_string(local[static_cast<std::size_t>(i)]) +
                " on " + os_cpus(topo, threads::process_slice(topo, i, count));
    out.notice = "compas: the " + std::to_string(count) +
                 " processes on this host were all given cpus " + threads::format_cpu_list(mine) +
                 " (the launcher did not bind them apart): each takes its own share, as "
                 "compas-run does (" +
                 shares + ")";
  }
  return out;
}

std::string host_oversubscription_note(const comm::Comm& comm, bool shared_slices) {
  const auto& o = comm.options();
  const int me = comm.rank();
  const auto& local = comm.hosts()[static_cast<std::size_t>(comm.host_of(me))];
  if (local.front() != me || o.oversubscribed_given || !(o.oversubscribed || shared_slices))
    return "";
  std::set<int> cpus;
  std::vector<int> threads;
  for (int r : local) {
    cpus.insert(comm.cpus_of(r).begin(), comm.cpus_of(r).end());
    threads.push_back(comm.threads_of(r));
  }
  // This process's topology shows its own mask only; the cores are counted on the whole host.
  const auto machine = threads::Topology::machine();
  std::set<int> cores;
  int pus = 0;
  for (const auto& pu : machine.pu_list())
    if (cpus.count(pu.os_index)) {
      cores.insert(pu.core);
      ++pus;
    }
  return "compas: " + threads::oversubscription_note(threads, static_cast<int>(cores.size()), pus);
}

}  // namespace compas::detail
