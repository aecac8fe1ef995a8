// Affinity domains and workgroups (domain.hpp).
#include "compas/threads/domain.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>

#include "compas/base/size.hpp"

namespace compas::threads {

namespace {

constexpr const char* kAllowed = "N, S<i> (socket), M<i> (NUMA node) or C<i> (last-level cache)";

// The last-level data or unified cache: its instances, and the PUs each is shared by.
const CacheLevel* last_level(const Topology& topo) {
  const CacheLevel* best = nullptr;
  for (const auto& c : topo.caches())
    if (c.type != "instruction" && (!best || c.level > best->level)) best = &c;
  return best;
}

bool in_domain(const Topology& topo, const Pu& pu, std::size_t position, const Domain& d) {
  switch (d.kind) {
    case 'S':
      return pu.socket == d.index;
    case 'M':
      return pu.numa == d.index;
    case 'C': {
      const CacheLevel* llc = last_level(topo);
      const int shared = llc && llc->shared_by > 0 ? llc->shared_by : topo.pus();
      return static_cast<int>(position) / shared == d.index;
    }
    default:
      return true;
  }
}

}  // namespace

std::string Domain::name() const {
  return kind == 'N' ? "N" : std::string(1, kind) + std::to_string(index);
}

Domain parse_domain(const std::string& text) {
  const auto bad = [&] {
    return std::invalid_argument("domain '" + text + "' is not allowed: expected " + kAllowed);
  };
  if (text == "N") return {'N', 0};
  if (text.size() < 2 || std::string("SMC").find(text[0]) == std::string::npos) throw bad();
  const std::string digits = text.substr(1);
  if (digits.size() > 6 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw bad();
  return {text[0], std::stoi(digits)};
}

int domain_count(const Topology& topo, char kind) {
  switch (kind) {
    case 'S':
      return std::max(topo.sockets(), 1);
    case 'M':
      return std::max(topo.numa_nodes(), 1);
    case 'C': {
      const CacheLevel* llc = last_level(topo);
      return llc && llc->shared_by > 0
                 ? std::max(1, (topo.pus() + llc->shared_by - 1) / llc->shared_by)
                 : 1;
    }
    default:
      return 1;
  }
}

std::vector<int> fill_order(const Topology& topo, const std::vector<int>& pu_indices) {
  std::vector<int> order(pu_indices);
  const auto& pus = topo.pu_list();
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const Pu &x = pus[static_cast<std::size_t>(a)], &y = pus[static_cast<std::size_t>(b)];
    return x.smt != y.smt ? x.smt < y.smt : false;
  });
  std::vector<int> os;
  for (int i : order) os.push_back(pus[static_cast<std::size_t>(i)].os_index);
  return os;
}

std::vector<int> domain_pus(const Topology& topo, const Domain& domain) {
  const int count = domain_count(topo, domain.kind);
  if (domain.index < 0 || domain.index >= count)
    throw std::invalid_argument(
        "domain '" + domain.name() + "' does not exist here: this machine has " +
        (count == 1 ? domain.name().substr(0, 1) + "0"
                    : std::string(1, domain.kind) + "0-" + std::string(1, domain.kind) +
                          std::to_string(count - 1)));
  std::vector<int> indices;
  const auto& pus = topo.pu_list();
  for (std::size_t i = 0; i < pus.size(); ++i)
    if (in_domain(topo, pus[i], i, domain)) indices.push_back(static_cast<int>(i));
  return fill_order(topo, indices);
}

void bind_memory_to_numa(const Topology& topo, void* addr, std::size_t bytes, int numa) {
  const int nodes = domain_count(topo, 'M');
  if (numa < 0 || numa >= nodes)
    throw std::invalid_argument("NUMA node " + std::to_string(numa) +
                                " does not exist here: this machine has M0-M" +
                                std::to_string(nodes - 1));
  if (topo.is_synthetic())
    throw std::runtime_error("memory cannot be bound on a synthetic topology");
  auto* t = static_cast<hwloc_topology_t>(topo.native_handle());
  hwloc_obj_t node = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(numa));
  if (!node) throw std::runtime_error("hwloc has no NUMA node " + std::to_string(numa));
  if (hwloc_set_area_membind(t, addr, bytes, node->nodeset, HWLOC_MEMBIND_BIND,
                             HWLOC_MEMBIND_BYNODESET) != 0)
    throw std::runtime_error("cannot bind memory to NUMA node " + std::to_string(numa) + ": " +
                             std::strerror(errno));
}

std::vector<NumaCell> numa_matrix_cells(const Topology& topo, int threads) {
  const int nodes = domain_count(topo, 'M');
  std::vector<NumaCell> cells;
  for (int i = 0; i < nodes; ++i) {
    std::vector<int> pus = domain_pus(topo, {'M', i});
    std::set<int> cores;  // one PU per core: the fill order gives every core's first PU first
    for (int os : pus)
      cores.insert(topo.pu_list()[static_cast<std::size_t>(topo.find_pu(os))].core);
    const std::size_t keep =
        threads > 0 ? std::min<std::size_t>(static_cast<std::size_t>(threads), pus.size())
                    : cores.size();
    pus.resize(keep);
    for (int j = 0; j < nodes; ++j) cells.push_back({i, j, pus});
  }
  return cells;
}

Workgroup parse_workgroup(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("workgroup '" + text + "' is not allowed: " + why +
                                 " (expected DOMAIN:SIZE[:THREADS], e.g. S0:1GB:4)");
  };
  const auto first = text.find(':');
  if (first == std::string::npos) throw bad("no size");
  const auto second = text.find(':', first + 1);
  Workgroup w;
  try {
    w.domain = parse_domain(text.substr(0, first));
  } catch (const std::invalid_argument& e) {
    throw bad(e.what());
  }
  const std::string size =
      text.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1);
  try {
    w.size_bytes = base::parse_size(size);
  } catch (const std::invalid_argument& e) {
    throw bad(e.what());
  }
  if (w.size_bytes == 0) throw bad("a size of 0");
  if (second != std::string::npos) {
    const std::string t = text.substr(second + 1);
    if (t.empty() || t.size() > 6 ||
        !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoi(t) < 1)
      throw bad("threads '" + t + "' must be a whole number of at least 1");
    w.threads = std::stoi(t);
  }
  return w;
}

}  // namespace compas::threads
