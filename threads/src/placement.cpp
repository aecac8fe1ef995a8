#include "compas/threads/placement.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "compas/threads/team.hpp"  // block_range

namespace compas::threads {

namespace {

int parse_cpu_number(const std::string& s, const std::string& whole) {
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument("invalid cpu list '" + whole + "': '" + s +
                                "' is not a cpu number (expected e.g. 0,2,4-7)");
  return std::atoi(s.c_str());
}

}  // namespace

std::vector<int> parse_cpu_list(const std::string& text) {
  if (text.empty())
    throw std::invalid_argument(
        "invalid cpu list '': expected cpu numbers and ranges, e.g. 0,2,4-7");
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto dash = item.find('-');
    if (dash == std::string::npos) {
      out.push_back(parse_cpu_number(item, text));
    } else {
      const int lo = parse_cpu_number(item.substr(0, dash), text);
      const int hi = parse_cpu_number(item.substr(dash + 1), text);
      if (hi < lo)
        throw std::invalid_argument("invalid cpu list '" + text + "': range '" + item +
                                    "' runs backwards");
      if (hi - lo > 65536)
        throw std::invalid_argument("invalid cpu list '" + text + "': range '" + item +
                                    "' is too large");
      for (int c = lo; c <= hi; ++c) out.push_back(c);
    }
  }
  if (out.empty() || text.back() == ',')
    throw std::invalid_argument("invalid cpu list '" + text + "': empty item");
  return out;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) {
      out += (j == i + 1 ? ',' : '-');
      out += std::to_string(cpus[j]);
    }
    i = j + 1;
  }
  return out;
}

BindSpec BindSpec::parse(const std::string& text) {
  if (text == "compact") return {BindPolicy::compact, {}};
  if (text == "scatter") return {BindPolicy::scatter, {}};
  if (text == "sockets") return {BindPolicy::sockets, {}};
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text[0])))
    return {BindPolicy::list, parse_cpu_list(text)};
  throw std::invalid_argument(
      "invalid bind policy '" + text +
      "': allowed are compact, scatter, sockets or a cpu list like 0,2,4-7");
}

std::string BindSpec::to_string() const {
  switch (policy) {
    case BindPolicy::compact:
      return "compact";
    case BindPolicy::scatter:
      return "scatter";
    case BindPolicy::sockets:
      return "sockets";
    case BindPolicy::list:
      return format_cpu_list(cpus);
  }
  return "?";
}

PuSet whole_machine(const Topology& topo) {
  PuSet s;
  for (int i = 0; i < topo.pus(); ++i) s.pu_indices.push_back(i);
  return s;
}

PuSet process_slice(const Topology& topo, int index, int count) {
  if (count < 1)
    throw std::invalid_argument("invalid process count " + std::to_string(count) +
                                ": must be at least 1");
  if (index < 0 || index >= count)
    throw std::invalid_argument("invalid process index " + std::to_string(index) +
                                ": must be in 0.." + std::to_string(count - 1));
  // Cores in topology order, each with its PUs.
  std::vector<std::vector<int>> cores;
  std::map<int, std::size_t> core_pos;
  const auto& pus = topo.pu_list();
  for (std::size_t i = 0; i < pus.size(); ++i) {
    auto [it, fresh] = core_pos.emplace(pus[i].core, cores.size());
    if (fresh) cores.emplace_back();
    cores[it->second].push_back(static_cast<int>(i));
  }
  PuSet s;
  const int ncores = static_cast<int>(cores.size());
  if (count <= ncores) {
    auto [lo, hi] = block_range(cores.size(), count, index);
    for (std::size_t c = lo; c < hi; ++c)
      s.pu_indices.insert(s.pu_indices.end(), cores[c].begin(), cores[c].end());
  } else {
    s.pu_indices = cores[static_cast<std::size_t>(index % ncores)];
    s.shared = true;
  }
  return s;
}

std::string oversubscription_note(const std::vector<int>& threads, int cores, int pus) {
  auto count = [](int n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  const auto [lo, hi] = std::minmax_element(threads.begin(), threads.end());
  const int most = threads.empty() ? 0 : *hi;
  std::string each = count(most, "thread", "threads");
  if (!threads.empty() && *lo != *hi) each = std::to_string(*lo) + "-" + each;
  std::string host = count(cores, "core", "cores");
  if (pus != cores) host += " (" + std::to_string(pus) + " PUs)";
  return count(static_cast<int>(threads.size()), "process", "processes") + " × " + each + " on " +
         host + ": oversubscribed, waits will back off";
}

std::string Placement::describe() const {
  std::string out;
  for (std::size_t t = 0; t < pu_of_thread.size(); ++t) {
    if (t) out += ' ';
    out += 't';
    out += std::to_string(t);
    out += "->cpu";
    out += std::to_string(pu_of_thread[t]);
  }
  return out;
}

int Placement::sockets_used() const {
  return static_cast<int>(std::set<int>(socket_of_thread.begin(), socket_of_thread.end()).size());
}

Placement place_threads(const Topology& topo, int threads, const BindSpec& spec,
                        bool allow_oversubscribe) {
  return place_threads(topo, whole_machine(topo), threads, spec, allow_oversubscribe);
}

Placement place_threads(const Topology& topo, const PuSet& within, int threads,
                        const BindSpec& spec, bool allow_oversubscribe) {
  if (threads < 1)
    throw std::invalid_argument("invalid thread count " + std::to_string(threads) +
                                ": must be at least 1");
  const auto& pus = topo.pu_list();
  if (within.pu_indices.empty()) throw std::invalid_argument("no PUs to place threads on");

  // `order` is the sequence of PU indices thread 0, 1, 2, ... take.
  std::vector<int> order;
  auto by_smt_then_topology = [&](int a, int b) {
    if (pus[a].smt != pus[b].smt) return pus[a].smt < pus[b].smt;
    return a < b;
  };
  std::vector<int> avail = within.pu_indices;
  std::sort(avail.begin(), avail.end(), by_smt_then_topology);

  // Socket groups, in socket order, each ordered core-first (one PU per core, then siblings).
  std::map<int, std::vector<int>> per_socket;
  for (int i : avail) per_socket[pus[i].socket].push_back(i);

  switch (spec.policy) {
    case BindPolicy::compact:
      order = avail;
      break;
    case BindPolicy::scatter: {
      std::vector<std::size_t> next(per_socket.size(), 0);
      bool progress = true;
      while (progress) {
        progress = false;
        std::size_t s = 0;
        for (auto& [socket, list] : per_socket) {
          if (next[s] < list.size()) {
            order.push_back(list[next[s]++]);
            progress = true;
          }
          ++s;
        }
      }
      break;
    }
    case BindPolicy::sockets: {
      // T/S threads per socket (the first T%S sockets one more), contiguous per socket.
      const int nsock = static_cast<int>(per_socket.size());
      int s = 0;
      for (auto& [socket, list] : per_socket) {
        auto [lo, hi] = block_range(static_cast<std::size_t>(threads), nsock, s++);
        const std::size_t want = hi - lo;
        if (want > list.size() && !allow_oversubscribe)
          throw std::invalid_argument(
              "asked for " + std::to_string(threads) + " threads with --bind sockets: socket " +
              std::to_string(socket) + " would get " + std::to_string(want) +
              " threads but has only " + std::to_string(list.size()) +
              " PUs; use fewer threads or allow oversubscription");
        for (std::size_t k = 0; k < want; ++k) order.push_back(list[k % list.size()]);
      }
      break;
    }
    case BindPolicy::list: {
      std::set<int> allowed(within.pu_indices.begin(), within.pu_indices.end());
      for (int cpu : spec.cpus) {
        const int idx = topo.find_pu(cpu);
        if (idx < 0 || !allowed.count(idx)) {
          std::vector<int> os;
          for (int i : within.pu_indices) os.push_back(pus[i].os_index);
          std::sort(os.begin(), os.end());
          throw std::invalid_argument("cpu " + std::to_string(cpu) +
                                      " in the bind list is not available: allowed cpus are " +
                                      format_cpu_list(os));
        }
        order.push_back(idx);
      }
      break;
    }
  }

  const int distinct = static_cast<int>(std::set<int>(order.begin(), order.end()).size());
  if (threads > distinct && !allow_oversubscribe) {
    throw std::invalid_argument("asked for " + std::to_string(threads) + " threads but only " +
                                std::to_string(distinct) + " PUs are available" +
                                (spec.policy == BindPolicy::list ? " in the bind list" : "") +
                                "; use at most " + std::to_string(distinct) +
                                " threads or allow oversubscription (--oversubscribe)");
  }
  if (spec.policy == BindPolicy::list && !allow_oversubscribe) {
    std::set<int> seen;
    for (int t = 0; t < threads && t < static_cast<int>(order.size()); ++t)
      if (!seen.insert(order[t]).second)
        throw std::invalid_argument("cpu " + std::to_string(pus[order[t]].os_index) +
                                    " appears twice in the bind list; two threads would share "
                                    "it (allow oversubscription to permit this)");
  }

  Placement p;
  std::set<int> used;
  for (int t = 0; t < threads; ++t) {
    const int idx = order[static_cast<std::size_t>(t) % order.size()];
    if (!used.insert(idx).second) p.oversubscribed = true;
    p.pu_of_thread.push_back(pus[idx].os_index);
    p.socket_of_thread.push_back(pus[idx].socket);
  }
  if (within.shared) p.oversubscribed = true;
  return p;
}

std::uint64_t nt_threshold(const Topology& topo, const Placement& placement) {
  std::vector<const CacheLevel*> levels;
  for (const auto& c : topo.caches())
    if (c.type != "instruction" && c.size_bytes > 0) levels.push_back(&c);
  if (levels.empty()) return 0;
  std::sort(levels.begin(), levels.end(),
            [](const auto* x, const auto* y) { return x->level > y->level; });
  const CacheLevel& c = *levels[levels.size() > 1 ? 1 : 0];
  const int per = std::max(1, c.shared_by);
  std::vector<int> instances;
  for (int os : placement.pu_of_thread) {
    const int idx = topo.find_pu(os);
    const int inst = idx < 0 ? 0 : idx / per;
    if (std::find(instances.begin(), instances.end(), inst) == instances.end())
      instances.push_back(inst);
  }
  return c.size_bytes * std::max<std::uint64_t>(1, instances.size());
}

}  // namespace compas::threads
