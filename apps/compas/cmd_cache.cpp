// compas cache: ns and cycles per load against working-set size, for a random pointer chase and
// a streaming read (COMPaS Fig. 12), with the knees of the chase curve beside hwloc's caches.
#include <fmt/core.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "commands.hpp"
#include "common.hpp"
#include "compas/perf/timer.hpp"
#include "compas/probes/cache_probe.hpp"
#include "compas/probes/membw.hpp"
#include "plot.hpp"

namespace compas::app {

namespace {

constexpr const char* kKneeDefinition =
    "the chase curve is read as plateaus joined by climbs; a plateau ends at the last size within "
    "15% of its level, a climb counts when it reaches a new plateau at least 1.5x higher (one knee "
    "per climb); the knee is the measured size closest to where the climb crosses halfway between "
    "the two levels (geometric mean); knees and hwloc data/unified caches are matched one to one, "
    "closest in log2 size first, using the per-core share of shared caches, and only within one "
    "octave: a knee farther from every cache is an effective size of its own (a TLB's reach, a "
    "shared cache's share, a cache hwloc does not list), its nearest cache named";

constexpr const char* kCompas1998 =
    "COMPaS 1998 (Fig. 12, Pentium Pro, cycles to read one integer, read with the performance "
    "counters): the L2 is 512 KB, but it is a physically addressed cache and line conflicts made "
    "misses begin when the data exceeded about 200 KB (160 KB in the worst case).";

struct CacheArgs {
  std::string min = "4KiB";
  std::string max = "1GiB";
  int steps_per_octave = 4;
  int cpu = -1;
  int repeats = 7;
  double repeat_ms = 2;
  std::string events;
  std::string plot;
  OutputFlags out;
};

// base::parse_size, with the flag named in the message.
std::uint64_t parse_size_flag(const std::string& flag, const std::string& text) {
  try {
    return base::parse_size(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(flag + ": " + e.what());
  }
}

void print_row(const probes::CacheRecord& c, const probes::CacheRecord& s) {
  const bool disturbed = c.disturbed_repeats + s.disturbed_repeats > 0;
  fmt::print("{:>10} {:>10.2f} {:>10.1f} {:>15.3f} {:>12.1f}{}\n", base::format_size(c.size_bytes),
             c.ns_per_load, c.cycles_per_load, s.ns_per_load, s.bandwidth_gbs,
             disturbed ? " *" : "");
  std::fflush(stdout);
}

std::string describe_cache(const probes::CacheTarget& c) {
  std::string s = c.name() + " " + base::format_size(c.size_bytes);
  if (c.cores_sharing > 1)
    s += fmt::format(" shared by {} cores, {} per core", c.cores_sharing,
                     base::format_size(c.per_core_bytes));
  return s;
}

// The probe's options from the flags; a bad range, cpu, event or output path fails here, before
// the TSC calibration and the table header.
probes::CacheProbeOptions probe_options(const CacheArgs& a, const threads::Topology& topo) {
  probes::CacheProbeOptions opt;
  opt.min_bytes = parse_size_flag("--min", a.min);
  opt.max_bytes = parse_size_flag("--max", a.max);
  opt.steps_per_octave = a.steps_per_octave;
  opt.cpu = a.cpu >= 0 ? a.cpu : topo.pu_list().at(0).os_index;
  opt.repeats = a.repeats;
  opt.repeat_ms = a.repeat_ms;
  if (opt.min_bytes > opt.max_bytes)
    throw std::invalid_argument("--min '" + a.min + "' (" + base::format_size(opt.min_bytes) +
                                ") is larger than --max '" + a.max + "' (" +
                                base::format_size(opt.max_bytes) + ")");
  probes::cache_probe_sizes(opt.min_bytes, opt.max_bytes, opt.steps_per_octave);
  if (topo.find_pu(opt.cpu) < 0)
    throw std::invalid_argument("--cpu " + std::to_string(opt.cpu) + ": not a cpu this process " +
                                "may use (" + threads::format_cpu_list([&] {
                                  std::vector<int> v;
                                  for (const auto& p : topo.pu_list()) v.push_back(p.os_index);
                                  return v;
                                }()) +
                                ")");
  opt.events = choose_events_flag(a.events);
  check_outputs(a.out);
  check_plot_dir(a.plot);
  return opt;
}

// What the columns mean, the table's header, and a row printed per size as it is measured.
void print_header(probes::CacheProbeOptions& opt) {
  const auto& tsc = perf::tsc();
  fmt::print(
      "cache probe on cpu {}: chase = one dependent load per step around a random cycle of "
      "64-byte lines; stream = sequential 8-byte loads\n",
      opt.cpu);
  fmt::print("median of {} repeats of >= {} ms; cycles are TSC cycles at {:.3f} GHz{}\n",
             opt.repeats, opt.repeat_ms, tsc.ghz,
             tsc.invariant ? " (constant-rate time-stamp counter, not the core clock)"
                           : " (the TSC is not flagged invariant here)");
  fmt::print("{:>10} {:>10} {:>10} {:>15} {:>12}\n", "size", "chase ns", "chase cyc",
             "stream ns/load", "stream GB/s");
  opt.progress = print_row;
}

report::json report_params(const probes::CacheProbeOptions& opt,
                           const probes::CacheProbeResult& res) {
  return {
      {"min_bytes", res.sizes.front()},
      {"max_bytes", res.sizes.back()},
      {"max_bytes_requested", res.max_bytes_requested},
      {"steps_per_octave", opt.steps_per_octave},
      {"cpu", res.cpu},
      {"repeats", opt.repeats},
      {"repeat_ms", opt.repeat_ms},
      {"line_bytes", 64},
      {"tsc_ghz", res.tsc_ghz},
      {"tsc_invariant", res.tsc_invariant},
      {"cycles", fmt::format("cycles_per_load counts TSC cycles: time-stamp counter ticks at the "
                             "calibrated {:.3f} GHz, not core clock cycles",
                             res.tsc_ghz)},
      {"chase",
       "random cyclic permutation (Sattolo) over 64-byte lines, one dependent load per step"},
      {"stream",
       "sequential read of the working set, vectorized sum, repeated passes; "
       "ns per 8-byte load and GB/s"},
      {"hugepages",
       fmt::format("madvise(MADV_HUGEPAGE) on the 2 MiB-aligned buffer{}; {} of {} "
                   "backed by huge pages",
                   res.hugepage_advised ? "" : " (refused)", base::format_size(res.hugepage_bytes),
                   base::format_size(res.buffer_bytes))},
      {"buffer_bytes", res.buffer_bytes},
      {"hugepage_bytes", res.hugepage_bytes},
      {"repeat_rule",
       "a repeat during which the thread lost its cpu (thread CPU time < 98% of wall time) is "
       "run again; disturbed_repeats counts those still used, with the descheduled time taken "
       "out"},
      {"knee_definition", kKneeDefinition},
      {"events", events_params(opt.events)},
      {"counters",
       "with --events: each event over one size's timed repeats (retries included); derived "
       "metrics from perf::aggregate (stream bandwidth_gbs: the bytes it read over the region's "
       "time)"},
      {"seconds", res.seconds}};
}

report::Report make_report(const threads::Topology& topo, const report::json& params,
                           const probes::CacheProbeResult& res) {
  report::Report report("cache", report::machine_json(topo), params);
  for (const auto& r : res.records) {
    report::json j = {
        {"size_bytes", r.size_bytes},           {"pattern", r.pattern},
        {"ns_per_load", r.ns_per_load},         {"cycles_per_load", r.cycles_per_load},
        {"min_ns_per_load", r.min_ns_per_load}, {"max_ns_per_load", r.max_ns_per_load}};
    if (r.pattern == "stream") j["bandwidth_gbs"] = r.bandwidth_gbs;
    j["loads"] = r.loads;
    j["repeats"] = r.repeats;
    j["disturbed_repeats"] = r.disturbed_repeats;
    if (r.region) add_counters_json(j, *r.region);
    report.add(std::move(j));
  }
  for (const auto& k : res.knees)
    report.add({{"size_bytes", k.size_bytes},
                {"pattern", "knee"},
                {"plateau_end_bytes", k.plateau_end_bytes},
                {"plateau_start_bytes", k.plateau_start_bytes},
                {"ns_before", k.ns_before},
                {"ns_after", k.ns_after},
                {"cache", k.cache.level ? k.cache.name() : ""},
                {"cache_level", k.cache.level},
                {"cache_bytes", k.cache.size_bytes},
                {"cache_per_core_bytes", k.cache.per_core_bytes},
                {"octaves_from_cache",
                 k.cache.level ? report::json(k.octaves_from_cache) : report::json(nullptr)},
                {"match_limit_octaves", probes::kKneeMatchOctaves},
                {"nearest_cache",
                 k.nearest.level ? report::json(k.nearest.name()) : report::json(nullptr)},
                {"nearest_cache_per_core_bytes", k.nearest.per_core_bytes},
                {"octaves_from_nearest",
                 k.nearest.level ? report::json(k.octaves_from_nearest) : report::json(nullptr)}});
  return report;
}

// The knees found, each with the hwloc cache matched to it, and the caches no knee matched.
void print_knees(const probes::CacheProbeResult& res) {
  fmt::print("knees of the chase curve (halfway up each climb of >= 1.5x between plateaus):\n");
  if (res.knees.empty())
    fmt::print("  none between {} and {}\n", base::format_size(res.sizes.front()),
               base::format_size(res.sizes.back()));
  for (const auto& k : res.knees) {
    if (k.cache.level == 0) {
      fmt::print("  knee at {}: an effective size, no hwloc cache within {:g} octave{}\n",
                 base::format_size(k.size_bytes), probes::kKneeMatchOctaves,
                 k.nearest.level ? fmt::format(" (nearest left: {}, {:+.1f} octaves)",
                                               describe_cache(k.nearest), k.octaves_from_nearest)
                                 : std::string());
    } else {
      const double off = std::abs(k.octaves_from_cache);
      std::string note;
      if (off > 1e-9) note = fmt::format(", {:+.2f} octave", k.octaves_from_cache);
      fmt::print("  knee at {} ↔ {} (hwloc){}\n", base::format_size(k.size_bytes),
                 describe_cache(k.cache), note);
    }
    fmt::print("      {:.2f} ns up to {}, {:.2f} ns from {} ({:.1f}x)\n", k.ns_before,
               base::format_size(k.plateau_end_bytes), k.ns_after,
               base::format_size(k.plateau_start_bytes), k.ns_after / k.ns_before);
  }
  for (const auto& c : res.caches) {
    bool seen = false;
    for (const auto& k : res.knees)
      seen = seen || (k.cache.level == c.level && k.cache.type == c.type);
    if (!seen)
      fmt::print("  {} (hwloc): no knee matched to it between {} and {}\n", describe_cache(c),
                 base::format_size(res.sizes.front()), base::format_size(res.sizes.back()));
  }
}

int run_cache(const CacheArgs& a) {
  const auto topo = threads::Topology::host();
  probes::CacheProbeOptions opt = probe_options(a, topo);
  if (!a.out.quiet) print_header(opt);
  const auto res = probes::run_cache_probe(topo, opt);
  const report::json params = report_params(opt, res);
  const report::Report report = make_report(topo, params, res);
  write_outputs(report, a.out);
  plot_report(report, a.plot);
  warn_counter_errors(res.counter_errors);
  if (a.out.quiet) return 0;

  if (res.max_bytes_requested > res.sizes.back())
    fmt::print("--max capped to {}: half the available memory\n",
               base::format_size(res.sizes.back()));
  int disturbed = 0, total = 0;
  for (const auto& r : res.records) disturbed += r.disturbed_repeats, total += r.repeats;
  if (disturbed)
    fmt::print(
        "* {} of {} repeats lost the cpu even after retries (busy machine?); their descheduled "
        "time was taken out\n",
        disturbed, total);
  fmt::print("huge pages: {}\n", params["hugepages"].get<std::string>());
  print_knees(res);
  fmt::print("{}\n", kCompas1998);
  fmt::print("probe time {:.1f} s\n", res.seconds);
  print_regions(res.regions, opt.events);
  if (!opt.events.requested.empty())
    fmt::print("(per size: \"counters\" and \"derived\" of each record in --json / --csv)\n");
  return 0;
}

}  // namespace

Command setup_cache(CLI::App& app) {
  auto args = std::make_shared<CacheArgs>();
  auto* cmd = app.add_subcommand(
      "cache", "ns and cycles per load vs working-set size (pointer chase, stream) and the knees");
  cmd->add_option("--min", args->min, "smallest working set, e.g. 4KiB, 64K, 4096")
      ->capture_default_str()
      ->type_name("SIZE");
  cmd->add_option("--max", args->max, "largest working set (capped to half the free memory)")
      ->capture_default_str()
      ->type_name("SIZE");
  cmd->add_option("--steps-per-octave", args->steps_per_octave,
                  "sizes per doubling, 1..16 (4: 32K, 40K, 48K, 56K, 64K, ...)")
      ->capture_default_str();
  cmd->add_option("--cpu", args->cpu, "OS index of the cpu to pin to (default: the first PU)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--repeats", args->repeats, "timed repeats per size (median reported)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--repeat-ms", args->repeat_ms, "duration of one timed repeat in milliseconds")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 60000.0));
  add_events_flag(*cmd, args->events);
  add_output_flags(*cmd, args->out);
  add_plot_flag(*cmd, args->plot);
  return {cmd, [args] { return run_cache(*args); }};
}

}  // namespace compas::app
