// compas study's kernel sections (study_report_parts.hpp). Each point (kernel size, P x T) is
// run several times: its seconds are the median of the runs with their min and max, and every
// number derived from them (speedup, efficiency, rate, the kernel's share of the memory bus)
// carries the range those runs allow. A point whose spread exceeds 10% is marked; a verdict whose
// threshold lies within the spread says so instead of concluding.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../kernel_table.hpp"
#include "study_load.hpp"
#include "study_models.hpp"
#include "study_points.hpp"
#include "study_report_parts.hpp"
#include "time_units.hpp"

namespace compas::app {

const char* const kStudyCsvHeader =
    "kernel,size,procs,threads,oversubscribed,unit,units,seconds_per_unit,seconds_per_unit_min,"
    "seconds_per_unit_max,spread,speedup,speedup_min,speedup_max,efficiency,rate_field,rate,"
    "rate_min,rate_max,gbs,compute_s_per_unit,communicate_s_per_unit,synchronize_s_per_unit,"
    "cpu_per_wall,verified,runs\n";

namespace {

using json = report::json;

// The finished runs of one point, in plan order.
struct PointRuns {
  const Step* step = nullptr;  // the first of its runs in the plan
  std::vector<RunResult> runs;
};

// The points of each kernel size ("laplace n=640"), each with all its finished runs.
std::map<std::string, std::vector<PointRuns>> gather_points(const ReportContext& c) {
  std::map<std::string, std::vector<PointRuns>> by_size;
  std::map<std::string, std::pair<std::string, std::size_t>> where;  // point -> its slot
  for (const auto& s : c.plan) {
    if (s.kind != "kernel") continue;
    auto r = c.raw(s.id);
    if (!r || !(*r).contains("results") || !(*r)["results"].is_array() || (*r)["results"].empty())
      continue;
    const std::string name = s.series.empty() ? s.kernel + " " + s.size : s.series;
    auto& points = by_size[name];
    const auto w = where.find(s.point);
    if (w == where.end()) {
      where[s.point] = {name, points.size()};
      points.push_back({&s, {}});
    }
    points[where[s.point].second].runs.push_back({s.id, (*r)["results"][0], busy_share(*r)});
  }
  return by_size;
}

// The compas membw stream whose traffic matches the kernel's (its KernelSpec says): CG reads
// (load), Laplace reads one array and writes another (copy), the sort reads and scatters (copy),
// GEMM's panels are read (load).
std::string stream_for(const std::string& kernel) {
  const KernelSpec* k = find_kernel(kernel);
  return k ? k->stream : "load";
}

// The stream's bandwidth on p threads, or on the most threads membw measured below p (a job
// of more threads than cores draws no more than all cores do).
Spread stream_at(const ReportContext& c, const std::string& stream, int p) {
  const auto s = c.streams.find(stream);
  if (s == c.streams.end() || s->second.empty()) return {};
  auto it = s->second.upper_bound(p);
  if (it == s->second.begin()) return {};
  return std::prev(it)->second;
}

void compare_with_streams(const ReportContext& c, std::vector<PointStats>& points) {
  for (auto& st : points) {
    st.stream = stream_at(c, stream_for(st.step->kernel), st.p());
    if (st.gbs.n > 0 && st.stream.n > 0) st.bus_share = ratio(st.gbs, st.stream);
  }
}

// "12.3 (45%, 40-50%)": the kernel's bandwidth by its byte model and its share of its stream's.
std::string bus_cell(const PointStats& st) {
  if (st.gbs.n == 0) return "-";
  if (st.bus_share.n == 0) return fmt::format("{:.1f}", st.gbs.median);
  if (!st.bus_share.known())
    return fmt::format("{:.1f} ({:.0f}%)", st.gbs.median, 100 * st.bus_share.median);
  return fmt::format("{:.1f} ({:.0f}%, {:.0f}-{:.0f}%)", st.gbs.median, 100 * st.bus_share.median,
                     100 * st.bus_share.min, 100 * st.bus_share.max);
}

std::string verified_cell(const PointStats& st) {
  if (st.verified == st.count()) return "yes";
  return st.count() == 1
             ? "NO"
             : fmt::format("NO ({} of {} failed)", st.count() - st.verified, st.count());
}

// "6000" when every run did as much, else "4000 - 6000".
std::string units_cell(const PointStats& st) {
  const Spread u = spread_of(st.units());
  return u.min == u.max ? fmt::format("{:.15g}", u.min)
                        : fmt::format("{:.15g} - {:.15g}", u.min, u.max);
}

// The points that have runs with a work record.
std::vector<const PointStats*> measured(const std::vector<PointStats>& points) {
  std::vector<const PointStats*> out;
  for (const auto& st : points)
    if (st.count() > 0) out.push_back(&st);
  return out;
}

// "**Busy machine:** ..." naming the points one of whose runs was measured beside other work.
std::string busy_points_note(const std::vector<const PointStats*>& points) {
  std::string which;
  for (const auto* st : points)
    if (st->busy >= kBusyShare)
      which += fmt::format("{}{} x {} ({:.0f}%)", which.empty() ? "" : ", ", st->step->procs,
                           st->step->threads, 100 * st->busy);
  if (which.empty()) return "";
  return "\n**Busy machine:** while runs of " + which +
         " measured, other processes used up to that share of the machine's CPU time (this "
         "job's own processes not counted): their times may be long, their rates low, and what "
         "is judged from them with them. Measure again on a quiet machine to cite them.\n";
}

void write_table(ReportContext& c, const std::string& rate_name,
                 const std::vector<PointStats>& points) {
  const bool weak = c.a.scaling == "weak";
  const auto shown = measured(points);
  const std::string unit = shown.front()->unit;
  std::vector<double> times;
  for (const auto* st : shown) times.push_back(st->time.min);
  const TimeUnit u = time_unit_for(times);
  c.md << "| P x T |" << (weak ? " size |" : "") << " runs | " << unit << "s per run | time per "
       << unit << " " << u.name << " | min - max | spread | "
       << (weak ? "scaled speedup" : "speedup") << " | efficiency | " << rate_name << " | GB/s (of "
       << stream_for(shown.front()->step->kernel) << ") | compute " << u.name << " | communicate "
       << u.name << " | synchronize " << u.name << " | CPU / wall | verified |\n"
       << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" << (weak ? "---|" : "")
       << "\n";
  for (const auto* stp : shown) {
    const PointStats& st = *stp;
    const Spread& t = st.time;
    const bool base = st.speedup.n > 0;
    c.md << fmt::format(
        "| {} x {}{}{} | {} | {} | {} | {} - {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} "
        "|\n",
        st.step->procs, st.step->threads, st.step->oversubscribed ? " (over)" : "",
        weak ? " | " + st.step->size : std::string(), st.count(), units_cell(st),
        in_unit(t.median, u), in_unit(t.min, u), in_unit(t.max, u), spread_cell(t),
        base ? with_range(st.speedup, 2) : "-", base ? with_range(st.efficiency, 2) : "-",
        significant(st.rate.median), bus_cell(st), in_unit(st.compute, u),
        in_unit(st.communicate, u), in_unit(st.synchronize, u),
        fmt::format("{:.2f}", st.cpu_per_wall), verified_cell(st));
  }
  c.md << "\nEach run reports its work in " << unit
       << "s and their timed seconds; runs of one point may do different work (each lasts at "
          "least --min-seconds), so every figure is per "
       << unit
       << " or a rate, never a run's total time. Time: the median over the point's runs of each "
          "run's seconds per "
       << unit << ", in " << u.name
       << " (4 significant digits); spread: (max - min) / median, **bold** over 10%: such a "
          "point is noisy. Speedup and efficiency: against 1 x 1's median, in brackets the range "
          "the runs allow (1 x 1's fastest over this point's slowest, to its slowest over this "
          "point's fastest)"
       << (weak ? "; under weak scaling the size grows with P x T (each core keeps 1 x 1's "
                  "share), the scaled speedup is the point's rate over 1 x 1's, and efficiency "
                  "is that over P x T (1: the time stayed that of 1 x 1)"
                : "")
       << ". " << rate_name
       << ": the median of the runs' rates. "
          "GB/s: the kernel's traffic by its byte model (median over the runs), in brackets its "
          "share of the compas membw stream that moves data the way it does on as many threads. "
          "Region times (per "
       << unit
       << ", means over threads) and CPU / wall (CPU time of all processes over the timed "
          "wallclock) are medians over the same runs.\n";
  for (const auto& st : points)
    for (const auto& why : st.left_out)
      c.md << fmt::format("\nLeft out of {} x {}: {}.\n", st.step->procs, st.step->threads, why);
  c.md << busy_points_note(shown);
}

void record_rows(ReportContext& c, const std::string& name, const std::string& rate_name,
                 const std::vector<PointStats>& points, json& rows) {
  for (const auto* stp : measured(points)) {
    const PointStats& st = *stp;
    const Step& s = *st.step;
    const Spread& t = st.time;
    const bool base = st.speedup.n > 0;
    const json speedup_range = base ? json{st.speedup.min, st.speedup.max} : json{};
    const bool verified = st.verified == st.count();
    c.study["results"].push_back({{"kernel_size", name},
                                  {"procs", s.procs},
                                  {"threads", s.threads},
                                  {"oversubscribed", s.oversubscribed},
                                  {"unit", st.unit},
                                  {"seconds_per_unit", t.median},
                                  {"speedup", base ? json(st.speedup.median) : json()},
                                  {"speedup_min", base ? json(st.speedup.min) : json()},
                                  {"speedup_max", base ? json(st.speedup.max) : json()},
                                  {"efficiency", base ? json(st.efficiency.median) : json()},
                                  {"wide_spread", t.wide()}});
    std::string units;
    for (double u : st.units()) {
      if (!units.empty()) units += ';';
      units += fmt::format("{:.15g}", u);
    }
    c.csv << fmt::format(
        "{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.4g},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{},"
        "{:.6g},{:.6g},{:.6g},{:.4g},{},{}\n",
        s.kernel, s.size, s.procs, s.threads, s.oversubscribed ? 1 : 0, st.unit, units, t.median,
        t.min, t.max, t.relative(), base ? fmt::format("{:.6g}", st.speedup.median) : "",
        base ? fmt::format("{:.6g}", st.speedup.min) : "",
        base ? fmt::format("{:.6g}", st.speedup.max) : "",
        base ? fmt::format("{:.6g}", st.efficiency.median) : "", rate_name, st.rate.median,
        st.rate.min, st.rate.max, st.gbs.n > 0 ? fmt::format("{:.6g}", st.gbs.median) : "",
        st.compute, st.communicate, st.synchronize, st.cpu_per_wall, verified ? 1 : 0, st.count());
    json row = {{"size", s.size},
                {"procs", s.procs},
                {"threads", s.threads},
                {"oversubscribed", s.oversubscribed},
                {"runs", st.count()},
                {"unit", st.unit},
                {"units", json(st.units())},
                {"seconds_per_unit", t.median},
                {"seconds_per_unit_min", t.min},
                {"seconds_per_unit_max", t.max},
                {"seconds_per_unit_samples", json(st.per_unit_samples())},
                {"spread", t.relative()},
                {"wide_spread", t.wide()},
                {"speedup", base ? json(st.speedup.median) : json()},
                {"speedup_range", speedup_range},
                {"efficiency", base ? json(st.efficiency.median) : json()},
                {"rate", st.rate.median},
                {"rate_min", st.rate.min},
                {"rate_max", st.rate.max},
                {"rate_samples", json(st.rate_samples())},
                {"gbs", st.gbs.n > 0 ? json(st.gbs.median) : json()},
                {"compute_seconds_per_unit", st.compute},
                {"communicate_seconds_per_unit", st.communicate},
                {"synchronize_seconds_per_unit", st.synchronize},
                {"cpu_per_wall", st.cpu_per_wall},
                {"busy_share", st.busy},
                {"verified", verified}};
    if (!st.left_out.empty()) row["left_out"] = st.left_out;
    rows.push_back(std::move(row));
  }
}

// The points' bandwidth beside their streams', for the chart of the kernels against the bus.
void record_bus(ReportContext& c, const std::string& name, const std::vector<PointStats>& points) {
  for (const auto& st : points) {
    if (st.gbs.n == 0 || st.step->oversubscribed) continue;
    json k = {{"kernel_size", name},
              {"kernel", st.step->kernel},
              {"procs", st.step->procs},
              {"threads", st.step->threads},
              {"p", st.p()},
              {"gbs", st.gbs.median},
              {"gbs_min", st.gbs.min},
              {"gbs_max", st.gbs.max},
              {"stream", stream_for(st.step->kernel)}};
    if (st.bus_share.n > 0) {
      k["stream_gbs"] = st.stream.median;
      k["share_of_stream"] = st.bus_share.median;
    }
    c.study["bus"]["kernels"].push_back(k);
  }
}

// "(X-Y)" for a verdict that cannot conclude.
std::string not_resolved(const std::string& what, const Spread& s, const std::string& unit) {
  return fmt::format(
      "not resolved: {} ({:.2f}{u} to {:.2f}{u} over the runs) lies across the threshold, "
      "a difference smaller than the spread; more --repeats or a quieter machine may settle it",
      what, s.min, s.max, fmt::arg("u", unit));
}

// The kernel's character, from its bandwidth against its stream's, its efficiency and its
// communication share, each compared with its threshold only when the spread lets it.
std::string verdict_of(const ReportContext& c, const std::string& rate_name,
                       const std::vector<PointStats>& points) {
  const PointStats* fastest = nullptr;  // by the median of its runs' rates, not oversubscribed
  const PointStats* most_efficient = nullptr;
  double best_rate = 0;
  std::vector<const PointStats*> comm;  // P > 1, by P
  for (const auto* stp : measured(points)) {
    const PointStats& st = *stp;
    if (st.step->oversubscribed) continue;
    if (!fastest || st.rate.median > fastest->rate.median) fastest = &st;
    if (st.p() > 1 && st.efficiency.n > 0 &&
        (!most_efficient || st.efficiency.median > most_efficient->efficiency.median))
      most_efficient = &st;
    best_rate = std::max(best_rate, st.rate.median);
    if (st.step->procs > 1 && st.comm_share.n > 0) comm.push_back(&st);
  }
  // Against the stream that matches the kernel's traffic on as many threads, else the triad's
  // peak.
  const bool own_stream = fastest && fastest->bus_share.n > 0;
  const Spread& sat = own_stream ? fastest->stream : c.triad_saturation;
  std::string against = "the triad saturation bandwidth";
  if (own_stream) {
    const std::string stream = stream_for(fastest->step->kernel);
    const int on = std::min(fastest->p(), c.streams.at(stream).rbegin()->first);
    against = fmt::format("{}'s bandwidth on {} thread{}", stream, on, on == 1 ? "" : "s");
  }
  if (fastest && fastest->gbs.n > 0 && fastest->gbs.median > 0 && sat.n > 0 && sat.median > 0) {
    const Spread bus = ratio(fastest->gbs, sat);
    const std::string what =
        fmt::format("{:.1f} GB/s by the kernel's byte model is {:.0f}% of {} ({:.1f} GB/s)",
                    fastest->gbs.median, 100 * bus.median, against, sat.median);
    if (side_of(bus, 1.2) == Side::above)
      return "cache-resident: " + what + ", more than memory delivers: its working set is " +
             "served from cache";
    if (side_of(bus, 1.2) == Side::within)
      return not_resolved("cache-resident or memory-bound: the kernel's bandwidth over " + against +
                              ", threshold 1.2,",
                          bus, "");
    if (side_of(bus, 0.8) == Side::above) return "memory-bound: " + what;
    if (side_of(bus, 0.8) == Side::within)
      return not_resolved(
          "memory-bound or not: the kernel's bandwidth over " + against + ", threshold 0.8,", bus,
          "");
  }
  if (most_efficient && most_efficient->efficiency.median > 1.05) {
    if (side_of(most_efficient->efficiency, 1.0) == Side::above)
      return "cache-resident: parallel efficiency above 1 (the per-thread share fits in cache, "
             "as COMPaS Figs. 7 and 11)";
    return not_resolved(fmt::format("superlinear or not: the efficiency at {} x {}, threshold 1,",
                                    most_efficient->step->procs, most_efficient->step->threads),
                        most_efficient->efficiency, "");
  }
  std::sort(comm.begin(), comm.end(), [](const PointStats* x, const PointStats* y) {
    return x->step->procs < y->step->procs;
  });
  if (comm.size() >= 2 && comm.back()->comm_share.median > 0.2 &&
      comm.back()->comm_share.median > comm.front()->comm_share.median) {
    const Spread& hi = comm.back()->comm_share;
    if (hi.min > comm.front()->comm_share.max)
      return fmt::format("communication-bound: the communicate share reaches {:.0f}% at P={}",
                         100 * hi.median, comm.back()->step->procs);
    return not_resolved(fmt::format("communication-bound or not: the communicate share at P={} "
                                    "against P={}'s",
                                    comm.back()->step->procs, comm.front()->step->procs),
                        scaled(hi, 100), "%");
  }
  if (fastest && fastest->gbs.n > 0 && fastest->gbs.median > 0)
    return fmt::format(
        "compute-bound: {:.1f} GB/s is {:.0f}% of {}, efficiency stays at or below 1, "
        "communication stays small",
        fastest->gbs.median, sat.median > 0 ? 100 * fastest->gbs.median / sat.median : 0.0,
        against);
  return fmt::format(
      "compute-bound: up to {:.1f} {} with no memory-traffic model to compare, efficiency stays "
      "at or below 1, communication stays small",
      best_rate, rate_name);
}

// "laplace n=640" -> "laplace_n640"
std::string file_name_of(const std::string& kernel_size) {
  std::string out;
  for (char ch : kernel_size)
    if (std::isalnum(static_cast<unsigned char>(ch)))
      out += ch;
    else if (ch == ' ')
      out += '_';
  return out;
}

void write_scaling(ReportContext& c, const std::string& name, const std::vector<PointStats>& points,
                   json& kernel) {
  std::vector<std::pair<double, double>> speedups;
  std::vector<ScalingPoint> scaling;
  for (const auto* stp : measured(points)) {
    const PointStats& st = *stp;
    if (!st.step->oversubscribed && st.p() > 1 && st.speedup.n > 0)
      speedups.push_back({st.p(), st.speedup.median});
    scaling.push_back({st.step->procs, st.step->threads, st.step->oversubscribed, st.time.median,
                       st.per_unit_samples()});
    c.extrap_points[st.step->kernel].push_back({st.step->size, st.step->procs, st.step->threads,
                                                st.step->oversubscribed, st.per_unit_samples(),
                                                st.unit});
  }
  const std::string unit = measured(points).front()->unit;
  const auto summary = scaling_summary(speedups, scaling, c.a.scaling == "weak", unit);
  c.md << summary.markdown;
  kernel.update(summary.json);
  if (const auto text = extrap_export(name, scaling, unit); !text.empty())
    c.extrap_files[file_name_of(name) + ".txt"] = text;
}

// The kernel runs' busy shares, median and most, for compare's machine lines.
void record_load(ReportContext& c, const std::map<std::string, std::vector<PointRuns>>& all) {
  std::vector<double> shares;
  for (const auto& [name, points] : all)
    for (const auto& pr : points)
      for (const auto& r : pr.runs) shares.push_back(r.busy);
  if (shares.empty()) return;
  const Spread s = spread_of(shares);
  c.study["kernel_runs_load"] = {{"median", s.median}, {"max", s.max}, {"runs", s.n}};
}

}  // namespace

void write_kernel_sections(ReportContext& c) {
  const auto all = gather_points(c);
  record_load(c, all);
  for (const auto& [name, runs] : all) {
    c.md << "## " << name << "\n\n";
    const std::string rate_name = rate_field(runs.front().step->kernel);
    std::vector<PointStats> points;
    for (const auto& pr : runs) points.push_back(point_stats(pr.step, pr.runs));
    if (measured(points).empty()) {
      c.md << "No run of this kernel size has a work record to report:\n\n";
      for (const auto& st : points)
        for (const auto& why : st.left_out) c.md << "- " << why << "\n";
      c.md << "\n";
      continue;
    }
    derive_speedups(points, c.a.scaling == "weak");
    compare_with_streams(c, points);
    record_bus(c, name, points);
    write_table(c, rate_name, points);
    json rows = json::array();
    record_rows(c, name, rate_name, points, rows);
    json kernel = {
        {"rows", rows}, {"rate_field", rate_name}, {"unit", measured(points).front()->unit}};
    write_scaling(c, name, points, kernel);
    std::string verdict = verdict_of(c, rate_name, points);
    if (verdict.find("bandwidth") != std::string::npos)  // judged against a stream
      verdict += busy_stream_caveat(c.streams_busy);
    c.md << "\nVerdict: " << verdict << ".\n\n";
    c.embed("study-" + file_name_of(name) + ".png", name + ": speedup against P x T");
    kernel["verdict"] = verdict;
    c.study["kernels"][name] = kernel;
  }
}

}  // namespace compas::app
