// compas membw: memory bandwidth per thread and in total as threads are added (COMPaS section
// 2.1, Tables 1-2: four threads share one bus, so each gets about a quarter), for the load, store,
// copy and triad kernels, with the saturation point and which stores were used. The measurement is
// perf::run_membw; this file parses the flags, builds the report and prints the table.
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "common.hpp"
#include "compas/perf/membw.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/topology.hpp"
#include "plot.hpp"

namespace compas::app {

namespace {

// COMPaS 1998: one node, four 200 MHz Pentium Pro on a 450GX bus (Solaris 2.5.1), MB/s.
constexpr double kPaperRead = 203.5, kPaperWrite = 97.9, kPaperCopy = 70.5;  // Table 1
struct PaperBcopy {
  int threads;
  double per_thread, total;
};
constexpr PaperBcopy kPaperBcopy[] = {
    {1, 71.31, 71.31}, {2, 37.06, 74.12}, {3, 24.75, 74.25}, {4, 18.56, 74.24}};  // Table 2

struct MembwArgs {
  std::string threads;
  std::string size;
  std::string kernels = "load,store,copy,triad";
  std::string bind = "compact";
  std::string stores = "auto";
  std::string isa = "auto";
  int repeats = 5;
  double min_repeat_ms = 50;
  bool oversubscribe = false;
  bool no_huge_pages = false;
  std::string events;
  OutputFlags out;
  std::string plot;
};

// Default working set: 1 GiB, at most a quarter of physical memory.
std::size_t default_size() {
  const std::size_t gib = std::size_t{1} << 30;
  const std::uint64_t phys = perf::physical_memory_bytes();
  if (phys == 0) return gib;
  return std::min<std::size_t>(gib, static_cast<std::size_t>(phys / 4) / 4096 * 4096);
}

perf::json record_json(const perf::MembwRecord& r) {
  perf::json j = {{"kernel", perf::to_string(r.kernel)},
                  {"threads", r.threads},
                  {"bandwidth_gbs", r.bandwidth_gbs},
                  {"per_thread_gbs", r.per_thread_gbs},
                  {"min_bandwidth_gbs", r.min_bandwidth_gbs},
                  {"max_bandwidth_gbs", r.max_bandwidth_gbs},
                  {"thread_gbs", r.thread_gbs},
                  {"stores", !r.non_temporal   ? "none"
                             : *r.non_temporal ? "non-temporal"
                                               : "temporal"},
                  {"isa", perf::to_string(r.isa)},
                  {"cpus", r.cpus},
                  {"oversubscribed", r.oversubscribed},
                  {"working_set_bytes", r.working_set_bytes},
                  {"elements", r.elements},
                  {"bytes", r.bytes_per_repeat},
                  {"passes", r.passes},
                  {"seconds", r.seconds},
                  {"repeats", r.repeats},
                  {"verified", r.verified}};
  perf::json tried = perf::json::array();
  for (const auto& v : r.tried)
    tried.push_back({{"isa", perf::to_string(v.isa)},
                     {"stores", !perf::membw_has_stores(r.kernel) ? "none"
                                : v.non_temporal                  ? "non-temporal"
                                                                  : "temporal"},
                     {"gbs", v.gbs}});
  j["tried"] = tried;
  return j;
}

perf::json summary_json(const perf::MembwSummary& s) {
  perf::json j = {{"kernel", perf::to_string(s.kernel)},
                  {"saturation_threads", nullptr},
                  {"saturated", s.saturation_threads.has_value()},
                  {"max_threads", s.max_threads},
                  {"peak_bandwidth_gbs", s.peak_gbs},
                  {"peak_threads", s.peak_threads},
                  {"stores", s.stores}};
  if (s.saturation_threads) j["saturation_threads"] = *s.saturation_threads;
  return j;
}

std::string saturation_text(const perf::MembwSummary& s) {
  if (s.saturation_threads)
    return fmt::format("{} thread{}", *s.saturation_threads, *s.saturation_threads == 1 ? "" : "s");
  if (s.counts < 2) return "unknown (one thread count)";
  return fmt::format("not saturated within {} threads", s.max_threads);
}

int run_membw_command(const MembwArgs& a) {
  const auto topo = threads::Topology::host();
  perf::MembwOptions o;
  o.bind = threads::BindSpec::parse(a.bind);
  if (a.threads.empty()) {
    o.threads.clear();
    for (int t = 1; t <= topo.cores(); ++t) o.threads.push_back(t);
  } else {
    o.threads = parse_thread_list("--threads", a.threads);
  }
  try {
    o.size_bytes = a.size.empty() ? default_size() : perf::parse_size(a.size);
    o.kernels = perf::parse_membw_kernels(a.kernels);
    o.stores = perf::parse_store_mode(a.stores);
    o.isa = perf::parse_membw_isa(a.isa);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--") + e.what());
  }
  const std::uint64_t phys = perf::physical_memory_bytes();
  if (!a.size.empty() && phys > 0 && o.size_bytes > phys / 2)
    throw std::invalid_argument("--size '" + a.size + "' (" + std::to_string(o.size_bytes) +
                                " bytes) is more than half of physical memory (" +
                                perf::format_size(phys) + ")");
  o.repeats = a.repeats;
  o.min_repeat_ms = a.min_repeat_ms;
  o.oversubscribe = a.oversubscribe;
  o.huge_pages = !a.no_huge_pages;
  o.events = choose_events_flag(a.events);
  check_outputs(a.out);
  check_plot_dir(a.plot);

  const auto res = perf::run_membw(topo, o);

  std::vector<std::string> kernel_names;
  for (auto k : o.kernels) kernel_names.push_back(perf::to_string(k));
  perf::Report report(
      "membw", perf::machine_json(topo),
      {{"threads", res.threads},
       {"size_bytes", o.size_bytes},
       {"size", perf::format_size(o.size_bytes)},
       {"size_is", "total working set: all arrays of a kernel, all threads"},
       {"kernels", kernel_names},
       {"bind", o.bind.to_string()},
       {"repeats", o.repeats},
       {"min_repeat_ms", o.min_repeat_ms},
       {"stores", perf::to_string(o.stores)},
       {"isa", o.isa ? perf::to_string(*o.isa) : "auto"},
       {"oversubscribe", o.oversubscribe},
       {"huge_pages", o.huge_pages},
       {"bytes_counted", "read + written, no write-allocate (as STREAM, likwid-bench)"},
       {"gb", 1e9},
       {"bandwidth_gbs",
        "total bytes / (last thread end - first thread start), "
        "median over repeats"},
       {"per_thread_gbs", "bandwidth_gbs / threads"},
       {"thread_gbs", "each thread's bytes / its own time, median over repeats"},
       {"saturation",
        "smallest thread count after which the next count adds "
        "< 10% total bandwidth; null: not saturated"},
       {"events", events_params(o.events)},
       {"counters",
        "with --events: each event over the timed repeats, summed over the threads; derived "
        "metrics from perf::aggregate (bandwidth_gbs: the kernel's bytes over the slowest "
        "thread's time in the region)"}});
  for (const auto& r : res.records) {
    perf::json j = record_json(r);
    if (r.region) add_counters_json(j, *r.region);
    report.add(std::move(j));
  }
  for (const auto& s : res.summaries) report.add(summary_json(s));
  write_outputs(report, a.out);
  plot_report(report, a.plot);

  warn_counter_errors(res.counter_errors);
  bool all_verified = true;
  for (const auto& r : res.records) all_verified = all_verified && r.verified;
  if (!all_verified)
    throw std::runtime_error("a kernel left wrong values in memory; results are not valid");
  if (a.out.quiet) return 0;

  // Table: rows = threads, columns = kernels (total and per thread), as COMPaS Table 2.
  std::map<std::pair<perf::MembwKernel, int>, const perf::MembwRecord*> cell;
  for (const auto& r : res.records) cell[{r.kernel, r.threads}] = &r;
  fmt::print(
      "memory bandwidth, GB/s (1e9 B/s): working set {} ({} B; all arrays, all threads), "
      "bind {}, median of {} repeats\n",
      perf::format_size(o.size_bytes), o.size_bytes, o.bind.to_string(), o.repeats);
  fmt::print(
      "bytes counted as STREAM and likwid-bench count them: read + written, no write-allocate\n\n");
  fmt::print("{:>8}", "");
  for (const auto& name : kernel_names) fmt::print(" | {:^17}", name);
  fmt::print(" | {:^17}\n", "'98 bcopy, MB/s");
  fmt::print("{:>8}", "threads");
  for (std::size_t i = 0; i <= kernel_names.size(); ++i)
    fmt::print(" | {:>8} {:>8}", "total", "/thread");
  fmt::print("\n");
  for (int t : res.threads) {
    fmt::print("{:>8}", t);
    for (auto k : o.kernels) {
      const auto* r = cell.at({k, t});
      fmt::print(" | {:>8.2f} {:>8.2f}", r->bandwidth_gbs, r->per_thread_gbs);
    }
    const auto* p = std::find_if(std::begin(kPaperBcopy), std::end(kPaperBcopy),
                                 [&](const PaperBcopy& b) { return b.threads == t; });
    if (p != std::end(kPaperBcopy))
      fmt::print(" | {:>8.2f} {:>8.2f}", p->total, p->per_thread);
    else
      fmt::print(" | {:>8} {:>8}", "-", "-");
    fmt::print("\n");
  }
  // The paper's single-thread figures under the matching columns.
  fmt::print("{:>8}", "'98 MB/s");
  for (auto k : o.kernels) {
    const double v = k == perf::MembwKernel::load    ? kPaperRead
                     : k == perf::MembwKernel::store ? kPaperWrite
                     : k == perf::MembwKernel::copy  ? kPaperCopy
                                                     : 0;
    if (v > 0)
      fmt::print(" | {:>8.1f} {:>8}", v, "");
    else
      fmt::print(" | {:>8} {:>8}", "-", "");
  }
  fmt::print(" | {:>8} {:>8}\n", "", "");
  fmt::print(
      "'98: COMPaS 1998, one node of four 200 MHz Pentium Pro, in MB/s (Table 1: read, write, "
      "copy with one thread; Table 2: bcopy with 1-4 threads)\n\n");

  fmt::print("saturation (the next thread count adds < 10% total bandwidth):\n");
  for (const auto& s : res.summaries)
    fmt::print("  {:<6} {} (peak {:.2f} GB/s at {} thread{})\n", perf::to_string(s.kernel),
               saturation_text(s), s.peak_gbs, s.peak_threads, s.peak_threads == 1 ? "" : "s");

  fmt::print("kernel variants used (instruction set, stores):\n");
  for (const auto& s : res.summaries) {
    std::string detail;
    for (const auto& r : res.records) {
      if (r.kernel != s.kernel) continue;
      detail += fmt::format("\n    T={}: {}{}", r.threads, perf::to_string(r.isa),
                            !r.non_temporal   ? ""
                            : *r.non_temporal ? " non-temporal"
                                              : " temporal");
      if (!r.tried.empty()) {
        detail += " (tried";
        for (const auto& v : r.tried)
          detail += fmt::format(" {}{} {:.2f}", perf::to_string(v.isa),
                                !perf::membw_has_stores(r.kernel) ? ""
                                : v.non_temporal                  ? "/nt"
                                                                  : "/t",
                                v.gbs);
        detail += " GB/s)";
      }
    }
    fmt::print("  {:<6} {}:{}\n", perf::to_string(s.kernel),
               s.stores == "none" ? std::string("no stores") : s.stores + " stores", detail);
  }
  fmt::print(
      "  auto: where the working set exceeds the caches below the last level (the team's L2s) both "
      "temporal and non-temporal "
      "stores are tried (and AVX2 beside AVX-512), the fastest is kept; temporal stores also read "
      "each line for ownership, traffic not counted.\n");
  std::vector<perf::RegionSummary> regions;
  for (const auto& r : res.records)
    if (r.region) regions.push_back(*r.region);
  print_regions(regions, o.events);
  return 0;
}

}  // namespace

Command setup_membw(CLI::App& app) {
  auto args = std::make_shared<MembwArgs>();
  auto* cmd = app.add_subcommand(
      "membw", "memory bandwidth per thread and in total vs threads (COMPaS Tables 1-2)");
  cmd->footer(
      "Kernels on double arrays: load (s += a[i], 8 B/element), store (a[i] = s, 8 B), copy "
      "(c[i] = a[i], 16 B), triad (a[i] = b[i] + s*c[i], 24 B). Bytes are counted as STREAM and "
      "likwid-bench count them (read + written, no write-allocate), GB/s = 1e9 B/s.\n"
      "--size is the TOTAL working set over all arrays of a kernel and all threads, like "
      "likwid-bench -w S0:SIZE:T: '--size 1GB --threads 2' compares one to one with "
      "'likwid-bench -t copy_avx512 -w S0:1GB:2'. Units: KiB/MiB/GiB binary, KB/MB/GB decimal, "
      "bare K/M/G binary (4096, 64KiB, 1GiB, 1GB, 512M). Each thread first-touches and streams "
      "its own block. Saturation point: the smallest thread count after which the next one "
      "adds < 10% total bandwidth.");
  cmd->add_option("--threads", args->threads,
                  "thread counts, e.g. 2 or 1,2,4 or 1-8 (default 1..cores)")
      ->envname("COMPAS_THREADS");
  cmd->add_option("--size", args->size,
                  "total working set, all arrays and threads: 4096, 64KiB, 512M, 1GiB, 1GB "
                  "(default 1GiB, at most 1/4 of RAM; at most 1/2 of RAM)")
      ->envname("COMPAS_SIZE")
      ->type_name("BYTES");
  cmd->add_option("--kernels", args->kernels, "kernels to run: load,store,copy,triad")
      ->envname("COMPAS_KERNELS")
      ->capture_default_str();
  cmd->add_option("--bind", args->bind, "compact | scatter | sockets | cpu list (0,2,4-7)")
      ->envname("COMPAS_BIND")
      ->capture_default_str();
  cmd->add_option("--stores", args->stores,
                  "auto (try temporal and non-temporal, keep the faster) | temporal | "
                  "non-temporal")
      ->envname("COMPAS_STORES")
      ->capture_default_str();
  cmd->add_option("--isa", args->isa,
                  "kernel instruction set: auto | avx512 | avx2 | sse2 | generic")
      ->envname("COMPAS_ISA")
      ->capture_default_str();
  cmd->add_option("--repeats", args->repeats, "timed repeats per measurement (median reported)")
      ->envname("COMPAS_REPEATS")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--min-repeat-ms", args->min_repeat_ms,
                  "a repeat sweeps the working set until it lasts this long (small sizes)")
      ->check(CLI::Range(0.0, 60000.0))
      ->capture_default_str();
  cmd->add_flag("--oversubscribe", args->oversubscribe, "allow more threads than PUs")
      ->envname("COMPAS_OVERSUBSCRIBE");
  cmd->add_flag("--no-huge-pages", args->no_huge_pages,
                "do not ask for transparent huge pages (madvise MADV_HUGEPAGE) for the arrays")
      ->envname("COMPAS_NO_HUGE_PAGES");
  add_events_flag(*cmd, args->events);
  add_output_flags(*cmd, args->out);
  add_plot_flag(*cmd, args->plot);
  return {cmd, [args] { return run_membw_command(*args); }};
}

}  // namespace compas::app
