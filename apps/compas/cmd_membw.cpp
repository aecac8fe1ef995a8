// compas membw: memory bandwidth per thread and in total as threads are added (COMPaS section
// 2.1, Tables 1-2: four threads share one bus, so each gets about a quarter), for the load, store,
// copy and triad kernels, with the saturation point and which stores were used. The measurement is
// probes::run_membw; this file parses the flags, builds the report and prints the table.
// With --loaded-latency it measures instead how a dependent load's latency grows with the
// bandwidth other threads draw (probes::run_loaded_latency), as its own report "loaded-latency".
// The loaded-latency command, the NUMA matrix and the table beside COMPaS 1998 are in files of
// their own (cmd_membw_args.hpp names them).
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "cmd_membw_args.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "compas/probes/membw.hpp"
#include "compas/threads/domain.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/topology.hpp"
#include "plot.hpp"
#include "study/stream_sizes.hpp"

namespace compas::app {

bool given(const CLI::Option* opt) {
  if (opt->count() == 0) return false;
  const std::string env = opt->get_envname();
  return env.empty() || std::getenv(env.c_str()) == nullptr;
}

std::size_t default_membw_size() {
  const std::uint64_t limit = base::memory_limit(base::Mapping::private_memory).bytes;
  return std::min<std::uint64_t>(std::uint64_t{1} << 30, limit / 4 / 4096 * 4096);
}

namespace {

report::json record_json(const probes::MembwRecord& r) {
  report::json j = {{"kernel", probes::to_string(r.kernel)},
                    {"threads", r.threads},
                    {"bandwidth_gbs", r.bandwidth_gbs},
                    {"per_thread_gbs", r.per_thread_gbs},
                    {"min_bandwidth_gbs", r.min_bandwidth_gbs},
                    {"max_bandwidth_gbs", r.max_bandwidth_gbs},
                    {"thread_gbs", r.thread_gbs},
                    {"stores", !r.non_temporal   ? "none"
                               : *r.non_temporal ? "non-temporal"
                                                 : "temporal"},
                    {"isa", base::to_string(r.isa)},
                    {"cpus", r.cpus},
                    {"oversubscribed", r.oversubscribed},
                    {"working_set_bytes", r.working_set_bytes},
                    {"elements", r.elements},
                    {"bytes", r.bytes_per_repeat},
                    {"passes", r.passes},
                    {"seconds", r.seconds},
                    {"repeats", r.repeats},
                    {"verified", r.verified}};
  report::json tried = report::json::array();
  for (const auto& v : r.tried)
    tried.push_back({{"isa", base::to_string(v.isa)},
                     {"stores", !probes::membw_has_stores(r.kernel) ? "none"
                                : v.non_temporal                    ? "non-temporal"
                                                                    : "temporal"},
                     {"gbs", v.gbs}});
  j["tried"] = tried;
  return j;
}

report::json summary_json(const probes::MembwSummary& s) {
  report::json j = {{"kernel", probes::to_string(s.kernel)},
                    {"saturation_threads", nullptr},
                    {"saturated", s.saturation_threads.has_value()},
                    {"saturation_resolved", s.saturation_resolved},
                    {"saturation_note", s.saturation_note},
                    {"max_threads", s.max_threads},
                    {"peak_bandwidth_gbs", s.peak_gbs},
                    {"peak_threads", s.peak_threads},
                    {"stores", s.stores}};
  if (s.saturation_threads) j["saturation_threads"] = *s.saturation_threads;
  return j;
}

std::string saturation_text(const probes::MembwSummary& s) {
  if (s.saturation_threads)
    return fmt::format("{} thread{}", *s.saturation_threads, *s.saturation_threads == 1 ? "" : "s");
  if (!s.saturation_resolved) return s.saturation_note;
  if (s.counts < 2) return "unknown (one thread count)";
  return fmt::format("not saturated within {} threads", s.max_threads);
}

void refuse_inapplicable(const MembwArgs& a) {
  const auto& wrong = a.loaded_latency ? a.bandwidth_only : a.latency_only;
  for (const CLI::Option* opt : wrong)
    if (given(opt))
      throw std::invalid_argument(
          opt->get_name() + (a.loaded_latency
                                 ? " does not apply to --loaded-latency (traffic: --mix, --delays, "
                                   "--traffic-on; team size: --threads)"
                                 : " applies only with --loaded-latency"));
}

// --workgroup DOMAIN:SIZE[:THREADS]: the team on the domain's PUs (physical cores first, socket
// by socket), the working set SIZE, thread counts 1..THREADS (default: every PU of the domain),
// or the --threads given, which must fit the workgroup.
threads::Workgroup apply_workgroup(const MembwArgs& a, const threads::Topology& topo,
                                   probes::MembwOptions& o) {
  if (given(a.bind_opt) || !a.size.empty())
    throw std::invalid_argument("--workgroup '" + a.workgroup + "' sets the cpus and the size: " +
                                "--bind and --size do not go with it");
  const threads::Workgroup wg = threads::parse_workgroup(a.workgroup);
  std::vector<int> pus;
  try {
    pus = threads::domain_pus(topo, wg.domain);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("--workgroup '" + a.workgroup + "': " + e.what());
  }
  const int most = wg.threads ? wg.threads : static_cast<int>(pus.size());
  if (most > static_cast<int>(pus.size()) && !a.oversubscribe)
    throw std::invalid_argument("--workgroup '" + a.workgroup + "': " + std::to_string(most) +
                                " threads on " + wg.domain.name() + ", which has " +
                                std::to_string(pus.size()) + " PUs (--oversubscribe to allow)");
  if (a.threads.empty()) {
    o.threads.clear();
    for (int t = 1; t <= most; ++t) o.threads.push_back(t);
  } else if (o.threads.back() > most) {
    throw std::invalid_argument("--threads '" + a.threads + "' goes beyond the workgroup '" +
                                a.workgroup + "' (" + std::to_string(most) + " threads)");
  }
  const std::size_t distinct = pus.size();  // oversubscribed: round the domain's PUs again
  while (static_cast<int>(pus.size()) < most) pus.push_back(pus[pus.size() % distinct]);
  pus.resize(static_cast<std::size_t>(most));
  o.bind = threads::BindSpec{threads::BindPolicy::list, pus};
  return wg;
}

// The probe's options from the flags; `wg` is set when a workgroup gives the threads and size.
probes::MembwOptions membw_options(const MembwArgs& a, const threads::Topology& topo,
                                   std::optional<threads::Workgroup>& wg) {
  probes::MembwOptions o;
  o.bind = threads::BindSpec::parse(a.bind);
  if (a.threads.empty()) {
    o.threads.clear();
    for (int t = 1; t <= topo.cores(); ++t) o.threads.push_back(t);
  } else {
    o.threads = parse_thread_list("--threads", a.threads);
  }
  if (!a.workgroup.empty() || given(a.workgroup_opt)) {
    wg = apply_workgroup(a, topo, o);
  }
  try {
    o.size_bytes = wg               ? wg->size_bytes
                   : a.size.empty() ? default_membw_size()
                                    : base::parse_size(a.size);
    o.kernels = probes::parse_membw_kernels(a.kernels);
    o.stores = probes::parse_store_mode(a.stores);
    o.isa = probes::parse_membw_isa(a.isa);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--") + e.what());
  }
  const base::MemoryBound limit = base::memory_limit(base::Mapping::private_memory);
  if (!a.size.empty() && o.size_bytes > limit.bytes / 2)
    throw std::invalid_argument("--size '" + a.size + "' (" + std::to_string(o.size_bytes) +
                                " bytes) is more than half of what this host can give (" +
                                base::bytes_text(limit.bytes) + ", " + limit.what + ")");
  o.repeats = a.repeats;
  o.min_repeat_ms = a.min_repeat_ms;
  o.oversubscribe = a.oversubscribe;
  o.huge_pages = !a.no_huge_pages;
  o.events = choose_events_flag(a.events);
  return o;
}

// The report of a sweep: its parameters, then one record per kernel x thread count and one
// summary per kernel.
report::Report membw_report(const MembwArgs& a, const threads::Topology& topo,
                            const probes::MembwOptions& o, const probes::MembwResult& res,
                            const std::optional<threads::Workgroup>& wg,
                            const std::vector<std::string>& kernel_names) {
  report::Report report(
      "membw", report::machine_json(topo),
      {{"threads", res.threads},
       {"size_bytes", o.size_bytes},
       {"size", base::format_size(o.size_bytes)},
       {"size_is", "total working set: all arrays of a kernel, all threads"},
       {"kernels", kernel_names},
       {"bind", o.bind.to_string()},
       {"workgroup", wg ? report::json(a.workgroup) : report::json(nullptr)},
       {"domain", wg ? wg->domain.name() : "none"},
       {"repeats", o.repeats},
       {"min_repeat_ms", o.min_repeat_ms},
       {"stream_rule", stream_rule_text(o.size_bytes, last_level_cache(topo.caches()).total,
                                        last_level_cache(topo.caches()).text)},
       {"stores", probes::store_mode_name(o.stores)},
       {"isa", o.isa ? base::to_string(*o.isa) : "auto"},
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
    report::json j = record_json(r);
    if (r.region) add_counters_json(j, *r.region);
    report.add(std::move(j));
  }
  for (const auto& s : res.summaries) report.add(summary_json(s));
  return report;
}

// Rows = threads, columns = kernels (total and per thread), as COMPaS Table 2, with the paper's
void print_membw_choices(const probes::MembwResult& res) {
  fmt::print("saturation (the next thread count adds < 10% total bandwidth):\n");
  for (const auto& s : res.summaries)
    fmt::print("  {:<6} {} (peak {:.2f} GB/s at {} thread{})\n", probes::to_string(s.kernel),
               saturation_text(s), s.peak_gbs, s.peak_threads, s.peak_threads == 1 ? "" : "s");

  fmt::print("kernel variants used (instruction set, stores):\n");
  for (const auto& s : res.summaries) {
    std::string detail;
    for (const auto& r : res.records) {
      if (r.kernel != s.kernel) continue;
      detail += fmt::format("\n    T={}: {}{}", r.threads, base::to_string(r.isa),
                            !r.non_temporal   ? ""
                            : *r.non_temporal ? " non-temporal"
                                              : " temporal");
      if (!r.tried.empty()) {
        detail += " (tried";
        for (const auto& v : r.tried)
          detail += fmt::format(" {}{} {:.2f}", base::to_string(v.isa),
                                !probes::membw_has_stores(r.kernel) ? ""
                                : v.non_temporal                    ? "/nt"
                                                                    : "/t",
                                v.gbs);
        detail += " GB/s)";
      }
    }
    fmt::print("  {:<6} {}:{}\n", probes::to_string(s.kernel),
               s.stores == "none" ? std::string("no stores") : s.stores + " stores", detail);
  }
  fmt::print(
      "  auto: where the working set exceeds the caches below the last level (the team's L2s) both "
      "temporal and non-temporal "
      "stores are tried (and AVX2 beside AVX-512), the fastest is kept; temporal stores also read "
      "each line for ownership, traffic not counted.\n");
}

int run_membw_command(const MembwArgs& a) {
  refuse_inapplicable(a);
  if (a.loaded_latency) return run_loaded_latency_command(a);
  if (a.numa_matrix) return run_numa_matrix_command(a);
  const auto topo = threads::Topology::host();
  std::optional<threads::Workgroup> wg;
  const probes::MembwOptions o = membw_options(a, topo, wg);
  check_outputs(a.out);
  check_plot_dir(a.plot);
  // STREAM's rule, as the study applies it: a working set under 4x the last-level caches is
  // served in part from them, and the figures are not memory's.
  const LastLevelCache llc = last_level_cache(topo.caches());
  if (llc.total > 0 && o.size_bytes < kStreamCacheFactor * llc.total)
    fmt::print(stderr, "compas membw: warning: {}\n",
               stream_rule_text(o.size_bytes, llc.total, llc.text));

  const auto res = probes::run_membw(topo, o);

  std::vector<std::string> kernel_names;
  for (auto k : o.kernels) kernel_names.push_back(probes::to_string(k));
  const report::Report report = membw_report(a, topo, o, res, wg, kernel_names);
  write_outputs(report, a.out);
  plot_report(report, a.plot);

  warn_counter_errors(res.counter_errors);
  bool all_verified = true;
  for (const auto& r : res.records) all_verified = all_verified && r.verified;
  if (!all_verified)
    throw std::runtime_error("a kernel left wrong values in memory; results are not valid");
  if (a.out.quiet) return 0;

  print_membw_table(o, res, kernel_names);
  print_membw_choices(res);
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
      "adds < 10% total bandwidth.\n"
      "--loaded-latency: the first thread chases a random cycle of cache lines over --size "
      "(default max(8 x last-level cache, 256 MiB)) while the others stream over as many bytes "
      "with --mix traffic, waiting --delays ns after each 4 KiB chunk; per point the traffic's "
      "GB/s (counted as above) and the chase's ns per load (median, min, max of --repeats), idle "
      "latency, and per mix the knee: the bandwidth where latency reaches 2x idle.");
  cmd->add_option("--threads", args->threads,
                  "thread counts, e.g. 2 or 1,2,4 or 1-8 (default 1..cores); with "
                  "--loaded-latency one team size, the chaser and its traffic threads (default: "
                  "one per core of the traffic's node)")
      ->envname("COMPAS_THREADS");
  cmd->add_option("--size", args->size,
                  "total working set, all arrays and threads: 4096, 64KiB, 512M, 1GiB, 1GB "
                  "(default 1GiB, at most 1/4 of RAM; at most 1/2 of RAM); with "
                  "--loaded-latency the chase buffer, and the traffic's working set; with "
                  "--numa-matrix also the latency's chase buffer (default max(8 x last-level "
                  "cache, 256 MiB))")
      ->type_name("BYTES");
  args->kernels_opt =
      cmd->add_option("--kernels", args->kernels, "kernels to run: load,store,copy,triad")
          ->capture_default_str();
  args->bandwidth_only.push_back(args->kernels_opt);
  args->bind_opt =
      cmd->add_option("--bind", args->bind, "compact | scatter | sockets | cpu list (0,2,4-7)")
          ->envname("COMPAS_BIND")
          ->capture_default_str();
  args->bandwidth_only.push_back(args->bind_opt);
  args->workgroup_opt = cmd->add_option(
      "--workgroup", args->workgroup,
      "DOMAIN:SIZE[:THREADS] as likwid-bench -w: threads on one affinity domain (N node, S<i> "
      "socket, M<i> NUMA node, C<i> last-level cache), physical cores first, working set SIZE, "
      "thread counts 1..THREADS (default every PU of the domain); instead of --bind and --size");
  args->bandwidth_only.push_back(args->workgroup_opt);
  args->bandwidth_only.push_back(cmd->add_flag(
      "--numa-matrix", args->numa_matrix,
      "bandwidth with the threads on NUMA node i (one per core, or --threads N) and the memory "
      "bound to node j, for every pair of nodes (--kernels default load,copy)"));
  args->bandwidth_only.push_back(
      cmd->add_option("--stores", args->stores,
                      "auto (try temporal and non-temporal, keep the faster) | temporal | "
                      "non-temporal")
          ->capture_default_str());
  cmd->add_option("--isa", args->isa,
                  "kernel instruction set: auto | avx512 | avx2 | sse2 | generic")
      ->capture_default_str();
  cmd->add_option("--repeats", args->repeats, "timed repeats per measurement (median reported)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--min-repeat-ms", args->min_repeat_ms,
                  "a repeat sweeps the working set until it lasts this long (small sizes)")
      ->check(CLI::Range(0.0, 60000.0))
      ->capture_default_str();
  args->bandwidth_only.push_back(
      cmd->add_flag("--oversubscribe", args->oversubscribe, "allow more threads than PUs")
          ->envname("COMPAS_OVERSUBSCRIBE"));
  cmd->add_flag("--no-huge-pages", args->no_huge_pages,
                "do not ask for transparent huge pages (madvise MADV_HUGEPAGE) for the arrays");
  add_events_flag(*cmd, args->events);
  args->bandwidth_only.push_back(cmd->get_option("--events"));
  add_latency_flags(*cmd, *args);
  add_output_flags(*cmd, args->out);
  add_plot_flag(*cmd, args->plot);
  return {cmd, [args] { return run_membw_command(*args); }};
}

}  // namespace compas::app
