// Loaded latency: the names of traffic mixes and placements, the parsers of their flags, and the
// cpus of the chaser and the traffic threads. See compas/probes/loaded_latency.hpp.
#include <algorithm>
#include <functional>
#include <stdexcept>

#include "compas/probes/loaded_latency.hpp"

namespace compas::probes {

// ---- names ------------------------------------------------------------------------------------

std::string to_string(TrafficMix m) {
  switch (m) {
    case TrafficMix::read:
      return "read";
    case TrafficMix::rw:
      return "rw";
    case TrafficMix::stream:
      return "stream";
  }
  return "?";
}

int traffic_arrays(TrafficMix m) {
  return m == TrafficMix::rw ? 2 : 1;
}

namespace {

// The items of a comma list; an empty list or item is refused, naming `what` and the list.
std::vector<std::string> split_list(const std::string& what, const std::string& list,
                                    const std::string& example) {
  std::vector<std::string> items;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = list.find(',', pos);
    items.push_back(list.substr(pos, comma == std::string::npos ? comma : comma - pos));
    if (items.back().empty())
      throw std::invalid_argument(what + " '" + list + "': empty item; expected a list like " +
                                  example);
    if (comma == std::string::npos) return items;
    pos = comma + 1;
  }
}

std::uint64_t parse_delay(const std::string& list, const std::string& item) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("--delays '" + list + "': '" + item + "' " + why +
                                 "; allowed are whole ns in 0.." + std::to_string(kMaxDelayNs) +
                                 ", or auto");
  };
  if (item.find_first_not_of("0123456789") != std::string::npos)
    throw bad(item[0] == '-' ? "is negative" : "is not a whole number of ns");
  if (item.size() > 7 || std::stoull(item) > kMaxDelayNs) throw bad("is too large");
  return std::stoull(item);
}

}  // namespace

std::vector<TrafficMix> parse_traffic_mixes(const std::string& list) {
  std::vector<TrafficMix> out;
  for (const auto& item : split_list("--mix", list, "read,rw,stream")) {
    TrafficMix m;
    if (item == "read")
      m = TrafficMix::read;
    else if (item == "rw")
      m = TrafficMix::rw;
    else if (item == "stream")
      m = TrafficMix::stream;
    else
      throw std::invalid_argument("--mix '" + list + "': '" + item +
                                  "' is not one of read, rw, stream");
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  }
  return out;
}

std::string to_string(TrafficOn t) {
  return t == TrafficOn::same ? "same" : "other";
}

TrafficOn parse_traffic_on(const std::string& text) {
  if (text == "same") return TrafficOn::same;
  if (text == "other") return TrafficOn::other;
  throw std::invalid_argument("--traffic-on '" + text +
                              "': allowed are same (the chaser's NUMA node or socket) and other "
                              "(another one)");
}

std::vector<std::uint64_t> default_delays() {
  return {50000, 20000, 10000, 5000, 2000, 1000, 500, 200, 100, 50, 20, 0};
}

std::vector<std::uint64_t> parse_delays(const std::string& text) {
  if (text == "auto") return default_delays();
  std::vector<std::uint64_t> out;
  for (const auto& item : split_list("--delays", text, "0,100,1000 (ns) or auto"))
    out.push_back(parse_delay(text, item));
  std::sort(out.begin(), out.end(), std::greater<>());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::size_t default_chase_bytes(const threads::Topology& topo) {
  std::uint64_t llc = 0;
  int level = 0;
  for (const auto& c : topo.caches())
    if (c.type != "instruction" && c.level > level) llc = c.size_bytes, level = c.level;
  return static_cast<std::size_t>(std::max<std::uint64_t>(8 * llc, std::uint64_t{256} << 20));
}

// ---- placement --------------------------------------------------------------------------------

namespace {

// Nodes are NUMA nodes where there are several, else sockets.
int node_of(const threads::Topology& topo, const threads::Pu& p) {
  return topo.numa_nodes() > 1 ? p.numa : p.socket;
}

std::string node_word(const threads::Topology& topo) {
  return topo.numa_nodes() > 1 ? "NUMA node" : "socket";
}

int traffic_node(const threads::Topology& topo, TrafficOn on) {
  const int home = node_of(topo, topo.pu_list().front());
  if (on == TrafficOn::same) return home;
  for (const auto& p : topo.pu_list())
    if (node_of(topo, p) != home) return node_of(topo, p);
  throw std::invalid_argument(
      "--traffic-on other: this machine (as this process sees it) has one socket and one NUMA "
      "node, so there is no other node to put the traffic on; use --traffic-on same");
}

}  // namespace

std::vector<int> loaded_latency_cpus(const threads::Topology& topo, TrafficOn on,
                                     int traffic_threads) {
  if (topo.pu_list().empty()) throw std::invalid_argument("loaded latency: no cpus");
  if (traffic_threads < 0)
    throw std::invalid_argument("loaded latency: negative traffic thread count");
  const threads::Pu& chaser = topo.pu_list().front();
  const int node = traffic_node(topo, on);
  std::vector<int> cores = {chaser.core}, cpus = {chaser.os_index};
  for (const auto& p : topo.pu_list()) {
    if (node_of(topo, p) != node || std::find(cores.begin(), cores.end(), p.core) != cores.end())
      continue;
    cores.push_back(p.core);
    cpus.push_back(p.os_index);
  }
  const int room = static_cast<int>(cpus.size()) - 1;
  const std::string where =
      on == TrafficOn::same ? "the chaser's " + node_word(topo) : "the other " + node_word(topo);
  if (room == 0)
    throw std::invalid_argument("loaded latency needs a core besides the chaser's on " + where +
                                " for traffic; this process may use none");
  if (traffic_threads > room)
    throw std::invalid_argument("--threads " + std::to_string(traffic_threads + 1) + ": at most " +
                                std::to_string(room + 1) + " (the chaser and " +
                                std::to_string(room) + " traffic thread" + (room == 1 ? "" : "s") +
                                ", one per core of " + where + ")");
  if (traffic_threads > 0) cpus.resize(static_cast<std::size_t>(traffic_threads) + 1);
  return cpus;
}

}  // namespace compas::probes
