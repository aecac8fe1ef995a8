// Amdahl, the Extra-P-style model and the Extra-P export of a kernel size's points.
#include "study_models.hpp"

#include <fmt/core.h>

#include <cmath>

#include "compas/analysis/extrap.hpp"
#include "compas/analysis/model.hpp"
#include "compas/analysis/scaling.hpp"

namespace compas::app {

namespace {

nlohmann::ordered_json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

// Amdahl's law for strong scaling, Gustafson's for weak; the JSON keys are named after the law.
void serial_fraction_part(const std::vector<std::pair<double, double>>& speedups, bool weak,
                          ScalingSummary& out) {
  const auto fit = weak ? analysis::fit_gustafson(speedups) : analysis::fit_amdahl(speedups);
  const std::string law = weak ? "Gustafson" : "Amdahl", key = weak ? "gustafson" : "amdahl";
  if (fit.ok())
    out.markdown += fmt::format(
        "\n{} fit over {} points: serial fraction {:.3f}{} (rms relative error of the fitted "
        "{}speedups {:.3f}).\n",
        law, fit.points, fit.serial_fraction, fit.clamped ? " (clamped to [0, 1])" : "",
        weak ? "scaled " : "", fit.rms_error);
  else
    out.markdown += "\n" + law + " fit: none (" + fit.reason + ").\n";
  out.json[key + "_serial_fraction"] = number_or_null(fit.serial_fraction);
  out.json[key + "_points"] = fit.points;
  out.json[key + "_rms_relative_error"] = number_or_null(fit.rms_error);
  if (!fit.ok()) out.json[key + "_reason"] = fit.reason;
}

void model_part(const std::vector<ScalingPoint>& points, const std::string& unit,
                ScalingSummary& out) {
  std::vector<std::pair<double, double>> data;
  double largest = 0;
  for (const auto& p : points) {
    if (p.oversubscribed || !(p.seconds > 0)) continue;
    const double n = static_cast<double>(p.procs) * p.threads;
    data.push_back({n, p.seconds});
    largest = std::max(largest, n);
  }
  analysis::ModelOptions options;
  options.parameter = "p";
  const auto model = analysis::fit_model(data, options);
  nlohmann::ordered_json j = {{"parameter", "p = processes x threads"},
                              {"of", "seconds per " + unit},
                              {"points", model.points},
                              {"data", data}};
  if (!model.ok()) {
    out.markdown += "Performance model of the time per " + unit + " against p = P x T: none (" +
                    model.reason + ").\n";
    j["reason"] = model.reason;
    out.json["model"] = j;
    return;
  }
  const auto next = analysis::predict(model, 2 * largest);
  out.markdown += fmt::format(
      "Performance model of the time per {} against p = P x T (Extra-P's normal form, chosen by "
      "leave-one-out cross-validation over {} hypotheses, {} points): t(p) = {} s; "
      "cross-validation error {:.1f}% (SMAPE), adjusted R^2 {:.3f}. Predicted for p = {:g}: "
      "{:.4g} s +- {:.2g} s.\n",
      unit, model.hypotheses, model.points, model.function.formula("p"), model.cv_smape,
      model.adjusted_r2, next.p, next.value, next.uncertainty);
  for (const auto& note : model.notes) out.markdown += "(" + note + ")\n";
  j["formula"] = model.function.formula("p");
  j["cv_smape_percent"] = model.cv_smape;
  j["adjusted_r2"] = model.adjusted_r2;
  j["prediction"] = {
      {"p", next.p}, {"seconds_per_unit", next.value}, {"uncertainty", next.uncertainty}};
  out.json["model"] = j;
}

}  // namespace

ScalingSummary scaling_summary(const std::vector<std::pair<double, double>>& speedups,
                               const std::vector<ScalingPoint>& points, bool weak,
                               const std::string& unit) {
  ScalingSummary out;
  out.json = nlohmann::ordered_json::object();
  serial_fraction_part(speedups, weak, out);
  model_part(points, unit, out);
  return out;
}

std::string extrap_export(const std::string& region, const std::vector<ScalingPoint>& points,
                          const std::string& unit) {
  analysis::ExtrapData data;
  data.parameters = {"processes", "threads"};
  analysis::ExtrapSeries series{region, "time_per_" + unit, {}};
  for (const auto& p : points) {
    if (!(p.seconds > 0) || p.oversubscribed) continue;  // as the model: oversubscription is no p
    data.points.push_back({static_cast<double>(p.procs), static_cast<double>(p.threads)});
    series.values.push_back(p.repetitions.empty() ? std::vector<double>{p.seconds} : p.repetitions);
  }
  if (data.points.empty()) return {};
  data.series.push_back(std::move(series));
  return analysis::extrap_text(data);
}

}  // namespace compas::app
