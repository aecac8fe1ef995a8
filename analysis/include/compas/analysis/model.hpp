// Empirical performance models in Extra-P's performance-model normal form (Calotoiu et al.,
// SC'13), for one parameter p (processes x threads, or the problem size):
//
//   f(p) = c0 + sum_k c_k * p^(i_k) * log2(p)^(j_k)
//
// with i from {-1, -1/2, 0, 1/4, 1/3, 1/2, 2/3, 3/4, 1, 5/4, 4/3, 3/2, 5/3, 7/4, 2, 9/4, 7/3, 5/2,
// 8/3, 11/4, 3} (the negative ones make c + d/p, strong scaling, representable) and j from
// {0, 1, 2}, one term or two. Every hypothesis is fitted by linear least squares and judged by
// leave-one-out cross-validation, as Extra-P does; a study that draws conclusions from the model
// gets the cross-validation error, R^2 and an uncertainty for extrapolations with it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace compas::analysis {

// Fewest measured points (distinct p) for hypotheses with one term besides the constant and with
// two. With 3 points each leave-one-out fit of c0 + c1 t(p) is exact on 2 points and its held-out
// prediction is the only test the hypothesis gets; with 5 the 4-point leave-one-out fits of two
// terms keep one degree of freedom.
inline constexpr int model_min_points_one_term = 3;
inline constexpr int model_min_points_two_terms = 5;

// One term c * p^(exp_num / exp_den) * log2(p)^log_exp.
struct ModelTerm {
  int exp_num = 0;
  int exp_den = 1;
  int log_exp = 0;
  double coefficient = 0;

  double exponent() const { return static_cast<double>(exp_num) / exp_den; }
  double operator()(double p) const;  // with the coefficient
};

enum class ModelCriterion {
  smape,  // symmetric mean absolute percentage error of held-out predictions (Extra-P's default)
  rss,    // residual sum of squares of held-out predictions
};

struct ModelOptions {
  std::string parameter = "p";  // name used in the formula
  int max_terms = 2;            // 1 or 2 terms besides the constant
  ModelCriterion criterion = ModelCriterion::smape;
  // Measured values are times or counts: a hypothesis whose prediction is negative anywhere in
  // [smallest p, horizon x largest p] is refused, whatever its cross-validation error.
  bool nonnegative = true;
  double horizon = 2;
};

// f(p) = constant + sum of the terms.
struct ModelFunction {
  double constant = 0;           // c0
  std::vector<ModelTerm> terms;  // 0 (the constant model), 1 or 2

  double operator()(double p) const;
  std::string formula(const std::string& parameter = "p") const;  // "0.012 + 3.41 * p^(-1)"
};

struct PerfModel {
  std::string reason;              // why there is no model; empty when there is one
  std::vector<std::string> notes;  // hypotheses that were not tried and why
  std::string parameter = "p";
  ModelFunction function;  // the chosen hypothesis with its coefficients
  // Hypotheses with as many terms whose cross-validation error is at most twice the chosen one's,
  // best first: the data do not rule them out, and predict() counts how far they disagree.
  std::vector<ModelFunction> rivals;
  int points = 0;                 // distinct p values fitted
  int hypotheses = 0;             // hypotheses fitted and cross-validated
  double cv_smape = 0;            // percent, mean over the held-out points
  double cv_rss = 0;              // sum of squared held-out errors
  double r2 = 0;                  // of the fit to all points; 1 when the data are constant
  double adjusted_r2 = 0;         // for the number of terms
  double rms_relative_error = 0;  // of the fit to all points, (f(p) - y) / y
  std::vector<std::pair<double, double>> data;  // (p, mean measured value), ascending p

  bool ok() const { return reason.empty(); }
  double operator()(double p) const;  // NaN without a model
  std::string formula() const;        // "no model: <reason>" without one
};

// Fits every hypothesis to (p, value) pairs by least squares of the relative residuals
// (f(p) - y) / y (of the absolute ones when a value is 0): timings scatter in proportion to their
// size. Per number of terms the hypothesis with the smallest leave-one-out error is kept; one with
// more terms is taken only when it cuts that error to a third (the RSS to a ninth), since more
// terms always fit noise better and a term that only fits noise extrapolates badly. A hypothesis
// is refused when one of its terms contributes less than 0.05% of the measured value at every
// point (Extra-P's epsilon), when a leave-one-out fit is singular, or when it predicts negative
// values (ModelOptions::nonnegative). Repeated p values are averaged (Extra-P models the mean per
// point). p must be > 0; log terms are left out when some p < 1, as Extra-P does. Throws
// std::invalid_argument for bad options.
PerfModel fit_model(const std::vector<std::pair<double, double>>& p_value,
                    const ModelOptions& options = {});

// value ± uncertainty at p (NaN for both when there is no model). The uncertainty is
//    max(leave-one-out spread, rival spread) + 2 x rms_relative_error x |value|
// and never below 1e-9 x |value| (the rounding of the least-squares arithmetic), where
//  - the leave-one-out spread is the largest distance of the chosen hypothesis's leave-one-out
//    models' predictions at p from the full model's: how much the extrapolation hinges on single
//    points;
//  - the rival spread is the largest distance of a rival's prediction: which of the hypotheses
//    the data allow decides it;
//  - the residual part is the scatter a new measurement would have (two standard deviations).
// It is a heuristic bound, not a calibrated interval: on exact data it is rounding only; with
// +-1% noise on 7 points (p = 1..64) it held at p = 128 for 83-93 of 100 seeds of one-term laws,
// 84 of 5 + 20/p + 0.05 p and 69 of 1 + 100/p + 0.2 log2(p); less with 5 points, more with 12.
struct Prediction {
  double p = 0;
  double value = 0;
  double uncertainty = 0;
};
Prediction predict(const PerfModel& model, double p);

}  // namespace compas::analysis
