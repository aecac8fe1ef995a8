// comm_scale: what joining a job costs one process as the job grows. Run under a launcher:
//
//   compas-run -n P comm_scale [--json FILE] [--window-bytes N] [--signals N] [--quiet]
//
// Every rank measures, from main() entry (steady clock): bootstrap formed, Comm constructed, a
// first Window<std::byte> created (1 MiB, 8 signals by default); its resident set (VmRSS, with
// the anonymous and shared-memory parts) after each step; and then the cost of endpoints: it
// connects to k = 1, 2, 4, ... P-1 peers (an 8-byte put to rank (rank + i) % P for each new i,
// then a flush to it) and reads VmRSS and Comm::connected_peers() after every k. The slope of
// VmRSS against k (least squares over k >= 1, so that one-time costs of the first put stay out;
// with P = 2 the step from k = 0 to 1) is the memory a peer costs once it is talked to: its
// endpoint where none existed, its unpacked window key and mapping. The endpoints before the first
// put show that they are created lazily: only the process barrier's partners (at most
// 2 ceil(log2 P), from the barrier in the window's creation) are connected by then. The process
// age at main() (from /proc/self/stat, 10 ms resolution) covers exec and dynamic loading.
//
// Ranks send their figures to rank 0 over the bootstrap's allgather; rank 0 prints the median,
// min and max over ranks and writes them (and every rank's figures) as JSON.
#include <fmt/core.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/base/env.hpp"
#include "compas/base/statistics.hpp"
#include "compas/comm/bootstrap.hpp"
#include "compas/comm/ucx.hpp"
#include "compas/comm/window.hpp"
#include "compas/report/report.hpp"
#include "compas/threads/topology.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using json = compas::report::json;

struct Args {
  std::string json_path;
  std::size_t window_bytes = std::size_t{1} << 20;
  std::size_t signals = 8;
  bool quiet = false;
};

std::size_t parse_count(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || errno || *end || v < 1)
    throw std::invalid_argument(flag + " '" + text + "' is not a positive integer");
  return static_cast<std::size_t>(v);
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--json")
      a.json_path = value();
    else if (flag == "--window-bytes")
      a.window_bytes = parse_count(flag, value());
    else if (flag == "--signals")
      a.signals = parse_count(flag, value());
    else if (flag == "--quiet")
      a.quiet = true;
    else if (flag == "-h" || flag == "--help") {
      std::printf(
          "usage: compas-run -n P comm_scale [--json FILE] [--window-bytes N (1048576)] "
          "[--signals N (8)] [--quiet]\n");
      std::exit(0);
    } else
      throw std::invalid_argument("unknown argument '" + flag + "' (see --help)");
  }
  return a;
}

// VmRSS, RssAnon, RssFile, RssShmem of this process, KiB (0 where the kernel lacks the field).
struct Rss {
  long total = 0, anon = 0, file = 0, shmem = 0;
};

Rss read_rss() {
  Rss r;
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    auto field = [&](const char* name, long& out) {
      const std::size_t n = std::strlen(name);
      if (line.compare(0, n, name) == 0) out = std::strtol(line.c_str() + n, nullptr, 10);
    };
    field("VmRSS:", r.total);
    field("RssAnon:", r.anon);
    field("RssFile:", r.file);
    field("RssShmem:", r.shmem);
  }
  return r;
}

json rss_json(const Rss& r) {
  return {{"rss_kib", r.total},
          {"rss_anon_kib", r.anon},
          {"rss_file_kib", r.file},
          {"rss_shmem_kib", r.shmem}};
}

// Milliseconds since this process started (its starttime in /proc/self/stat, in clock ticks
// since boot, against CLOCK_BOOTTIME); -1 when unreadable.
double process_age_ms() {
  std::ifstream f("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  // Fields 3.. follow the name; starttime is field 22, the 20th after it.
  for (int i = 3; i <= 22 && rest >> field; ++i) {
  }
  if (!rest) return -1;
  const double start_s = static_cast<double>(std::strtoull(field.c_str(), nullptr, 10)) /
                         static_cast<double>(::sysconf(_SC_CLK_TCK));
  timespec now{};
  ::clock_gettime(CLOCK_BOOTTIME, &now);
  return (static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9 - start_s) *
         1e3;
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// k = 0, 1, 2, 4, ... and finally P - 1.
std::vector<int> peer_counts(int p) {
  std::vector<int> ks{0};
  for (int k = 1; k < p - 1; k *= 2) ks.push_back(k);
  if (p > 1) ks.push_back(p - 1);
  return ks;
}

// Least-squares slope of y against x; nullopt when x does not vary.
std::optional<double> slope(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  const double d = n * sxx - sx * sx;
  if (x.size() < 2 || d <= 0) return std::nullopt;
  return (n * sxy - sx * sy) / d;
}

struct Spread {
  double median = 0, min = 0, max = 0;
  bool valid = false;  // some rank had the figure
};

Spread spread(std::vector<double> v) {
  if (v.empty()) return {};
  const auto s = compas::base::spread(std::move(v));
  return {s.median, s.min, s.max, true};
}

// Puts to more and more peers (peer_counts), noting after each step the RSS and the endpoints
// into `mine`: its steps, the connect times and the growth per peer and per endpoint.
void connect_steps(const Args& a, compas::comm::Bootstrap& boot, compas::comm::Comm& comm,
                   compas::comm::Window<std::byte>& win, json& mine) {
  const int rank = boot.rank(), p = boot.size();
  // Connect to more and more peers. Bootstrap barriers (not Comm::barrier, which would connect)
  // keep the ranks in step, so that the endpoints peers create towards this rank (wire-up) are in
  // by the time it reads its RSS.
  const std::uint64_t payload = 0x636f6d7061730000ull | static_cast<std::uint64_t>(rank);
  std::byte src[sizeof payload];
  std::memcpy(src, &payload, sizeof payload);
  const std::size_t slots = std::max<std::size_t>(a.window_bytes / sizeof payload, 1);
  const std::size_t offset = (static_cast<std::size_t>(rank) % slots) * sizeof payload;
  const std::size_t n = std::min(sizeof payload, a.window_bytes);
  json steps = json::array();
  std::vector<double> xs, ys, es;
  int done = 0;
  double connect_ms_total = 0;
  for (const int k : peer_counts(p)) {
    boot.barrier();
    const auto t0 = Clock::now();
    for (int i = done + 1; i <= k; ++i) {
      const int peer = (rank + i) % p;
      win.put(peer, offset, std::span<const std::byte>(src, n));
      comm.flush(peer);
    }
    const double step_ms = ms_between(t0, Clock::now());
    connect_ms_total += step_ms;
    boot.barrier();
    for (int i = 0; i < 64; ++i) comm.progress();
    boot.barrier();
    const Rss r = read_rss();
    const int connected = comm.connected_peers();
    json s = rss_json(r);
    s["k"] = k;
    s["connected_peers"] = connected;
    s["connect_ms"] = step_ms;
    steps.push_back(s);
    if (k > 0) {
      xs.push_back(k);
      ys.push_back(static_cast<double>(r.total));
      es.push_back(connected);
    }
    done = k;
  }
  mine["steps"] = steps;
  mine["connect_ms_total"] = connect_ms_total;
  if (p > 1) mine["connect_ms_per_peer"] = connect_ms_total / (p - 1);
  // With a single point (P = 2) the slope is the step from no peer to one.
  if (xs.size() == 1 && steps.size() == 2) {
    xs.insert(xs.begin(), 0.0);
    ys.insert(ys.begin(), steps[0]["rss_kib"].get<double>());
  }
  if (auto s = slope(xs, ys)) mine["kib_per_peer"] = *s;
  // Against the endpoints instead (k >= 1, where they vary): the same growth per new endpoint.
  const std::vector<double> ys_tail(ys.end() - static_cast<std::ptrdiff_t>(es.size()), ys.end());
  if (auto s = slope(es, ys_tail)) mine["kib_per_endpoint"] = *s;
}

// The figures of the job: one record per metric, its median, min and max over the ranks.
struct Summary {
  Spread age, t_b, t_c, t_w, r_main, r_boot, r_comm, r_win, e_comm, e_win, slope_s, slope_e, conn;
  std::vector<std::pair<int, std::pair<Spread, Spread>>> per_k;
};

Summary add_metrics(compas::report::Report& report, const std::vector<json>& ranks, int p) {
  Summary m;
  auto add = [&](const std::string& metric, const std::string& unit, auto get) {
    std::vector<double> v;
    for (const auto& r : ranks)
      if (auto x = get(r)) v.push_back(*x);
    if (v.empty()) return Spread{};
    const Spread s = spread(v);
    report.add({{"metric", metric},
                {"unit", unit},
                {"processes", p},
                {"median", s.median},
                {"min", s.min},
                {"max", s.max},
                {"ranks", v.size()}});
    return s;
  };
  auto num = [](const char* key) {
    return [key](const json& r) -> std::optional<double> {
      if (!r.contains(key)) return std::nullopt;
      return r[key].get<double>();
    };
  };
  auto rss_at = [](const char* step, const char* key) {
    return
        [step, key](const json& r) -> std::optional<double> { return r[step][key].get<double>(); };
  };
  m.age = add("age_at_main", "ms", num("age_at_main_ms"));
  m.t_b = add("bootstrap", "ms", num("bootstrap_ms"));
  m.t_c = add("bootstrap+comm", "ms", num("comm_ms"));
  m.t_w = add("bootstrap+comm+window", "ms", num("window_ms"));
  m.r_main = add("rss_main", "KiB", rss_at("rss_main", "rss_kib"));
  m.r_boot = add("rss_bootstrap", "KiB", rss_at("rss_bootstrap", "rss_kib"));
  m.r_comm = add("rss_comm", "KiB", rss_at("rss_comm", "rss_kib"));
  m.r_win = add("rss_window", "KiB", rss_at("rss_window", "rss_kib"));
  m.e_comm = add("peers_after_comm", "endpoints", num("peers_after_comm"));
  m.e_win = add("peers_after_window", "endpoints", num("peers_after_window"));
  for (std::size_t i = 0; i < peer_counts(p).size(); ++i) {
    const int k = peer_counts(p)[i];
    const Spread rk = add("rss_k" + std::to_string(k), "KiB", [i](const json& r) {
      return std::optional<double>(r["steps"][i]["rss_kib"].get<double>());
    });
    const Spread ek = add("peers_k" + std::to_string(k), "endpoints", [i](const json& r) {
      return std::optional<double>(r["steps"][i]["connected_peers"].get<double>());
    });
    m.per_k.push_back({k, {rk, ek}});
  }
  m.slope_s = add("kib_per_peer", "KiB", num("kib_per_peer"));
  m.slope_e = add("kib_per_endpoint", "KiB", num("kib_per_endpoint"));
  m.conn = add("connect_per_peer", "ms", num("connect_ms_per_peer"));

  return m;
}

void print_summary(const Summary& m, int p, const std::string& kind, const std::string& transport,
                   bool direct) {
  fmt::print("comm_scale: {} processes ({} bootstrap), transport to the next rank: {}{}\n", p, kind,
             transport, direct ? " (load/store)" : "");
  fmt::print("{:<34} {:>12} {:>12} {:>12}\n", "over ranks", "median", "min", "max");
  auto row = [](const std::string& what, const Spread& s, const char* f) {
    if (!s.valid) return;
    fmt::print(
        fmt::runtime("{:<34} {:>12" + std::string(f) + "} {:>12" + f + "} {:>12" + f + "}\n"), what,
        s.median, s.min, s.max);
  };
  row("process age at main (ms)", m.age, ".0f");
  row("main -> bootstrap (ms)", m.t_b, ".1f");
  row("main -> Comm (ms)", m.t_c, ".1f");
  row("main -> first window (ms)", m.t_w, ".1f");
  row("RSS at main (KiB)", m.r_main, ".0f");
  row("RSS after bootstrap (KiB)", m.r_boot, ".0f");
  row("RSS after Comm (KiB)", m.r_comm, ".0f");
  row("RSS after window (KiB)", m.r_win, ".0f");
  row("endpoints after Comm", m.e_comm, ".0f");
  row("endpoints after window", m.e_win, ".0f");
  for (const auto& [k, s] : m.per_k) {
    row(fmt::format("RSS, {} peers put to (KiB)", k), s.first, ".0f");
    row(fmt::format("endpoints, {} peers put to", k), s.second, ".0f");
  }
  if (p > 1) {
    row("KiB per peer put to (slope)", m.slope_s, ".1f");
    row("KiB per new endpoint (slope)", m.slope_e, ".1f");
    row("first put+flush per peer (ms)", m.conn, ".3f");
  }
}

int run(const Args& a, Clock::time_point t_main, double age_at_main_ms) {
  const Rss rss_main = read_rss();

  auto boot = compas::comm::Bootstrap::from_environment();
  const auto t_boot = Clock::now();
  const Rss rss_boot = read_rss();
  const int rank = boot->rank(), p = boot->size();

  compas::comm::Comm comm(*boot);
  const auto t_comm = Clock::now();
  const Rss rss_comm = read_rss();
  const int peers_after_comm = comm.connected_peers();

  compas::comm::Window<std::byte> win(comm, a.window_bytes, a.signals);
  const auto t_window = Clock::now();
  const Rss rss_window = read_rss();
  const int peers_after_window = comm.connected_peers();

  json mine = {{"rank", rank},
               {"age_at_main_ms", age_at_main_ms},
               {"bootstrap_ms", ms_between(t_main, t_boot)},
               {"comm_ms", ms_between(t_main, t_comm)},
               {"window_ms", ms_between(t_main, t_window)},
               {"rss_main", rss_json(rss_main)},
               {"rss_bootstrap", rss_json(rss_boot)},
               {"rss_comm", rss_json(rss_comm)},
               {"rss_window", rss_json(rss_window)},
               {"peers_after_comm", peers_after_comm},
               {"peers_after_window", peers_after_window}};

  connect_steps(a, *boot, comm, win, mine);
  const std::string transport = p > 1 ? comm.transport((rank + 1) % p) : std::string("self");
  const bool direct = p > 1 && win.direct((rank + 1) % p);

  const auto all = boot->allgather(mine.dump());
  if (rank != 0) return 0;

  std::vector<json> ranks;
  ranks.reserve(all.size());
  for (const auto& s : all) ranks.push_back(json::parse(s));

  const auto topo = compas::threads::Topology::host();
  compas::report::Report report(
      "comm_scale", compas::report::machine_json(topo),
      {{"processes", p},
       {"threads", compas::base::env_integer(compas::base::vars::threads).value_or(1)},
       {"bootstrap", boot->kind()},
       {"transport", transport},
       {"direct_load_store", direct},
       {"oversubscribed", comm.options().oversubscribed},
       {"window_bytes", a.window_bytes},
       {"signals", a.signals},
       {"peer_counts", peer_counts(p)}});

  const Summary m = add_metrics(report, ranks, p);

  json out = report.to_json();
  out["ranks"] = ranks;
  if (!a.json_path.empty()) compas::report::write_file_atomic(a.json_path, out.dump(2) + "\n");

  if (a.quiet) return 0;
  print_summary(m, p, boot->kind(), transport, direct);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto t_main = Clock::now();
  const double age = process_age_ms();
  try {
    return run(parse_args(argc, argv), t_main, age);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "comm_scale: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "comm_scale: %s\n", e.what());
    return 1;
  }
}
