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

#include "kernel_table.hpp"
#include "study_load.hpp"
#include "study_models.hpp"
#include "study_report_parts.hpp"
#include "time_units.hpp"

namespace compas::app {

const char* const kStudyCsvHeader =
    "kernel,size,procs,threads,oversubscribed,seconds,speedup,efficiency,rate_field,rate,"
    "compute_s,communicate_s,synchronize_s,cpu_seconds,verified,seconds_min,seconds_max,spread,"
    "speedup_min,speedup_max,runs\n";

namespace {

using json = report::json;

// The finished runs of one point, in plan order.
struct PointRuns {
  const Step* step = nullptr;  // the first of its runs in the plan
  std::vector<json> recs;      // each run's result record
};

// One point, summarized.
struct PointStats {
  const Step* step = nullptr;
  int runs = 0, verified = 0;
  std::vector<double> samples;  // each run's seconds, or one run's repetitions
  Spread seconds, speedup, efficiency, rate, gbs, comm_share;
  Spread stream;     // the bandwidth of the kernel's matching stream on as many threads
  Spread bus_share;  // gbs / stream
  const json* median_run = nullptr;  // regions and CPU time come from it
  double compute = 0, communicate = 0, synchronize = 0, cpu = 0;

  int p() const { return step->procs * step->threads; }
};

double seconds_of(const json& r) {
  return r.value("median_seconds", r.value("seconds", 0.0));
}

// Each repetition's seconds of a kernel timed several times in one run (GEMM, sort), else none.
std::vector<double> repetitions_of(const json& r) {
  for (const char* k : {"iter_seconds", "iteration_seconds"})
    if (r.contains(k) && r[k].is_array() && r[k].size() > 1) {
      std::vector<double> v;
      for (const auto& x : r[k])
        if (x.is_number()) v.push_back(x.get<double>());
      return v;
    }
  return {};
}

// How many repetitions one run's region and CPU times cover.
double repetitions_in(const json& r) {
  const auto reps = repetitions_of(r);
  return reps.empty() ? 1.0 : static_cast<double>(reps.size());
}

// A rate or bandwidth that is (its value x the run's "seconds") / time: its spread follows the
// point's seconds.
Spread inverse_of_time(const json& r, const std::string& field, const Spread& seconds) {
  Spread s;
  const double work = r.value(field, 0.0) * r.value("seconds", 0.0);
  if (!(work > 0) || !(seconds.min > 0)) return s;
  s.n = seconds.n;
  s.median = work / seconds.median;
  s.min = work / seconds.max;
  s.max = work / seconds.min;
  return s;
}

// Mean over threads of one region's seconds per repetition (per thread, the three regions add
// up to its time in the kernel).
double region_of(const json& r, const char* reg) {
  if (!r.contains("regions") || !r["regions"].contains(reg)) return 0.0;
  const json& g = r["regions"][reg];
  return g.value("mean_seconds", g.value("max_seconds", 0.0)) / repetitions_in(r);
}

PointStats point_stats(const PointRuns& pr, const std::string& rate_name) {
  PointStats st;
  st.step = pr.step;
  st.runs = static_cast<int>(pr.recs.size());
  std::vector<double> per_run, shares;
  for (const auto& r : pr.recs) {
    per_run.push_back(seconds_of(r));
    st.verified += r.value("verified", false) ? 1 : 0;
    const double com = region_of(r, "communicate");
    const double total = region_of(r, "compute") + com + region_of(r, "synchronize");
    if (total > 0) shares.push_back(com / total);
  }
  st.samples = per_run.size() > 1 ? per_run : repetitions_of(pr.recs.front());
  st.seconds = st.samples.empty() ? spread_of(per_run) : spread_of(st.samples);
  // The run closest to the median stands for the point in what is not repeated.
  std::size_t mid = 0;
  for (std::size_t i = 1; i < per_run.size(); ++i)
    if (std::abs(per_run[i] - st.seconds.median) < std::abs(per_run[mid] - st.seconds.median))
      mid = i;
  st.median_run = &pr.recs[mid];
  const json& r = *st.median_run;
  st.compute = region_of(r, "compute");
  st.communicate = region_of(r, "communicate");
  st.synchronize = region_of(r, "synchronize");
  st.cpu = r.value("cpu_seconds", 0.0) / repetitions_in(r);
  st.rate = inverse_of_time(r, rate_name, st.seconds);
  st.gbs = inverse_of_time(r, "model_gbs", st.seconds);
  st.comm_share = spread_of(shares);
  return st;
}

// The points of each kernel size ("laplace n=640"), each with all its finished runs.
std::map<std::string, std::vector<PointRuns>> gather_points(const ReportContext& c) {
  std::map<std::string, std::vector<PointRuns>> by_size;
  std::map<std::string, std::pair<std::string, std::size_t>> where;  // point -> its slot
  for (const auto& s : c.plan) {
    if (s.kind != "kernel") continue;
    auto r = c.raw(s.id);
    if (!r || !(*r).contains("results") || (*r)["results"].empty()) continue;
    const std::string name = s.series.empty() ? s.kernel + " " + s.size : s.series;
    auto& points = by_size[name];
    const auto w = where.find(s.point);
    if (w == where.end()) {
      where[s.point] = {name, points.size()};
      points.push_back({&s, {}});
    }
    points[where[s.point].second].recs.push_back((*r)["results"][0]);
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

// Strong scaling: 1 x 1's time over the point's. Weak scaling (the work grows with p): the
// scaled speedup, the point's rate over 1 x 1's.
void derive_speedups(std::vector<PointStats>& points, bool weak) {
  const PointStats* base = nullptr;
  for (const auto& st : points)
    if (st.step->procs == 1 && st.step->threads == 1) base = &st;
  if (!base) return;
  for (auto& st : points) {
    if (&st == base) {  // 1 by definition, whatever the spread of its runs
      st.speedup = st.efficiency = {1, 1, 1, st.seconds.n};
      continue;
    }
    st.speedup = weak ? ratio(st.rate, base->rate) : ratio(base->seconds, st.seconds);
    st.efficiency = scaled(st.speedup, 1.0 / st.p());
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
  if (st.verified == st.runs) return "yes";
  return st.runs == 1 ? "NO" : fmt::format("NO ({} of {} failed)", st.runs - st.verified, st.runs);
}

void write_table(ReportContext& c, const std::string& rate_name,
                 const std::vector<PointStats>& points) {
  const bool weak = c.a.scaling == "weak";
  std::vector<double> times;
  for (const auto& st : points) times.push_back(st.seconds.min);
  const TimeUnit u = time_unit_for(times);
  c.md << "| P x T |" << (weak ? " size |" : "") << " runs | time " << u.name << " | min - max | "
       << "spread | " << (weak ? "scaled speedup" : "speedup") << " | efficiency | " << rate_name
       << " | GB/s (of " << stream_for(points.front().step->kernel) << ") | compute " << u.name
       << " | communicate " << u.name << " | synchronize " << u.name
       << " | CPU / wall | verified |\n"
       << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" << (weak ? "---|" : "")
       << "\n";
  for (const auto& st : points) {
    const Spread& t = st.seconds;
    const bool base = st.speedup.n > 0;
    c.md << fmt::format(
        "| {} x {}{}{} | {} | {} | {} - {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
        st.step->procs, st.step->threads, st.step->oversubscribed ? " (over)" : "",
        weak ? " | " + st.step->size : std::string(), st.runs, in_unit(t.median, u),
        in_unit(t.min, u), in_unit(t.max, u), spread_cell(t),
        base ? with_range(st.speedup, 2) : "-", base ? with_range(st.efficiency, 2) : "-",
        significant(st.rate.median), bus_cell(st), in_unit(st.compute, u),
        in_unit(st.communicate, u), in_unit(st.synchronize, u),
        t.median > 0 ? fmt::format("{:.2f}", st.cpu / t.median) : "-", verified_cell(st));
  }
  bool internal = false;
  for (const auto& st : points) internal = internal || (st.runs == 1 && st.samples.size() > 1);
  c.md << "\ntime: the median of the point's runs, in " << u.name << " (4 significant digits)"
       << (internal ? " (of one run's repetitions where it ran once)" : "")
       << "; spread: (max - min) / median, **bold** over 10%: such a point is noisy. Speedup "
          "and efficiency: against 1 x 1's median, in brackets the range the runs allow (1 x "
          "1's fastest over this point's slowest, to its slowest over this point's fastest)"
       << (weak ? "; under weak scaling the size grows with P x T (each core keeps 1 x 1's "
                  "share), the scaled speedup is the point's rate over 1 x 1's, and efficiency "
                  "is that over P x T (1: the time stayed that of 1 x 1)"
                : "")
       << ". "
          "GB/s: the kernel's traffic by its byte model, in brackets its share of the compas "
          "membw stream that moves data the way it does on as many threads. "
          "Region times are means over threads, and they and CPU / wall (CPU time of all "
          "processes over wallclock) come from the run closest to the median.\n";
}

// How much the point's runs did (compas compare pairs total times of equal work only).
json work_of_run(const json& r) {
  json w = json::object();
  for (const char* f : {"iters", "sweeps", "iterations", "passes"})
    if (r.contains(f) && r[f].is_number()) w[f] = r[f];
  return w;
}

void record_rows(ReportContext& c, const std::string& name, const std::string& rate_name,
                 const std::vector<PointStats>& points, json& rows) {
  for (const auto& st : points) {
    const Step& s = *st.step;
    const Spread& t = st.seconds;
    const json speedup_range = st.speedup.n > 0 ? json{st.speedup.min, st.speedup.max} : json{};
    c.study["results"].push_back({{"kernel_size", name},
                                  {"procs", s.procs},
                                  {"threads", s.threads},
                                  {"oversubscribed", s.oversubscribed},
                                  {"seconds", t.median},
                                  {"speedup", st.speedup.median},
                                  {"speedup_min", st.speedup.min},
                                  {"speedup_max", st.speedup.max},
                                  {"efficiency", st.efficiency.median},
                                  {"wide_spread", t.wide()}});
    c.csv << fmt::format(
        "{},{},{},{},{},{:.6g},{:.6g},{:.6g},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{},{:.6g},"
        "{:.6g},{:.4g},{:.6g},{:.6g},{}\n",
        s.kernel, s.size, s.procs, s.threads, s.oversubscribed ? 1 : 0, t.median, st.speedup.median,
        st.efficiency.median, rate_name, st.rate.median, st.compute, st.communicate, st.synchronize,
        st.cpu, st.verified == st.runs ? 1 : 0, t.min, t.max, t.relative(), st.speedup.min,
        st.speedup.max, st.runs);
    rows.push_back({{"size", s.size},
                    {"procs", s.procs},
                    {"threads", s.threads},
                    {"oversubscribed", s.oversubscribed},
                    {"runs", st.runs},
                    {"seconds", t.median},
                    {"seconds_min", t.min},
                    {"seconds_max", t.max},
                    {"seconds_samples", st.samples},
                    {"spread", t.relative()},
                    {"wide_spread", t.wide()},
                    {"speedup", st.speedup.median},
                    {"speedup_range", speedup_range},
                    {"efficiency", st.efficiency.median},
                    {"rate", st.rate.median},
                    {"cpu_seconds", st.cpu},
                    {"work", work_of_run(*st.median_run)},
                    {"verified", st.verified == st.runs}});
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
  const PointStats* fastest = nullptr;  // by bandwidth, not oversubscribed
  const PointStats* most_efficient = nullptr;
  double best_rate = 0;
  std::vector<const PointStats*> comm;  // P > 1, by P
  for (const auto& st : points) {
    if (st.step->oversubscribed) continue;
    if (!fastest || st.gbs.median > fastest->gbs.median) fastest = &st;
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
  if (fastest && fastest->gbs.median > 0 && sat.n > 0 && sat.median > 0) {
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
  if (fastest && fastest->gbs.median > 0)
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
  for (const auto& st : points) {
    if (!st.step->oversubscribed && st.p() > 1 && st.speedup.median > 0)
      speedups.push_back({st.p(), st.speedup.median});
    scaling.push_back(
        {st.step->procs, st.step->threads, st.step->oversubscribed, st.seconds.median, st.samples});
    c.extrap_points[st.step->kernel].push_back(
        {st.step->size, st.step->procs, st.step->threads, st.step->oversubscribed,
         st.samples.empty() ? std::vector<double>{st.seconds.median} : st.samples});
  }
  const auto summary = scaling_summary(speedups, scaling, c.a.scaling == "weak");
  c.md << summary.markdown;
  kernel.update(summary.json);
  if (const auto text = extrap_export(name, scaling); !text.empty())
    c.extrap_files[file_name_of(name) + ".txt"] = text;
}

}  // namespace

void write_kernel_sections(ReportContext& c) {
  for (const auto& [name, runs] : gather_points(c)) {
    c.md << "## " << name << "\n\n";
    const std::string rate_name = rate_field(runs.front().step->kernel);
    std::vector<PointStats> points;
    for (const auto& pr : runs) points.push_back(point_stats(pr, rate_name));
    derive_speedups(points, c.a.scaling == "weak");
    compare_with_streams(c, points);
    record_bus(c, name, points);
    write_table(c, rate_name, points);
    json rows = json::array();
    record_rows(c, name, rate_name, points, rows);
    json kernel = {{"rows", rows}, {"rate_field", rate_name}};
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
