// compas membw --loaded-latency: how a dependent load's latency grows with the bandwidth other
// threads draw (probes::run_loaded_latency), as its own report "loaded-latency": its flags, the
// report's parameters and records, the knees and the table.
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
#include "compas/probes/loaded_latency.hpp"
#include "compas/threads/topology.hpp"
#include "plot.hpp"

namespace compas::app {

namespace {

constexpr const char* kMixes =
    "read: loads only (64 B per line); rw: copy with streaming stores, one line read and one "
    "written (1:1 on the bus, 128 B per line pair); stream: streaming stores only (64 B per line)";

constexpr const char* kKneeRule =
    "the bandwidth at which the chaser's latency has risen to 2x idle, interpolated linearly "
    "between the last point below and the first point above, in order of rising load; a point "
    "counts as above only when its median is >= 2x idle, its fastest repeat is slower than idle's "
    "slowest, its rise from idle exceeds its own spread plus idle's (max - min), and the next "
    "point is >= 2x idle too; otherwise 'not reached' with the highest bandwidth reached";

// --threads for --loaded-latency: one team size, the chaser and at least one traffic thread.
int latency_team_size(const std::string& text) {
  const auto counts = parse_thread_list("--threads", text);
  if (counts.size() != 1 || counts[0] < 2)
    throw std::invalid_argument("--threads '" + text +
                                "': --loaded-latency takes one team size of at least 2 (the "
                                "chaser and its traffic threads), e.g. 2");
  return counts[0];
}

probes::LoadedLatencyOptions latency_options(const MembwArgs& a) {
  probes::LoadedLatencyOptions o;
  o.mixes = probes::parse_traffic_mixes(a.mix);
  o.delays_ns = probes::parse_delays(a.delays);
  o.traffic_on = probes::parse_traffic_on(a.traffic_on);
  if (!a.threads.empty()) o.traffic_threads = latency_team_size(a.threads) - 1;
  try {
    if (!a.size.empty()) o.chase_bytes = base::parse_size(a.size);
    o.isa = probes::parse_membw_isa(a.isa);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--") + e.what());
  }
  o.repeats = a.repeats;
  o.repeat_ms = a.min_repeat_ms;
  o.huge_pages = !a.no_huge_pages;
  return o;
}

report::json point_json(const probes::LoadedLatencyPoint& p, double idle_ns) {
  return {{"mix", probes::to_string(p.mix)},
          {"delay_ns", p.delay_ns ? report::json(*p.delay_ns) : report::json(nullptr)},
          {"idle", !p.delay_ns.has_value()},
          {"bandwidth_gbs", p.bandwidth_gbs},
          {"min_bandwidth_gbs", p.bandwidth_min_gbs},
          {"max_bandwidth_gbs", p.bandwidth_max_gbs},
          {"latency_ns", p.latency_ns},
          {"latency_min_ns", p.latency_min_ns},
          {"latency_max_ns", p.latency_max_ns},
          {"latency_x_idle", idle_ns > 0 ? p.latency_ns / idle_ns : 0.0},
          {"traffic_threads", p.traffic_threads},
          {"repeats", static_cast<int>(p.latency_samples_ns.size())},
          {"disturbed_repeats", p.disturbed_repeats},
          {"loads", p.loads},
          {"latency_ns_samples", p.latency_samples_ns},
          {"bandwidth_gbs_samples", p.bandwidth_samples_gbs}};
}

std::string knee_text(const probes::LatencyKnee& k, double idle_ns) {
  if (k.reached) return fmt::format("{:.2f} GB/s", k.bandwidth_gbs);
  return fmt::format(
      "not reached: at most {:.2f}x idle ({:.1f} ns){}; highest bandwidth {:.2f} GB/s",
      k.max_latency_ns / idle_ns, k.max_latency_ns,
      k.within_noise ? ", 2x only within the points' spread" : "", k.max_bandwidth_gbs);
}

report::json knee_json(const probes::LatencyKnee& k, double idle_ns) {
  return {{"reached", k.reached},
          {"bandwidth_gbs", k.reached ? report::json(k.bandwidth_gbs) : report::json(nullptr)},
          {"threshold_ns", k.threshold_ns},
          {"max_bandwidth_gbs", k.max_bandwidth_gbs},
          {"latency_at_max_bandwidth_ns", k.latency_at_max_ns},
          {"max_latency_ns", k.max_latency_ns},
          {"max_latency_x_idle", k.max_latency_ns / idle_ns},
          {"within_noise", k.within_noise},
          {"text", knee_text(k, idle_ns)}};
}

std::string traffic_where(const probes::LoadedLatencyResult& r, const threads::Topology& topo) {
  const std::string node = topo.numa_nodes() > 1 ? "NUMA node" : "socket";
  return r.traffic_on == probes::TrafficOn::same ? "the chaser's " + node : "another " + node;
}

report::json latency_params(const probes::LoadedLatencyResult& r, const threads::Topology& topo,
                            const probes::LoadedLatencyOptions& o) {
  std::vector<std::string> mixes;
  report::json knees = report::json::object();
  for (std::size_t i = 0; i < r.mixes.size(); ++i) {
    mixes.push_back(probes::to_string(r.mixes[i]));
    knees[mixes.back()] = knee_json(r.knees[i], r.idle.latency_ns);
  }
  return {{"mode", "compas membw --loaded-latency"},
          {"chaser_cpu", r.chaser_cpu},
          {"traffic_cpus", threads::format_cpu_list(r.traffic_cpus)},
          {"traffic_threads", r.traffic_cpus.size()},
          {"traffic_on", probes::to_string(r.traffic_on)},
          {"traffic_where", traffic_where(r, topo)},
          {"size_bytes", r.chase_bytes},
          {"size", base::format_size(r.chase_bytes)},
          {"size_is",
           "the chase buffer; the traffic streams over as many bytes (all arrays, all "
           "traffic threads), each thread over its own block"},
          {"traffic_bytes", r.traffic_bytes},
          {"chunk_bytes", r.chunk_bytes},
          {"span_bytes", r.span_bytes},
          {"mixes", mixes},
          {"mix_definitions", kMixes},
          {"delays_ns", r.delays_ns},
          {"delay",
           "busy waiting on the TSC after each chunk_bytes of every array; at delay 0 the "
           "threads stream in span_bytes calls; idle: they sleep (1 ms at a time) and touch no "
           "memory"},
          {"repeats", o.repeats},
          {"min_repeat_ms", o.repeat_ms},
          {"isa", base::to_string(r.isa)},
          {"huge_pages", o.huge_pages},
          {"hugepage_bytes", r.hugepage_bytes},
          {"tsc_ghz", r.tsc_ghz},
          {"chase",
           "random cyclic permutation (Sattolo) over 64-byte lines, one dependent load "
           "per step, as compas cache"},
          {"bytes_counted", "read + written, no write-allocate (as membw)"},
          {"gb", 1e9},
          {"bandwidth_gbs",
           "all traffic threads' bytes during a chase repeat / its wall time, "
           "median over repeats"},
          {"latency_ns",
           "chase wall time / dependent loads, median over repeats; a repeat during which the "
           "chaser or a busy traffic thread lost its cpu (CPU time < 98% of wall time) is run "
           "again (up to 3x the repeats); disturbed_repeats counts those still used, with the "
           "chaser's descheduled time taken out"},
          {"idle_latency_ns", r.idle.latency_ns},
          {"idle_latency_min_ns", r.idle.latency_min_ns},
          {"idle_latency_max_ns", r.idle.latency_max_ns},
          {"idle_latency", "median, min and max of the idle points' repeats, all mixes"},
          {"knee_factor", 2.0},
          {"knee_definition", kKneeRule},
          {"knees", knees},
          {"seconds", r.seconds}};
}

void print_latency_table(const probes::LoadedLatencyResult& r, const threads::Topology& topo,
                         const probes::LoadedLatencyOptions& o) {
  fmt::print(
      "loaded latency: chaser on cpu {} (random chase over {}, one dependent load per step), {} "
      "traffic thread{} on cpu {} ({}) over {} in {} chunks, {} kernels; median of {} repeats of "
      ">= {} ms\n",
      r.chaser_cpu, base::format_size(r.chase_bytes), r.traffic_cpus.size(),
      r.traffic_cpus.size() == 1 ? "" : "s", threads::format_cpu_list(r.traffic_cpus),
      traffic_where(r, topo), base::format_size(r.traffic_bytes), base::format_size(r.chunk_bytes),
      base::to_string(r.isa), o.repeats, o.repeat_ms);
  fmt::print(
      "bytes counted as membw counts them: read + written, no write-allocate; GB/s = 1e9 B/s\n\n");
  fmt::print("{:<7} {:>9} {:>12} {:>11} {:>9} {:>9} {:>7}\n", "mix", "delay ns", "traffic GB/s",
             "latency ns", "min", "max", "x idle");
  for (const auto& p : r.points)
    fmt::print("{:<7} {:>9} {:>12.2f} {:>11.1f} {:>9.1f} {:>9.1f} {:>7.2f}{}\n",
               probes::to_string(p.mix), p.delay_ns ? std::to_string(*p.delay_ns) : "idle",
               p.bandwidth_gbs, p.latency_ns, p.latency_min_ns, p.latency_max_ns,
               p.latency_ns / r.idle.latency_ns, p.disturbed_repeats ? " *" : "");
  fmt::print("\nidle latency {:.1f} ns (min {:.1f}, max {:.1f}: every idle repeat of every mix)\n",
             r.idle.latency_ns, r.idle.latency_min_ns, r.idle.latency_max_ns);
  fmt::print(
      "knee: the bandwidth at which latency reaches 2x idle ({:.1f} ns), when the rise is beyond "
      "the points' spread:\n",
      2 * r.idle.latency_ns);
  for (std::size_t i = 0; i < r.mixes.size(); ++i)
    fmt::print("  {:<7} {}\n", probes::to_string(r.mixes[i]),
               knee_text(r.knees[i], r.idle.latency_ns));
  bool disturbed = false;
  for (const auto& p : r.points) disturbed = disturbed || p.disturbed_repeats > 0;
  if (disturbed)
    fmt::print(
        "* some repeats lost the cpu even after retries (busy machine?); their descheduled time "
        "was taken out\n");
}

}  // namespace

int run_loaded_latency_command(const MembwArgs& a) {
  const auto topo = threads::Topology::host();
  const probes::LoadedLatencyOptions o = latency_options(a);
  check_outputs(a.out);
  check_plot_dir(a.plot);

  const auto res = probes::run_loaded_latency(topo, o);

  report::Report report("loaded-latency", report::machine_json(topo), latency_params(res, topo, o));
  for (const auto& p : res.points) report.add(point_json(p, res.idle.latency_ns));
  write_outputs(report, a.out);
  plot_report(report, a.plot);
  if (!a.out.quiet) print_latency_table(res, topo, o);
  return 0;
}

void add_latency_flags(CLI::App& cmd, MembwArgs& a) {
  cmd.add_flag("--loaded-latency", a.loaded_latency,
               "measure instead the latency of a dependent-load chase on the first thread "
               "while the others draw bandwidth (injection delay swept from idle to 0)");
  a.latency_only.push_back(
      cmd.add_option("--mix", a.mix, "--loaded-latency traffic: read,rw,stream (comma list)")
          ->capture_default_str());
  a.latency_only.push_back(cmd.add_option("--delays", a.delays,
                                          "--loaded-latency injection delays between chunks, "
                                          "whole ns (comma list, e.g. 0,100,1000) or auto "
                                          "(50000 down to 0 in 1-2-5 steps); idle is always added")
                               ->capture_default_str());
  a.latency_only.push_back(
      cmd.add_option("--traffic-on", a.traffic_on,
                     "--loaded-latency traffic threads on the chaser's NUMA node or socket "
                     "(same) or on another one (other)")
          ->capture_default_str());
}

}  // namespace compas::app
