// compas study's report (study_report.hpp).
#include "study_report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compas/probes/pingpong.hpp"
#include "compas/report/report.hpp"
#include "compas/report/run_info.hpp"
#include "../read_json.hpp"
#include "../read_whole.hpp"
#include "report_html.hpp"
#include "stream_sizes.hpp"
#include "study_dir.hpp"
#include "study_load.hpp"
#include "study_report_parts.hpp"
#include "study_summary.hpp"

namespace compas::app {

namespace {

namespace fs = std::filesystem;
using json = report::json;

// ---- the report
// ----------------------------------------------------------------------------------

// A raw report of the study's: never through a link, never a FIFO or a device, and within the
// bounded reader's limits (a report past them is damaged: its run ran again).
std::optional<json> load(const fs::path& p) {
  try {
    return read_json_file(p.string(), Links::refuse);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string f2(double v) {
  return fmt::format("{:.2f}", v);
}

// `text` in a fenced code block, its fence longer than any run of backticks in it.
std::string code_block(const std::string& text) {
  std::size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  return fence + "\n" + text + (text.empty() || text.back() != '\n' ? "\n" : "") + fence + "\n";
}

std::string failed_run_entry(const std::string& title, const std::string& reason,
                             const std::string& log, const std::string& tail) {
  return fmt::format("### {}\n\n{}; log: `{}`\n\n{}\n", title, reason, log,
                     code_block(tail.empty() ? "(the log is empty)" : tail));
}

// The runs that did not finish (their failure records) and those that failed verification.
std::string failed_runs_section(const fs::path& dir, const std::vector<Step>& plan,
                                const RunBook& book) {
  std::string md;
  for (const auto& s : plan) {
    const std::string log = "logs/" + s.id + ".log";
    if (const auto f = book.failed.find(s.id); f != book.failed.end()) {
      md += failed_run_entry(s.title, f->second.value("reason", std::string()),
                             f->second.value("log", log), f->second.value("log_tail", ""));
    } else if (const auto d = book.done.find(s.id);
               d != book.done.end() && d->second.value("exit", 0) != 0) {
      md += failed_run_entry(
          s.title, fmt::format("verification failed (exit {})", d->second.value("exit", 0)), log,
          log_tail(log_path(dir, s.id)));
    }
  }
  return md.empty() ? md : "## Failed runs\n\n" + md;
}

// The measurements for Extra-P in extrap/: its text format, one file per kernel size, and its JSON
// Lines, one file per kernel over every size; a paragraph in the report saying where, and what a
// model can make of them.
void write_extrap_files(ReportContext& c) {
  std::string notes;
  for (const auto& [kernel, points] : c.extrap_points) {
    const ExtrapLines lines = extrap_lines(kernel, points);
    if (lines.text.empty()) continue;
    c.extrap_files[kernel + ".jsonl"] = lines.text;
    if (!lines.note.empty()) notes += "- " + kernel + ": " + lines.note + ".\n";
  }
  if (c.extrap_files.empty()) return;
  study_subdir(c.dir, "extrap");
  for (const auto& [name, text] : c.extrap_files) write_study_file(c.dir, "extrap/" + name, text);
  c.md << "\nThe kernels' times per unit of work (a sweep, a multiply, an iteration, a sort) are "
          "in `extrap/` for Extra-P: in its text format (parameters processes and threads, metric "
          "time_per_UNIT), one file per kernel size, and in its JSON Lines, one file per kernel "
          "with every run's value, over processes, threads and the size where the study varies "
          "it, sizes that are not numbers (CG's classes) apart by callpath (oversubscribed points "
          "left out).\n"
       << (notes.empty() ? "" : "\n" + notes);
}

// The report's head: complete or partial, how many runs finished and failed.
void write_head(ReportContext& c, bool complete) {
  c.md << "# compas study\n\n";
  c.md << (complete ? "All planned runs finished.\n\n"
                    : "**Partial report**: the study was stopped or some runs failed; rerun "
                      "`compas study` with the same --out to finish it.\n\n");
  const int failed = count_in(c.plan, c.book.failed);
  const int reps = study_repeats(c.a);
  c.md << fmt::format(
      "{} of {} runs finished{}. Every kernel point is run {} time{}{}. Raw JSON in `raw/`, logs "
      "in `logs/`, the run list in `runs.jsonl`.\n\n",
      count_in(c.plan, c.book.done), c.plan.size(),
      failed ? fmt::format("; {} failed (see Failed runs)", failed) : "", reps,
      reps == 1 ? "" : "s",
      reps == 1 ? " (no spread: --repeats 3 or more to see one)"
                : ", one run of every point before the next run of any");
}

// The machine's picture: hwloc's own (lstopo) when the plot script could draw it, else the
// threads' placement table; the report says which.
void write_topology_picture(ReportContext& c) {
  if (c.plots.count("topology.png")) {
    c.md << "The machine as hwloc draws it (`lstopo`):\n\n";
    c.embed("topology.png", "topology (hwloc lstopo)");
  } else if (c.plots.count("topology-placement.png")) {
    c.md << "The threads' placement: hwloc's `lstopo` did not draw the machine (not installed, "
            "Debian: apt-get install hwloc; or it failed, see logs/plots.log):\n\n";
    c.embed("topology-placement.png", "placement");
  }
}

void write_machine(ReportContext& c) {
  auto t = c.raw("topology");
  if (!t) return;
  const json& m = (*t)["machine"];
  c.study["machine"] = m;
  c.md << "## Machine\n\n";
  for (const auto& key : {"cpu_model", "sockets", "numa_nodes", "cores", "pus", "compiler"})
    if (m.contains(key))
      c.md << "- " << key << ": "
           << (m[key].is_string() ? m[key].get<std::string>() : m[key].dump()) << "\n";
  if (m.contains("caches"))
    for (const auto& cache : m["caches"])
      c.md << fmt::format("- L{} {}: {} KiB\n", cache.value("level", 0), cache.value("type", ""),
                          cache.value("size_bytes", 0ull) / 1024);
  c.md << "\n";
  write_topology_picture(c);
}

// A measurement of a characterize record with its repeats' range (3 significant digits), marked
// when wide.
std::string measured(const json& rec, const std::string& field) {
  const Spread s = field_spread(rec, field);
  return with_range_significant(s, 3) + (s.wide() ? " **!**" : "");
}

constexpr const char* kWideNote =
    "In brackets the range over the repeats; **!** marks a spread over 10% of the median.\n\n";

// The caches of the topology step's machine block.
std::vector<threads::CacheLevel> caches_of(const ReportContext& c) {
  std::vector<threads::CacheLevel> out;
  auto t = c.raw("topology");
  if (!t || !(*t).contains("machine") || !(*t)["machine"].contains("caches")) return out;
  for (const auto& j : (*t)["machine"]["caches"])
    if (j.is_object())
      out.push_back({j.value("level", 0), j.value("type", std::string()),
                     j.value("size_bytes", std::uint64_t{0}), j.value("line_bytes", 0),
                     j.value("shared_by", 0), j.value("count", 0)});
  return out;
}

// The working set against the last-level caches (STREAM's rule), under a probe's heading.
void write_stream_rule(ReportContext& c, const json& params, bool one_thread) {
  const std::uint64_t ws = params.value("size_bytes", params.value("max_bytes", std::uint64_t{0}));
  if (ws == 0) return;
  const LastLevelCache llc = last_level_cache(caches_of(c));
  // One thread's working set is held against one cache instance, the team's against all.
  c.md << "The "
       << stream_rule_text(ws, one_thread ? llc.one : llc.total,
                           one_thread ? llc.text + ", one of them" : llc.text)
       << ".\n\n";
}

void write_membw(ReportContext& c) {
  auto m = c.raw("membw");
  if (!m) return;
  c.md << "## Memory bandwidth (COMPaS Tables 1-2)\n\n" << busy_note(*m, "membw");
  c.streams_busy = busy_share(*m);
  if ((*m).contains("params")) write_stream_rule(c, (*m)["params"], false);
  c.md << "| kernel | threads | total GB/s | per thread GB/s |\n|---|---|---|---|\n";
  for (const auto& r : (*m)["results"]) {
    if (!r.contains("threads") || !r["threads"].is_number()) continue;
    c.md << fmt::format("| {} | {} | {} | {} |\n", r.value("kernel", ""), r.value("threads", 0),
                        measured(r, "bandwidth_gbs"), f2(r.value("per_thread_gbs", 0.0)));
    c.streams[r.value("kernel", "")][r.value("threads", 0)] = field_spread(r, "bandwidth_gbs");
    if (r.value("kernel", "") == "triad" &&
        r.value("bandwidth_gbs", 0.0) > c.triad_saturation.median)
      c.triad_saturation = field_spread(r, "bandwidth_gbs");
  }
  c.md << "\n" << kWideNote;
  for (const auto& r : (*m)["results"]) {
    if (!r.contains("saturated")) continue;
    if (r.value("saturated", false))
      c.md << fmt::format(
          "- {}: the bus saturates after {} thread(s) (total grows < 10% beyond); peak {} GB/s\n",
          r.value("kernel", ""), r["saturation_threads"].dump(),
          f2(r.value("peak_bandwidth_gbs", 0.0)));
    else if (!r.value("saturation_resolved", true))
      c.md << fmt::format("- {}: saturation {} (peak {} GB/s at {})\n", r.value("kernel", ""),
                          r.value("saturation_note", ""), f2(r.value("peak_bandwidth_gbs", 0.0)),
                          r.value("peak_threads", 0));
    else
      c.md << fmt::format("- {}: no saturation up to {} threads (peak {} GB/s at {})\n",
                          r.value("kernel", ""), r.value("max_threads", 0),
                          f2(r.value("peak_bandwidth_gbs", 0.0)), r.value("peak_threads", 0));
  }
  c.md << c.paper(
      "\nCOMPaS 1998 (Pentium Pro, 4 CPUs on one bus): read 203.5, write 97.9, copy 70.5 MB/s; "
      "bcopy total 71.3 / 74.1 / 74.3 / 74.2 MB/s for 1-4 threads (each thread gets 1/T of the "
      "bus).\n\n");
  c.embed("membw.png", "memory bandwidth against threads");
  for (const auto& [kernel, by_threads] : c.streams)
    for (const auto& [threads, bw] : by_threads)
      c.study["bus"]["streams"][kernel].push_back({threads, bw.median, bw.min, bw.max});
  c.study["params"]["triad_saturation_gbs"] = c.triad_saturation.median;
  c.study["params"]["triad_saturation_range_gbs"] = {c.triad_saturation.min,
                                                     c.triad_saturation.max};
}

// The loaded-latency curve: latency of a dependent load against the bandwidth other threads
// draw, the idle latency and each mix's knee, beside COMPaS's Table 2 (one bus, 1/T of it each).
void write_loaded_latency(ReportContext& c) {
  auto ll = c.raw("loaded_latency");
  if (!ll) return;
  const json& params = (*ll)["params"];
  const double idle = params.value("idle_latency_ns", 0.0);
  c.md << "## Loaded latency (the cost side of COMPaS Table 2)\n\n"
       << busy_note(*ll, "the loaded-latency curve")
       << fmt::format(
              "One thread chases random pointers over {} while {} other thread(s) stream at a "
              "delay swept from idle to none. Idle latency {:.1f} ns ({:.1f}-{:.1f}).\n\n",
              params.value("size", std::string("?")), params.value("traffic_threads", 0), idle,
              params.value("idle_latency_min_ns", 0.0), params.value("idle_latency_max_ns", 0.0))
       << "| mix | delay ns | bandwidth GB/s | latency ns | x idle |\n|---|---|---|---|---|\n";
  for (const auto& r : (*ll)["results"]) {
    if (r.value("idle", false)) continue;
    const Spread lat{r.value("latency_ns", 0.0), r.value("latency_min_ns", 0.0),
                     r.value("latency_max_ns", 0.0), r.value("repeats", 1)};
    c.md << fmt::format("| {} | {} | {} | {}{} | {:.2f} |\n", r.value("mix", ""),
                        r["delay_ns"].dump(), measured(r, "bandwidth_gbs"), with_range(lat, 1),
                        lat.wide() ? " **!**" : "", r.value("latency_x_idle", 0.0));
  }
  c.md << "\n" << kWideNote;
  if (params.contains("knees"))
    for (auto it = params["knees"].begin(); it != params["knees"].end(); ++it)
      c.md << "- knee of " << it.key()
           << " (latency 2x idle): " << it.value().value("text", std::string()) << "\n";
  c.md << c.paper(
      "\nCOMPaS 1998 (Table 2): four Pentium Pro threads shared one 74 MB/s bus, so each got 1/T "
      "of it (bcopy 71.3 / 74.1 / 74.3 / 74.2 MB/s total for 1-4 threads); the curve above shows "
      "what sharing the bus costs in latency here, and where (the knee) the bus stops absorbing "
      "more traffic.\n\n");
  c.embed("loaded-latency.png", "loaded latency: latency against bandwidth");
  for (const auto& r : (*ll)["results"])
    c.study["bus"]["curve"].push_back({{"mix", r.value("mix", "")},
                                       {"idle", r.value("idle", false)},
                                       {"bandwidth_gbs", r.value("bandwidth_gbs", 0.0)},
                                       {"latency_ns", r.value("latency_ns", 0.0)},
                                       {"latency_min_ns", r.value("latency_min_ns", 0.0)},
                                       {"latency_max_ns", r.value("latency_max_ns", 0.0)}});
  c.study["bus"]["idle_latency_ns"] = idle;
  c.study["bus"]["knees"] = params.value("knees", json::object());
}

// The hwloc cache a knee was paired with and how far, or what an unpaired knee is.
std::string knee_cache_text(const json& r) {
  const std::string cache = r.value("cache", std::string());
  const json& off = r.contains("octaves_from_cache") ? r["octaves_from_cache"] : json();
  if (!cache.empty())
    return fmt::format("{} ({} KiB per core){}", cache,
                       r.value("cache_per_core_bytes", 0ull) / 1024,
                       off.is_number() ? fmt::format(", {:+.2f} octave", off.get<double>()) : "");
  std::string text = fmt::format("none within {:g} octave: an effective size",
                                 r.value("match_limit_octaves", 1.0));
  const json& near = r.contains("octaves_from_nearest") ? r["octaves_from_nearest"] : json();
  if (r.contains("nearest_cache") && r["nearest_cache"].is_string() && near.is_number())
    text += fmt::format(" (nearest {} {} KiB per core, {:+.1f} octaves)",
                        r["nearest_cache"].get<std::string>(),
                        r.value("nearest_cache_per_core_bytes", 0ull) / 1024, near.get<double>());
  return text;
}

void write_cache_knees(ReportContext& c, const json& results) {
  bool knees = false;
  for (const auto& r : results) {
    if (r.value("pattern", "") != "knee") continue;
    if (!knees)
      c.md << "A knee is paired with the hwloc cache nearest its size (per core) within one "
              "octave, one knee per cache; a knee farther from every cache is an effective size of "
              "its own (a TLB's reach, a shared cache's share, a cache hwloc does not list).\n\n"
              "| knee between | ns before | ns after | hwloc cache |\n|---|---|---|---|\n";
    knees = true;
    c.md << fmt::format("| {} - {} KiB | {} | {} | {} |\n",
                        r.value("plateau_end_bytes", 0ull) / 1024,
                        r.value("plateau_start_bytes", 0ull) / 1024, f2(r.value("ns_before", 0.0)),
                        f2(r.value("ns_after", 0.0)), knee_cache_text(r));
  }
  if (!knees) c.md << "No knee found in the range measured.\n";
}

void write_cache(ReportContext& c) {
  auto cache = c.raw("cache");
  if (!cache) return;
  c.md << "## Cache working sets (COMPaS Fig. 12)\n\n" << busy_note(*cache, "the cache curve");
  if ((*cache).contains("params")) write_stream_rule(c, (*cache)["params"], true);
  write_cache_knees(c, (*cache)["results"]);
  c.md << "\n| working set KiB | ns per dependent load | ns per streamed load |\n|---|---|---|\n";
  std::map<unsigned long long, std::pair<std::string, std::string>> curve;
  for (const auto& r : (*cache)["results"]) {
    const std::string pat = r.value("pattern", "");
    if (pat != "chase" && pat != "stream") continue;
    auto& cell = curve[r.value("size_bytes", 0ull)];
    (pat == "chase" ? cell.first : cell.second) = measured(r, "ns_per_load");
  }
  for (const auto& [bytes, ns] : curve)
    c.md << fmt::format("| {} | {} | {} |\n", bytes / 1024, ns.first, ns.second);
  c.md << "\n"
       << kWideNote
       << c.paper(
              "COMPaS 1998 read the Pentium Pro's counters for its Fig. 12; compas times the "
              "loads (and counts them with PAPI where the machine has counters).\n\n");
  c.embed("cache.png", "latency per load against working set");
  c.embed("cache-bandwidth.png", "bandwidth against working set");
}

void write_thread_barriers(ReportContext& c) {
  auto b = c.raw("barrier_threads");
  if (!b) return;
  std::map<std::string, std::map<int, std::string>> cells;
  std::set<int> ts;
  for (const auto& r : (*b)["results"]) {
    cells[r.value("algorithm", "") + " / " + r.value("policy", "")][r.value("threads", 0)] =
        measured(r, "ns_per_barrier");
    ts.insert(r.value("threads", 0));
  }
  c.md << "## Thread barrier (COMPaS Table 3), ns per barrier\n\n"
       << busy_note(*b, "the thread barriers") << "| algorithm / policy |";
  for (int t : ts) c.md << " T=" << t << " |";
  c.md << "\n|---|";
  for (std::size_t i = 0; i < ts.size(); ++i) c.md << "---|";
  c.md << "\n";
  for (const auto& [row, byt] : cells) {
    c.md << "| " << row << " |";
    for (int t : ts) c.md << " " << (byt.count(t) ? byt.at(t) : "-") << " |";
    c.md << "\n";
  }
  c.md << "\n"
       << kWideNote
       << c.paper(
              "COMPaS 1998 spin barrier: 1222 / 1761 / 1960 ns for 2 / 3 / 4 threads; "
              "Solaris mutexes about 180 us for 4.\n\n");
  c.embed("barrier-barrier_threads.png", "thread barriers");
  c.embed("barrier.png", "thread barriers");
}

void write_process_barriers(ReportContext& c) {
  bool any = false;
  for (int p : {2, 4})
    if (auto b = c.raw("barrier_p" + std::to_string(p))) {
      if (!any) {
        c.md << "## Process barrier (COMPaS Tables 4-5)\n\n";
        for (int q : {2, 4})
          if (auto raw = c.raw("barrier_p" + std::to_string(q)))
            c.md << busy_note(*raw, fmt::format("the barrier of {} processes", q));
        c.md << "| processes | algorithm | ns |\n|---|---|---|\n";
      }
      any = true;
      for (const auto& r : (*b)["results"])
        c.md << fmt::format("| {} | {}{} | {} |\n", r.value("processes", 0),
                            r.value("algorithm", ""), r.value("chosen", false) ? " (chosen)" : "",
                            measured(r, "ns_per_barrier"));
    }
  if (any)
    c.md << "\n"
         << kWideNote
         << c.paper(
                "COMPaS 1998: NICAM on Myrinet 23.79 / 31.45 / 38.67 us for 2 / 4 / 8 "
                "nodes; MPICH on 100Base-T 493 / 1066 / 1645 us.\n\n");
  for (int p : {2, 4})
    c.embed("barrier-barrier_p" + std::to_string(p) + ".png",
            "process barrier, P=" + std::to_string(p));
}

// What a compas pingpong operation times, in today's words; "?" for an op compas does not time
// itself.
std::string measure_text_of(const std::string& op) {
  try {
    return probes::pingpong_measure(op).text;
  } catch (const std::invalid_argument&) {
    return "?";
  }
}

void write_pingpong(ReportContext& c) {
  auto pp = c.raw("pingpong");
  if (!pp) return;
  c.md << "## Put latency and bandwidth (COMPaS Fig. 2)\n\n"
       << busy_note(*pp, "pingpong")
       << "Each operation times something else: "
          "the time is per operation as the second column says, and MB/s is the bytes over that "
          "time (put_bw's is the stream's bandwidth, the others' a message's).\n\n"
          "| op | what is timed | bytes | us per op | MB/s |\n|---|---|---|---|---|\n";
  for (const auto& r : (*pp)["results"]) {
    const std::string op = r.value("op", "");
    // Today's words for compas's own ops (a file's may predate them: "round trip" for a get that
    // was a copy on the same host); the file's for others, such as the MPI baselines.
    std::string what = measure_text_of(op);
    if (what == "?") what = r.value("measure_text", std::string("?"));
    c.md << fmt::format("| {} | {} | {} | {} | {:.1f} |\n", op, what, r.value("bytes", 0ull),
                        measured(r, "latency_us"), r.value("bandwidth_mbs", 0.0));
  }
  c.md << "\n"
       << kWideNote
       << c.paper(
              "COMPaS 1998 (NICAM, Myrinet): about 16 us minimum latency, 82.5 MB/s "
              "peak.\n\n");
  c.embed("pingpong.png", "put latency and bandwidth against message size");
}

// The paper's figures for the kernels the study ran.
void write_paper_kernels(ReportContext& c) {
  if (c.a.no_paper) return;
  const json& k = c.study["kernels"];
  if (k.contains("laplace n=640") || k.contains("laplace n=4096"))
    c.md << "COMPaS 1998, Laplace n=640 on 4 nodes x 4 threads: see the paper's Figs. 5-6 "
            "(speedup against total threads per node count), for comparison of the curves' "
            "shapes.\n";
  for (auto it = k.begin(); it != k.end(); ++it)
    if (it.key().rfind("gemm ", 0) == 0) {
      c.md << "COMPaS 1998, GEMM n=1800 (Table 6, hybrid, Myrinet): efficiency 1.00 / 0.99 / "
              "0.97 on 1 node with 1 / 2 / 4 threads, 0.94 / 0.89 / 0.80 on 8 nodes; on 8 nodes "
              "the local multiply took 17.09 / 8.59 / 4.46 s and the communication 0.83 s "
              "whatever the thread count.\n";
      break;
    }
  if (k.contains("cg class=T"))
    c.md << "COMPaS 1998, CG class T (about 1 MB) against a larger class: Fig. 11 shows the "
            "small problem's superlinear speedup once each thread's share fits in cache.\n";
}

// Each kernel's traffic beside the stream that moves data its way, and the loaded-latency curve.
void write_bus_section(ReportContext& c) {
  if (!c.study.contains("bus") || !c.study["bus"].contains("kernels")) return;
  c.md << "\n## The kernels against the bus\n\n"
          "Each kernel's bandwidth by its byte model is compared with the compas membw stream "
          "whose traffic matches its own on as many threads: CG and GEMM with load (reads), "
          "Laplace and the sort with copy (one read and one write stream), not everything with "
          "triad. The GB/s column of each kernel's table gives the share.\n\n";
  c.embed("study-bus.png", "the kernels' bandwidth on the membw and loaded-latency charts");
}

// Plots no section showed (from a newer plot script, say): listed at the end, so that the
// report shows every plot the study made.
void write_other_plots(ReportContext& c) {
  if (c.plots.empty()) return;
  c.md << "\n## Other plots\n\n";
  const std::set<std::string> files = c.plots;
  for (const auto& file : files) c.embed(file, file);
}

// The plots the study made.
std::set<std::string> plots_in(const fs::path& dir) {
  std::set<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir / "plots", ec))
    if (e.path().extension() == ".png") files.insert(e.path().filename().string());
  return files;
}

}  // namespace

void ReportContext::embed(const std::string& file, const std::string& alt) {
  if (plots.erase(file) == 0) return;
  md << "![" << alt << "](plots/" << file << ")\n\n";
}

std::optional<json> ReportContext::raw(const std::string& id) const {
  if (!book.done.count(id)) return std::nullopt;
  auto j = load(dir / "raw" / (id + ".json"));
  // A whole report may still lack a block (an older compas, a run that measured nothing): the
  // sections read each as an empty object, never as null.
  if (j && j->is_object())
    for (const char* block : {"params", "machine", "slice", "run"})
      if (!j->contains(block) || !(*j)[block].is_object()) (*j)[block] = json::object();
  return j;
}

int count_in(const std::vector<Step>& plan, const std::map<std::string, json>& runs) {
  return static_cast<int>(
      std::count_if(plan.begin(), plan.end(), [&](const Step& s) { return runs.count(s.id) > 0; }));
}

// The cores the summary's splits share: the machine's, else the largest P x T that fits.
int summary_cores(const ReportContext& c) {
  const int machine = c.study["machine"].value("cores", 0);
  if (machine > 0) return machine;
  int most = 1;
  for (const auto& s : c.plan)
    if (s.kind == "kernel" && !s.oversubscribed) most = std::max(most, s.procs * s.threads);
  return most;
}

void write_report(const StudyArgs& a, const std::vector<Step>& plan, const RunBook& book,
                  bool complete) {
  ReportContext c(a, plan, book);
  c.study = {{"command", "study"},
             {"version", report::version()},
             {"machine", json::object()},
             {"params",
              {{"complete", complete},
               {"budget_minutes", a.budget},
               {"grid", a.grid},
               {"repeats", study_repeats(a)},
               {"scaling", a.scaling}}},
             {"results", json::array()},
             {"kernels", json::object()}};
  c.study["run"] = report::run_info();
  c.csv << kStudyCsvHeader;
  c.plots = plots_in(c.dir);
  write_head(c, complete);
  const std::size_t head_end = c.md.str().size();  // the metadata and summary go here
  write_machine(c);
  write_membw(c);
  write_loaded_latency(c);
  write_cache(c);
  write_thread_barriers(c);
  write_process_barriers(c);
  write_pingpong(c);
  write_kernel_sections(c);
  write_paper_kernels(c);
  write_bus_section(c);
  c.embed("study.png", "speedup of every kernel size");
  write_other_plots(c);
  if (const std::string section = failed_runs_section(c.dir, plan, book); !section.empty())
    c.md << "\n" << section;
  write_extrap_files(c);
  std::string md = c.md.str();
  md.insert(head_end, run_metadata_md(c.study["run"], a) + summary_md(c.study, summary_cores(c)));
  write_study_file(c.dir, "report.md", md);
  write_study_file(c.dir, "study.json", c.study.dump(2) + "\n");
  write_study_file(c.dir, "study.csv", c.csv.str());
}

void write_html_report(const fs::path& dir) {
  std::string md;
  try {
    md = read_whole((dir / "report.md").string(), kStudyFileLimit, Links::refuse);
  } catch (const UnreadableFile&) {
  }
  // Only the study's own plots are read into the page, never through a link.
  const std::set<std::string> own = study_files(dir);
  const auto read_image = [&](const std::string& target) -> std::optional<std::string> {
    if (!own.count(target)) return std::nullopt;
    try {
      return read_whole((dir / target).string(), kStudyFileLimit, Links::refuse);
    } catch (const UnreadableFile&) {
      return std::nullopt;
    }
  };
  write_study_file(dir, "report.html", markdown_to_html(md, "compas study", read_image));
}

}  // namespace compas::app
