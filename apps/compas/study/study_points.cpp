// A study point's figures from its runs' work records (study_points.hpp).
#include "study_points.hpp"

#include <algorithm>
#include <cmath>

namespace compas::app {

using json = report::json;

namespace {

bool positive_number(const json& w, const char* field, std::string& why) {
  if (!w.contains(field) || !w[field].is_number()) {
    why = std::string("its work record has no number \"") + field + "\"";
    return false;
  }
  const double v = w[field].get<double>();
  if (!std::isfinite(v) || v < 0) {
    why = std::string("its work record's \"") + field + "\" is not a finite number >= 0";
    return false;
  }
  return true;
}

// Mean over threads of one region's seconds over the whole timed part.
double region_total(const json& r, const char* reg) {
  if (!r.contains("regions") || !r["regions"].is_object() || !r["regions"].contains(reg))
    return 0.0;
  const json& g = r["regions"][reg];
  return g.is_object() ? g.value("mean_seconds", 0.0) : 0.0;
}

template <typename F>
Spread spread_by(const std::vector<RunFigures>& runs, F figure) {
  std::vector<double> v;
  for (const auto& r : runs) v.push_back(figure(r));
  return spread_of(std::move(v));
}

}  // namespace

std::optional<RunWork> run_work(const json& result, std::string& why) {
  if (!result.is_object() || !result.contains("work") || !result["work"].is_object()) {
    why = "it has no work record (a run of an older compas: --fresh runs it again)";
    return std::nullopt;
  }
  const json& w = result["work"];
  if (!w.contains("unit") || !w["unit"].is_string()) {
    why = "its work record has no string \"unit\"";
    return std::nullopt;
  }
  for (const char* f : {"units", "seconds", "rate_per_unit", "bytes_per_unit", "cpu_seconds"})
    if (!positive_number(w, f, why)) return std::nullopt;
  RunWork out{w["unit"].get<std::string>(),      w["units"].get<double>(),
              w["seconds"].get<double>(),        w["rate_per_unit"].get<double>(),
              w["bytes_per_unit"].get<double>(), w["cpu_seconds"].get<double>()};
  if (!(out.units > 0) || !(out.seconds > 0)) {
    why = "its work record says no unit was timed (units or seconds 0)";
    return std::nullopt;
  }
  return out;
}

RunFigures run_figures(const json& result, const RunWork& work) {
  RunFigures f;
  f.work = work;
  f.compute = region_total(result, "compute") / work.units;
  f.communicate = region_total(result, "communicate") / work.units;
  f.synchronize = region_total(result, "synchronize") / work.units;
  f.cpu_per_wall = work.cpu_seconds / work.seconds;
  const double total = f.compute + f.communicate + f.synchronize;
  if (total > 0) f.comm_share = f.communicate / total;
  f.verified = result.value("verified", false);
  return f;
}

std::vector<double> PointStats::per_unit_samples() const {
  std::vector<double> v;
  for (const auto& r : runs) v.push_back(r.work.per_unit());
  return v;
}

std::vector<double> PointStats::rate_samples() const {
  std::vector<double> v;
  for (const auto& r : runs) v.push_back(r.work.rate());
  return v;
}

std::vector<double> PointStats::units() const {
  std::vector<double> v;
  for (const auto& r : runs) v.push_back(r.work.units);
  return v;
}

PointStats point_stats(const Step* step, const std::vector<RunResult>& results) {
  PointStats st;
  st.step = step;
  for (const auto& [id, result, busy] : results) {
    std::string why;
    const auto work = run_work(result, why);
    if (!work) {
      st.left_out.push_back("run " + id + ": " + why);
      continue;
    }
    if (!st.unit.empty() && work->unit != st.unit) {
      st.left_out.push_back("run " + id + ": its unit '" + work->unit + "' is not '" + st.unit +
                            "' as its point's first run's");
      continue;
    }
    st.unit = work->unit;
    st.busy = std::max(st.busy, busy);
    st.runs.push_back(run_figures(result, *work));
    st.verified += st.runs.back().verified ? 1 : 0;
  }
  if (st.runs.empty()) return st;
  st.time = spread_by(st.runs, [](const RunFigures& r) { return r.work.per_unit(); });
  st.rate = spread_by(st.runs, [](const RunFigures& r) { return r.work.rate(); });
  if (st.runs.front().work.bytes_per_unit > 0)
    st.gbs = spread_by(st.runs, [](const RunFigures& r) { return r.work.gbs(); });
  std::vector<double> shares;
  for (const auto& r : st.runs)
    if (r.comm_share >= 0) shares.push_back(r.comm_share);
  st.comm_share = spread_of(shares);
  st.compute = spread_by(st.runs, [](const RunFigures& r) { return r.compute; }).median;
  st.communicate = spread_by(st.runs, [](const RunFigures& r) { return r.communicate; }).median;
  st.synchronize = spread_by(st.runs, [](const RunFigures& r) { return r.synchronize; }).median;
  st.cpu_per_wall = spread_by(st.runs, [](const RunFigures& r) { return r.cpu_per_wall; }).median;
  return st;
}

void derive_speedups(std::vector<PointStats>& points, bool weak) {
  const PointStats* base = nullptr;
  for (const auto& st : points)
    if (st.step->procs == 1 && st.step->threads == 1 && st.time.n > 0) base = &st;
  if (!base) return;
  for (auto& st : points) {
    if (st.time.n == 0) continue;
    if (&st == base) {  // 1 by definition, whatever the spread of its runs
      st.speedup = st.efficiency = {1, 1, 1, st.time.n};
      continue;
    }
    st.speedup = weak ? ratio(st.rate, base->rate) : ratio(base->time, st.time);
    st.efficiency = scaled(st.speedup, 1.0 / st.p());
  }
}

}  // namespace compas::app
