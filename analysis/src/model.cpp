// Performance models in Extra-P's normal form (model.hpp): hypotheses, least squares,
// leave-one-out cross-validation and the choice among hypotheses.
#include "compas/analysis/model.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace compas::analysis {
namespace {

using Data = std::vector<std::pair<double, double>>;

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// A term's share of the measured value below which it is taken to fit rounding or noise only
// (Extra-P's epsilon for the term contribution).
constexpr double min_term_contribution = 5e-4;

// Columns are scaled to unit maximum before the QR factorisation; a diagonal element of R below
// this fraction of the largest one means the columns are (numerically) dependent.
constexpr double rank_tolerance = 1e-10;

// Relative rounding of the least-squares arithmetic: cross-validation errors that differ by less
// are equal, and no prediction is more certain than this.
constexpr double rounding = 1e-9;

// Each term added to a hypothesis must cut the held-out error to a third (with the RSS criterion
// the RSS to a ninth). Leave-one-out errors of a few points are noisy, and among ~1900 two-term
// hypotheses some fit the noise of one-term data: with +-1% noise on 7 points (p = 1..64) of
// c + d/p, c + d p log2(p) or c + d sqrt(p), the best two-term hypothesis beat the true one by a
// factor of 2 in 4 to 15 of 60 seeds and by 3 in 1 to 5; a second term worth 40% of the value
// (5 + 20/p + 0.05 p) won by more than 10 in all 60, a weaker one (1 + 100/p + 0.2 log2(p)) by 3 in
// 55. Extra-P's refining modeler likewise asks a new hypothesis to cut the SMAPE by a factor (1.5).
constexpr double term_gain = 3;

// Hypotheses of the chosen number of terms whose error is within this factor of the chosen one's
// are its rivals: the data cannot tell them apart from it, so their disagreement at an
// extrapolated p belongs in the uncertainty. With the rivals, the uncertainty at p = 128 of 7
// noisy points held for 84 of 100 seeds of 5 + 20/p + 0.05 p, against 34 without them.
constexpr double rival_factor = 2;

// Points at which a hypothesis must stay non-negative, besides the measured ones.
constexpr int range_checks = 256;

struct Shape {
  int num = 0;  // polynomial exponent num / den
  int den = 1;
  int log = 0;  // exponent of log2(p)
};

using Hypothesis = std::vector<Shape>;  // the terms besides the constant

double shape_value(const Shape& s, double p) {
  const double poly = s.num == 0 ? 1.0 : std::pow(p, static_cast<double>(s.num) / s.den);
  return s.log == 0 ? poly : poly * std::pow(std::log2(p), s.log);
}

std::vector<Shape> term_shapes(bool with_logs) {
  static constexpr std::pair<int, int> exponents[] = {
      {-1, 1}, {-1, 2}, {0, 1}, {1, 4}, {1, 3}, {1, 2}, {2, 3}, {3, 4}, {1, 1},  {5, 4}, {4, 3},
      {3, 2},  {5, 3},  {7, 4}, {2, 1}, {9, 4}, {7, 3}, {5, 2}, {8, 3}, {11, 4}, {3, 1}};
  std::vector<Shape> shapes;
  for (const auto& [num, den] : exponents)
    for (int log = 0; log <= (with_logs ? 2 : 0); ++log)
      if (num != 0 || log != 0) shapes.push_back({num, den, log});
  return shapes;
}

std::vector<Hypothesis> hypotheses(const std::vector<Shape>& shapes, int terms) {
  std::vector<Hypothesis> out{{}};
  for (std::size_t a = 0; a < shapes.size(); ++a) {
    out.push_back({shapes[a]});
    if (terms < 2) continue;
    for (std::size_t b = a + 1; b < shapes.size(); ++b) out.push_back({shapes[a], shapes[b]});
  }
  return out;
}

double evaluate(const Hypothesis& h, const std::vector<double>& coef, double p) {
  double f = coef[0];
  for (std::size_t k = 0; k < h.size(); ++k) f += coef[k + 1] * shape_value(h[k], p);
  return f;
}

using Columns = std::vector<std::vector<double>>;

// Scales each column to a largest magnitude of 1, so that p^3 log2(p)^2 beside the constant does
// not decide the rank test; false for a zero or non-finite column.
bool scale_columns(Columns& cols, std::vector<double>& scale) {
  scale.assign(cols.size(), 0);
  for (std::size_t j = 0; j < cols.size(); ++j) {
    for (double v : cols[j]) scale[j] = std::max(scale[j], std::abs(v));
    if (!(scale[j] > 0) || !std::isfinite(scale[j])) return false;
    for (double& v : cols[j]) v /= scale[j];
  }
  return true;
}

// x -= 2 v (v.x) / (v.v) over rows j..
void reflect(const std::vector<double>& v, double vv, std::vector<double>& x, std::size_t j) {
  double d = 0;
  for (std::size_t i = j; i < x.size(); ++i) d += v[i] * x[i];
  for (std::size_t i = j; i < x.size(); ++i) x[i] -= 2 * d / vv * v[i];
}

// Householder reduction of the columns to R (above the diagonal left in `cols`, the diagonal in
// `diag`), applying the same reflections to b; false when a column is zero below the diagonal.
bool triangularize(Columns& cols, std::vector<double>& b, std::vector<double>& diag) {
  diag.assign(cols.size(), 0);
  for (std::size_t j = 0; j < cols.size(); ++j) {
    double norm = 0;
    for (std::size_t i = j; i < b.size(); ++i) norm += cols[j][i] * cols[j][i];
    diag[j] = cols[j][j] > 0 ? -std::sqrt(norm) : std::sqrt(norm);
    std::vector<double> v(cols[j]);
    v[j] -= diag[j];
    double vv = 0;
    for (std::size_t i = j; i < b.size(); ++i) vv += v[i] * v[i];
    if (!(vv > 0)) return false;
    for (std::size_t l = j + 1; l < cols.size(); ++l) reflect(v, vv, cols[l], j);
    reflect(v, vv, b, j);
  }
  return true;
}

// Solves R x = b; nothing when R is (numerically) singular.
std::optional<std::vector<double>> back_substitute(const Columns& r, const std::vector<double>& b,
                                                   const std::vector<double>& diag) {
  double largest = 0;
  for (double d : diag) largest = std::max(largest, std::abs(d));
  std::vector<double> x(diag.size());
  for (std::size_t j = diag.size(); j-- > 0;) {
    if (!(std::abs(diag[j]) > rank_tolerance * largest)) return std::nullopt;
    double s = b[j];
    for (std::size_t l = j + 1; l < diag.size(); ++l) s -= r[l][j] * x[l];
    x[j] = s / diag[j];
  }
  return x;
}

// min |A x - b| for the columns of A (each of b's length) by Householder QR; nothing when the
// columns are dependent or there are fewer rows than columns.
std::optional<std::vector<double>> least_squares(Columns cols, std::vector<double> b) {
  std::vector<double> scale, diag;
  if (b.size() < cols.size() || !scale_columns(cols, scale) || !triangularize(cols, b, diag))
    return std::nullopt;
  auto x = back_substitute(cols, b, diag);
  if (x)
    for (std::size_t j = 0; j < x->size(); ++j) (*x)[j] /= scale[j];
  return x;
}

// Timings scatter in proportion to their size, and strong scaling spans orders of magnitude: an
// unweighted fit would follow the slow small-p runs and neglect the large-p ones that the
// extrapolation starts from. So residuals are relative, (f(p) - y) / y, unless a value is 0.
bool relative_fit(const Data& data) {
  for (const auto& [p, y] : data)
    if (y == 0) return false;
  return true;
}

// Coefficients (c0, c1, ...) of `h` fitted to every point but `skip` (none when skip >= size).
std::optional<std::vector<double>> fit(const Data& data, const Hypothesis& h, std::size_t skip) {
  const bool relative = relative_fit(data);
  Columns cols(h.size() + 1);
  std::vector<double> b;
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (i == skip) continue;
    const auto& [p, y] = data[i];
    const double w = relative ? 1 / std::abs(y) : 1;
    cols[0].push_back(w);
    for (std::size_t k = 0; k < h.size(); ++k) cols[k + 1].push_back(w * shape_value(h[k], p));
    b.push_back(w * y);
  }
  return least_squares(std::move(cols), std::move(b));
}

struct Scored {
  Hypothesis h;
  std::vector<double> coef;  // fitted to all points
  double score = 0;          // mean held-out error by the criterion
  double smape = 0;          // mean held-out SMAPE, percent
  double rss = 0;            // sum of squared held-out errors
};

double smape_of(double predicted, double actual) {
  const double sum = std::abs(predicted) + std::abs(actual);
  return sum == 0 ? 0 : 200 * std::abs(predicted - actual) / sum;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

std::optional<Scored> cross_validate(const Data& data, const Hypothesis& h, ModelCriterion c) {
  std::vector<double> smapes, squares;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto coef = fit(data, h, i);
    if (!coef) return std::nullopt;
    const auto& [p, y] = data[i];
    const double f = evaluate(h, *coef, p);
    if (!std::isfinite(f)) return std::nullopt;
    smapes.push_back(smape_of(f, y));
    squares.push_back((f - y) * (f - y));
  }
  auto coef = fit(data, h, data.size());
  if (!coef) return std::nullopt;
  const auto& errors = c == ModelCriterion::smape ? smapes : squares;
  Scored s{h, std::move(*coef), mean(errors), mean(smapes), 0};
  for (double q : squares) s.rss += q;
  return s;
}

// Every term must matter somewhere: one whose largest share of the measured value is below
// min_term_contribution fits rounding or noise (on exact data of c + d/p the hypothesis
// c + d/p + e p^2 is exact too, with e ~ 1e-17).
bool terms_contribute(const Data& data, const Scored& s) {
  for (std::size_t k = 0; k < s.h.size(); ++k) {
    double largest = 0;
    for (const auto& [p, y] : data)
      if (y != 0) largest = std::max(largest, std::abs(s.coef[k + 1] * shape_value(s.h[k], p) / y));
    if (!(largest >= min_term_contribution)) return false;
  }
  return true;
}

bool nonnegative_in_range(const Data& data, const Scored& s, double horizon) {
  for (const auto& [p, y] : data)
    if (!(evaluate(s.h, s.coef, p) >= 0)) return false;
  const double lo = std::log(data.front().first), hi = std::log(data.back().first * horizon);
  for (int i = 0; i <= range_checks; ++i)
    if (!(evaluate(s.h, s.coef, std::exp(lo + (hi - lo) * i / range_checks)) >= 0)) return false;
  return true;
}

// The best hypothesis of each term count by the criterion; one with more terms replaces one with
// fewer only when it cuts the error by term_gain (`floor` keeps rounding from deciding).
const Scored& choose(const std::vector<Scored>& scored, double gain, double floor) {
  std::vector<const Scored*> best;
  for (const auto& s : scored) {
    if (best.size() <= s.h.size()) best.resize(s.h.size() + 1, nullptr);
    auto& b = best[s.h.size()];
    if (!b || s.score < b->score) b = &s;
  }
  const Scored* pick = nullptr;
  for (const Scored* s : best)
    if (s && (!pick || s->score * gain + floor < pick->score)) pick = s;
  return *pick;
}

// Errors below this are rounding (the `floor` of choose()).
double rounding_floor(const Data& data, ModelCriterion c) {
  if (c == ModelCriterion::smape) return rounding;
  double ss = 0;
  for (const auto& [p, y] : data) ss += y * y;
  return rounding * rounding * ss;
}

Data mean_per_point(Data data) {
  std::sort(data.begin(), data.end());
  Data out;
  for (std::size_t i = 0; i < data.size();) {
    std::size_t j = i;
    double sum = 0;
    for (; j < data.size() && data[j].first == data[i].first; ++j) sum += data[j].second;
    out.push_back({data[i].first, sum / static_cast<double>(j - i)});
    i = j;
  }
  return out;
}

std::string check_data(const Data& data, const ModelOptions& o) {
  for (const auto& [p, y] : data) {
    if (!std::isfinite(p) || !(p > 0))
      return fmt::format("{} = {} is not a positive number", o.parameter, p);
    if (!std::isfinite(y))
      return fmt::format("value {} at {} = {} is not finite", y, o.parameter, p);
    if (o.nonnegative && y < 0)
      return fmt::format("value {} at {} = {} is negative, not a time or a count", y, o.parameter,
                         p);
  }
  return {};
}

std::string too_few(std::size_t n, int needed, const char* what) {
  return fmt::format("{} point{}, at least {} are needed for {}", n, n == 1 ? "" : "s", needed,
                     what);
}

void check_options(const ModelOptions& o) {
  if (o.max_terms != 1 && o.max_terms != 2)
    throw std::invalid_argument(fmt::format("max_terms {} is not 1 or 2", o.max_terms));
  if (!std::isfinite(o.horizon) || o.horizon < 1)
    throw std::invalid_argument(fmt::format("horizon {} is not a number >= 1", o.horizon));
}

int allowed_terms(std::size_t n, const ModelOptions& o, std::vector<std::string>& notes) {
  if (o.max_terms >= 2 && n < static_cast<std::size_t>(model_min_points_two_terms)) {
    notes.push_back("too few points for two terms: " +
                    too_few(n, model_min_points_two_terms, "a two-term model"));
    return 1;
  }
  return o.max_terms;
}

std::vector<Scored> candidates(const Data& data, const std::vector<Hypothesis>& hs,
                               const ModelOptions& o) {
  std::vector<Scored> out;
  for (const auto& h : hs) {
    auto s = cross_validate(data, h, o.criterion);
    if (!s || !terms_contribute(data, *s)) continue;
    if (o.nonnegative && !nonnegative_in_range(data, *s, o.horizon)) continue;
    out.push_back(std::move(*s));
  }
  return out;
}

void set_goodness(PerfModel& m) {
  double ym = 0;
  for (const auto& [p, y] : m.data) ym += y;
  ym /= static_cast<double>(m.data.size());
  double rss = 0, tss = 0, rel = 0;
  int nonzero = 0;
  for (const auto& [p, y] : m.data) {
    const double d = m.function(p) - y;
    rss += d * d;
    tss += (y - ym) * (y - ym);
    if (y != 0) rel += (d / y) * (d / y), ++nonzero;
  }
  const double n = static_cast<double>(m.data.size());
  const double k = static_cast<double>(m.function.terms.size());
  m.r2 = tss > 0 ? 1 - rss / tss : 1;
  m.adjusted_r2 = tss > 0 ? 1 - (1 - m.r2) * (n - 1) / (n - k - 1) : 1;
  m.rms_relative_error = nonzero ? std::sqrt(rel / nonzero) : 0;
}

ModelFunction function_of(const Scored& s) {
  ModelFunction f{s.coef[0], {}};
  for (std::size_t k = 0; k < s.h.size(); ++k)
    f.terms.push_back({s.h[k].num, s.h[k].den, s.h[k].log, s.coef[k + 1]});
  return f;
}

// Hypotheses with as many terms as the chosen one and an error within `factor` of its, best first.
std::vector<ModelFunction> rivals_of(const std::vector<Scored>& scored, const Scored& chosen,
                                     double factor) {
  std::vector<const Scored*> near;
  for (const auto& s : scored)
    if (&s != &chosen && s.h.size() == chosen.h.size() && s.score <= chosen.score * factor)
      near.push_back(&s);
  std::sort(near.begin(), near.end(), [](auto* a, auto* b) { return a->score < b->score; });
  std::vector<ModelFunction> out;
  for (const auto* s : near) out.push_back(function_of(*s));
  return out;
}

std::string number(double v) {
  const std::string s = fmt::format("{:.4g}", v);
  return s == "-0" ? "0" : s;  // -0.0, or a negative that rounds to nothing
}

std::string power_text(const ModelTerm& t, const std::string& p) {
  if (t.exp_num == 0) return {};
  if (t.exp_den == 1 && t.exp_num == 1) return p;
  if (t.exp_den == 1 && t.exp_num > 1) return fmt::format("{}^{}", p, t.exp_num);
  if (t.exp_den == 1) return fmt::format("{}^({})", p, t.exp_num);
  return fmt::format("{}^({}/{})", p, t.exp_num, t.exp_den);
}

std::string log_text(const ModelTerm& t, const std::string& p) {
  if (t.log_exp == 0) return {};
  if (t.log_exp == 1) return fmt::format("log2({})", p);
  return fmt::format("log2({})^{}", p, t.log_exp);
}

std::string term_text(const ModelTerm& t, const std::string& p) {
  std::string s = number(std::abs(t.coefficient));
  for (const auto& part : {power_text(t, p), log_text(t, p)})
    if (!part.empty()) s += " * " + part;
  return s;
}

Hypothesis hypothesis_of(const ModelFunction& f) {
  Hypothesis h;
  for (const auto& t : f.terms) h.push_back({t.exp_num, t.exp_den, t.log_exp});
  return h;
}

// Largest distance of a leave-one-out model's prediction at p from the full model's.
double leave_one_out_spread(const PerfModel& m, double p, double value) {
  const Hypothesis h = hypothesis_of(m.function);
  double spread = 0;
  for (std::size_t i = 0; i < m.data.size(); ++i)
    if (const auto coef = fit(m.data, h, i))
      spread = std::max(spread, std::abs(evaluate(h, *coef, p) - value));
  return spread;
}

double rival_spread(const PerfModel& m, double p, double value) {
  double spread = 0;
  for (const auto& r : m.rivals) spread = std::max(spread, std::abs(r(p) - value));
  return spread;
}

}  // namespace

double ModelTerm::operator()(double p) const {
  return coefficient * shape_value({exp_num, exp_den, log_exp}, p);
}

double ModelFunction::operator()(double p) const {
  double f = constant;
  for (const auto& t : terms) f += t(p);
  return f;
}

std::string ModelFunction::formula(const std::string& parameter) const {
  std::string s = number(constant);
  for (const auto& t : terms) s += (t.coefficient < 0 ? " - " : " + ") + term_text(t, parameter);
  return s;
}

double PerfModel::operator()(double p) const {
  return ok() ? function(p) : nan;
}

std::string PerfModel::formula() const {
  return ok() ? function.formula(parameter) : "no model: " + reason;
}

PerfModel fit_model(const Data& p_value, const ModelOptions& options) {
  check_options(options);
  PerfModel m;
  m.parameter = options.parameter;
  m.reason = check_data(p_value, options);
  if (!m.ok()) return m;
  m.data = mean_per_point(p_value);
  m.points = static_cast<int>(m.data.size());
  if (m.data.size() < static_cast<std::size_t>(model_min_points_one_term)) {
    m.reason =
        "too few points: " + too_few(m.data.size(), model_min_points_one_term, "a one-term model");
    return m;
  }
  const bool logs = m.data.front().first >= 1;
  if (!logs)
    m.notes.push_back(fmt::format("log terms left out: {} = {} < 1 makes log2 negative",
                                  options.parameter, m.data.front().first));
  const auto hs = hypotheses(term_shapes(logs), allowed_terms(m.data.size(), options, m.notes));
  m.hypotheses = static_cast<int>(hs.size());
  const auto scored = candidates(m.data, hs, options);
  if (scored.empty()) {
    m.reason =
        "no hypothesis is meaningful: each has a singular fit, a negligible term or "
        "negative predictions";
    return m;
  }
  const bool rss = options.criterion == ModelCriterion::rss;
  // The RSS is a squared error: its factors are the squares of the SMAPE's.
  const Scored& chosen = choose(scored, rss ? term_gain * term_gain : term_gain,
                                rounding_floor(m.data, options.criterion));
  m.function = function_of(chosen);
  m.rivals = rivals_of(scored, chosen, rss ? rival_factor * rival_factor : rival_factor);
  m.cv_smape = chosen.smape;
  m.cv_rss = chosen.rss;
  set_goodness(m);
  return m;
}

Prediction predict(const PerfModel& model, double p) {
  if (!model.ok()) return {p, nan, nan};
  const double value = model(p);
  const double spread =
      std::max(leave_one_out_spread(model, p, value), rival_spread(model, p, value));
  const double scatter = 2 * model.rms_relative_error * std::abs(value);
  return {p, value, std::max(spread + scatter, rounding * std::abs(value))};
}

}  // namespace compas::analysis
