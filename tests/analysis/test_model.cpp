// Performance models (model.hpp) and Extra-P export (extrap.hpp): synthetic data of a known form
// must give back that form, with and without noise; too few points must give no model and say
// why; extrapolations must hold within their stated uncertainty; the Extra-P text must follow
// Extra-P's documented format (docs/file-formats.md of github.com/extra-p/extrap) and read back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "compas/analysis/extrap.hpp"
#include "compas/analysis/model.hpp"
#include "compas/analysis/scaling.hpp"
#include "compas/report/extrap_json.hpp"

namespace {

using compas::analysis::ExtrapData;
using compas::analysis::ExtrapSeries;
using compas::analysis::fit_model;
using compas::analysis::ModelOptions;
using compas::analysis::PerfModel;
using Series = std::vector<std::pair<double, double>>;
using Law = std::function<double(double)>;

const std::vector<double> scale_points = {1, 2, 4, 8, 16, 32, 64};

Series sample(const Law& f, const std::vector<double>& ps = scale_points) {
  Series s;
  for (double p : ps) s.push_back({p, f(p)});
  return s;
}

// +-1% multiplicative noise from a fixed seed. The mt19937 sequence is fixed by the standard (the
// distributions are not), so the noise is the same with every standard library.
Series with_noise(Series s, std::uint32_t seed) {
  std::mt19937 gen(seed);
  for (auto& [p, y] : s) y *= 1 + 0.01 * (2 * (gen() / 4294967296.0) - 1);
  return s;
}

double amdahl_time(double p) {
  return 10 * (0.1 + 0.9 / p);
}
double plogp_time(double p) {
  return 2 + 0.5 * p * std::log2(p);
}
double inverse_time(double p) {
  return 0.012 + 3.41 / p;
}
// Strong scaling with communication that grows with p: two terms.
double two_term_time(double p) {
  return 5 + 20 / p + 0.05 * p;
}

struct Shape {
  int num, den, log;
};

std::string shape_text(const std::vector<Shape>& shape) {
  std::ostringstream s;
  for (const auto& t : shape) s << '(' << t.num << '/' << t.den << ", " << t.log << ')';
  return shape.empty() ? "constant" : s.str();
}

testing::AssertionResult has_shape(const PerfModel& m, const std::vector<Shape>& shape) {
  if (!m.ok()) return testing::AssertionFailure() << "no model: " << m.reason;
  const auto& terms = m.function.terms;
  bool same = terms.size() == shape.size();
  for (std::size_t k = 0; same && k < shape.size(); ++k)
    same = terms[k].exp_num == shape[k].num && terms[k].exp_den == shape[k].den &&
           terms[k].log_exp == shape[k].log;
  if (same) return testing::AssertionSuccess();
  return testing::AssertionFailure() << m.formula() << " is not of shape " << shape_text(shape);
}

bool has_note(const PerfModel& m, const std::string& note) {
  for (const auto& n : m.notes)
    if (n == note) return true;
  return false;
}

// ---- models of exact data ----

TEST(PerfModel, AmdahlTimesGiveTheSerialFractionByBothFits) {
  const Series t = sample(amdahl_time);
  Series speedups;
  for (const auto& [p, y] : t)
    if (p > 1) speedups.push_back({p, t.front().second / y});
  const auto amdahl = compas::analysis::fit_amdahl(speedups);
  ASSERT_TRUE(amdahl.ok()) << amdahl.reason;
  EXPECT_NEAR(amdahl.serial_fraction, 0.1, 1e-12);

  const auto m = fit_model(t);
  ASSERT_TRUE(has_shape(m, {{-1, 1, 0}}));
  EXPECT_NEAR(m.function.constant, 1, 1e-9);
  EXPECT_NEAR(m.function.terms[0].coefficient, 9, 1e-9);
  // t1 (f + (1 - f) / p) = c + d / p: f = c / (c + d).
  EXPECT_NEAR(m.function.constant / (m.function.constant + m.function.terms[0].coefficient), 0.1,
              1e-10);
  EXPECT_EQ(m.formula(), "1 + 9 * p^(-1)");
  EXPECT_EQ(m.points, 7);
  EXPECT_LT(m.cv_smape, 1e-6);
  EXPECT_NEAR(m.r2, 1, 1e-12);
  EXPECT_NEAR(m.adjusted_r2, 1, 1e-12);
  EXPECT_TRUE(m.rivals.empty()) << m.rivals.front().formula();
}

TEST(PerfModel, PLogPIsRecoveredWithExponentsOneAndOne) {
  const auto m = fit_model(sample(plogp_time));
  ASSERT_TRUE(has_shape(m, {{1, 1, 1}}));
  EXPECT_NEAR(m.function.constant, 2, 1e-9);
  EXPECT_NEAR(m.function.terms[0].coefficient, 0.5, 1e-9);
  EXPECT_EQ(m.formula(), "2 + 0.5 * p * log2(p)");
}

TEST(PerfModel, ConstantPlusInverseIsRecovered) {
  const auto m = fit_model(sample(inverse_time));
  ASSERT_TRUE(has_shape(m, {{-1, 1, 0}}));
  EXPECT_EQ(m.formula(), "0.012 + 3.41 * p^(-1)");
}

TEST(PerfModel, TwoTermsAreFoundWhenTheDataHaveTwo) {
  const auto m = fit_model(sample(two_term_time));
  ASSERT_TRUE(has_shape(m, {{-1, 1, 0}, {1, 1, 0}}));
  EXPECT_EQ(m.formula(), "5 + 20 * p^(-1) + 0.05 * p");
  EXPECT_TRUE(m.notes.empty());
}

TEST(PerfModel, ConstantDataGiveTheConstantModel) {
  const auto m = fit_model(sample([](double) { return 4.5; }));
  ASSERT_TRUE(has_shape(m, {}));
  EXPECT_EQ(m.formula(), "4.5");
}

// ---- noise ----

TEST(PerfModel, OnePercentNoiseKeepsTheHypothesis) {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto amdahl = fit_model(with_noise(sample(amdahl_time), seed));
    ASSERT_TRUE(has_shape(amdahl, {{-1, 1, 0}}));
    EXPECT_NEAR(amdahl.function.constant /
                    (amdahl.function.constant + amdahl.function.terms[0].coefficient),
                0.1, 0.01);
    EXPECT_GT(amdahl.cv_smape, 0);
    EXPECT_LT(amdahl.cv_smape, 3);
    ASSERT_TRUE(has_shape(fit_model(with_noise(sample(plogp_time), seed)), {{1, 1, 1}}));
    ASSERT_TRUE(has_shape(fit_model(with_noise(sample(inverse_time), seed)), {{-1, 1, 0}}));
  }
}

TEST(PerfModel, OnePercentNoiseKeepsASecondTermThatMatters) {
  // Which pair of exponents wins under noise varies (p^(-1) with p or with p^(3/4) fit 7 noisy
  // points alike); that there are two terms does not, and the rivals carry the doubt.
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto m = fit_model(with_noise(sample(two_term_time), seed));
    ASSERT_TRUE(m.ok()) << m.reason;
    EXPECT_EQ(m.function.terms.size(), 2u) << m.formula();
    for (const auto& r : m.rivals) EXPECT_EQ(r.terms.size(), 2u) << r.formula();
  }
}

TEST(PerfModel, OnePercentNoiseKeepsTheAmdahlFraction) {
  const Series t = with_noise(sample(amdahl_time), 7);
  Series speedups;
  for (const auto& [p, y] : t)
    if (p > 1) speedups.push_back({p, t.front().second / y});
  const auto fit = compas::analysis::fit_amdahl(speedups);
  ASSERT_TRUE(fit.ok()) << fit.reason;
  EXPECT_NEAR(fit.serial_fraction, 0.1, 0.01);
  EXPECT_GT(fit.rms_error, 0);
}

TEST(PerfModel, RssCriterionChoosesTheSameHypotheses) {
  ModelOptions o;
  o.criterion = compas::analysis::ModelCriterion::rss;
  ASSERT_TRUE(has_shape(fit_model(sample(amdahl_time), o), {{-1, 1, 0}}));
  ASSERT_TRUE(has_shape(fit_model(with_noise(sample(plogp_time), 1), o), {{1, 1, 1}}));
}

// ---- too few points ----

TEST(PerfModel, TwoPointsGiveNoModelAndSayWhy) {
  const auto m = fit_model(sample(amdahl_time, {1, 2}));
  EXPECT_FALSE(m.ok());
  EXPECT_EQ(m.reason, "too few points: 2 points, at least 3 are needed for a one-term model");
  EXPECT_EQ(m.points, 2);
  EXPECT_TRUE(std::isnan(m(4)));
  EXPECT_TRUE(std::isnan(compas::analysis::predict(m, 4).value));
  // Repetitions of one p are one point.
  EXPECT_FALSE(fit_model({{1, 10}, {1, 10.1}, {2, 5}, {2, 5.1}}).ok());
}

TEST(PerfModel, FourPointsGiveNoTwoTermModelAndSayWhy) {
  const auto four = fit_model(sample(two_term_time, {1, 4, 16, 64}));
  ASSERT_TRUE(four.ok()) << four.reason;
  EXPECT_LE(four.function.terms.size(), 1u) << four.formula();
  EXPECT_TRUE(has_note(four,
                       "too few points for two terms: 4 points, at least 5 are needed "
                       "for a two-term model"));
  const auto five = fit_model(sample(two_term_time, {1, 2, 4, 16, 64}));
  ASSERT_TRUE(has_shape(five, {{-1, 1, 0}, {1, 1, 0}}));
  EXPECT_TRUE(five.notes.empty());
}

TEST(PerfModel, ThreePointsGiveAOneTermModel) {
  const auto m = fit_model(sample(amdahl_time, {1, 4, 16}));
  ASSERT_TRUE(has_shape(m, {{-1, 1, 0}}));
}

// ---- meaningful coefficients ----

TEST(PerfModel, HypothesesPredictingNegativeTimesAreRefused) {
  // A time falling linearly to 2 at p = 8: the straight line goes negative at p = 10, inside the
  // default horizon (2 x 8).
  const Series t = sample([](double p) { return 10 - p; }, {1, 2, 3, 4, 5, 6, 7, 8});
  ModelOptions signed_values;
  signed_values.nonnegative = false;
  const auto line = fit_model(t, signed_values);
  ASSERT_TRUE(has_shape(line, {{1, 1, 0}}));
  EXPECT_EQ(line.formula(), "10 - 1 * p");

  const auto m = fit_model(t);
  ASSERT_TRUE(m.ok()) << m.reason;
  EXPECT_NE(m.formula(), "10 - 1 * p");
  for (double p = 1; p <= 16; p += 0.25) EXPECT_GE(m(p), 0) << m.formula() << " at " << p;
}

TEST(PerfModel, ATermBelowEpsilonOfEveryValueIsDropped) {
  // 1e-6 p is at most 0.006% of the value: c + d/p + e p fits exactly, but e p is rounding in a
  // timing, and the model must not extrapolate it.
  const auto m = fit_model(sample([](double p) { return amdahl_time(p) + 1e-6 * p; }));
  ASSERT_TRUE(has_shape(m, {{-1, 1, 0}}));
  // Worth 0.6% at p = 64, the same term is kept.
  const auto kept = fit_model(sample([](double p) { return amdahl_time(p) + 1e-4 * p; }));
  EXPECT_TRUE(has_shape(kept, {{-1, 1, 0}, {1, 1, 0}}));
}

TEST(PerfModel, BadInputIsNamed) {
  EXPECT_EQ(fit_model({{0, 1}, {1, 1}, {2, 1}}).reason, "p = 0 is not a positive number");
  EXPECT_EQ(fit_model({{1, -1}, {2, 1}, {3, 1}}).reason,
            "value -1 at p = 1 is negative, not a time or a count");
  ModelOptions o;
  o.max_terms = 3;
  EXPECT_THROW(fit_model(sample(amdahl_time), o), std::invalid_argument);
  o.max_terms = 1;
  o.horizon = 0.5;
  EXPECT_THROW(fit_model(sample(amdahl_time), o), std::invalid_argument);
}

// ---- prediction ----

TEST(PerfModel, PredictionAtTwiceTheLargestPointHoldsWithinItsUncertainty) {
  for (const Law& law : std::vector<Law>{amdahl_time, plogp_time, inverse_time, two_term_time}) {
    const auto m = fit_model(sample(law));
    ASSERT_TRUE(m.ok()) << m.reason;
    const auto at = compas::analysis::predict(m, 128);
    EXPECT_EQ(at.p, 128);
    EXPECT_LE(std::abs(at.value - law(128)), at.uncertainty) << m.formula();
    // Not vacuous: exact data leave an uncertainty of rounding only.
    EXPECT_LT(at.uncertainty, 1e-6 * law(128)) << m.formula();
  }
}

TEST(PerfModel, NoisyPredictionCarriesAnUncertaintyOfTheNoise) {
  const auto m = fit_model(with_noise(sample(amdahl_time), 1));
  ASSERT_TRUE(m.ok()) << m.reason;
  const auto at = compas::analysis::predict(m, 128);
  EXPECT_GT(at.uncertainty, 0.001 * at.value);
  EXPECT_LT(at.uncertainty, 0.2 * at.value);
  EXPECT_LE(std::abs(at.value - amdahl_time(128)), at.uncertainty);
}

TEST(PerfModel, NoisyTwoTermPredictionsHoldWithTheirRivals) {
  // Under noise the exponents of a second term are uncertain (p, p^(3/4), p^(5/4) fit alike) and
  // so is the extrapolation: the rivals' spread must cover it. Measured over seeds 1..100: 84
  // held with the rivals, 34 without; over these 10 seeds: 10 and 3.
  int held = 0;
  for (std::uint32_t seed = 1; seed <= 10; ++seed) {
    const auto m = fit_model(with_noise(sample(two_term_time), seed));
    ASSERT_TRUE(m.ok()) << m.reason;
    const auto at = compas::analysis::predict(m, 128);
    held += std::abs(at.value - two_term_time(128)) <= at.uncertainty;
  }
  EXPECT_GE(held, 8);
}

// c + d/p fitted by least squares of relative residuals to every point but `skip`, by the normal
// equations: an independent computation of the leave-one-out models.
std::pair<double, double> inverse_law_fit(const Series& s, std::size_t skip) {
  double a = 0, b = 0, c = 0, u = 0, v = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i == skip) continue;
    const double x = 1 / s[i].first, y = s[i].second, w = 1 / (y * y);
    a += w, b += w * x, c += w * x * x, u += w * y, v += w * x * y;
  }
  const double det = a * c - b * b;
  return {(u * c - b * v) / det, (a * v - b * u) / det};
}

TEST(PerfModel, CrossValidationErrorsAreThoseOfHeldOutPoints) {
  const Series t = with_noise(sample(amdahl_time), 2);
  const auto m = fit_model(t);
  ASSERT_TRUE(has_shape(m, {{-1, 1, 0}}));
  double smape = 0, rss = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    const auto [c, d] = inverse_law_fit(t, k);
    const double f = c + d / t[k].first, y = t[k].second;
    smape += 200 * std::abs(f - y) / (std::abs(f) + std::abs(y)) / static_cast<double>(t.size());
    rss += (f - y) * (f - y);
  }
  EXPECT_NEAR(m.cv_smape, smape, 1e-9 * smape);
  EXPECT_NEAR(m.cv_rss, rss, 1e-9 * rss);
}

TEST(PerfModel, UncertaintyHoldsTheLeaveOneOutSpreadAndTwiceTheScatter) {
  const Series t = with_noise(sample(amdahl_time), 1);
  const auto m = fit_model(t);
  ASSERT_TRUE(has_shape(m, {{-1, 1, 0}}));
  const auto at = compas::analysis::predict(m, 128);
  double spread = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    const auto [c, d] = inverse_law_fit(t, k);
    spread = std::max(spread, std::abs(c + d / 128 - at.value));
  }
  const double scatter = 2 * m.rms_relative_error * at.value;
  EXPECT_GT(spread, 0.1 * scatter);  // both parts matter here
  EXPECT_GE(at.uncertainty, spread + scatter - 1e-12);
  const auto [c, d] = inverse_law_fit(t, t.size());
  EXPECT_NEAR(at.value, c + d / 128, 1e-12);
}

// ---- Extra-P text format ----

ExtrapData small_study() {
  return {{"p"},
          {{1}, {2}, {4}},
          {{"main", "time", {{10.5, 10.25}, {5.5, 5.75}, {3, 3.125}}},
           {"main->solve", "time", {{8}, {4}, {2}}},
           {"main", "bytes", {{100}, {200}, {400}}}}};
}

// Written by hand from docs/file-formats.md: PARAMETER, POINTS in parentheses, then per metric
// each region with one DATA line per point holding that point's repetitions.
const char* const small_study_text =
    "PARAMETER p\n"
    "POINTS (1) (2) (4)\n"
    "\n"
    "METRIC time\n"
    "REGION main\n"
    "DATA 10.5 10.25\n"
    "DATA 5.5 5.75\n"
    "DATA 3 3.125\n"
    "REGION main->solve\n"
    "DATA 8\n"
    "DATA 4\n"
    "DATA 2\n"
    "\n"
    "METRIC bytes\n"
    "REGION main\n"
    "DATA 100\n"
    "DATA 200\n"
    "DATA 400\n";

TEST(ExtrapText, SmallStudyIsTheDocumentedText) {
  EXPECT_EQ(compas::analysis::extrap_text(small_study()), small_study_text);
}

TEST(ExtrapText, RoundTrips) {
  const auto data = small_study();
  EXPECT_EQ(compas::analysis::parse_extrap_text(compas::analysis::extrap_text(data)), data);
}

TEST(ExtrapText, TwoParametersAndSmallNumbers) {
  const ExtrapData d{{"p", "n"},
                     {{1, 64}, {2, 64}, {1, 128}},
                     {{"kernel", "seconds", {{0.000001, 0.0000015}, {1e-7}, {123456789.25}}}}};
  const std::string text = compas::analysis::extrap_text(d);
  EXPECT_EQ(text,
            "PARAMETER p n\n"
            "POINTS (1 64) (2 64) (1 128)\n"
            "\n"
            "METRIC seconds\n"
            "REGION kernel\n"
            "DATA 0.000001 0.0000015\n"
            "DATA 0.0000001\n"
            "DATA 123456789.25\n");
  EXPECT_EQ(compas::analysis::parse_extrap_text(text), d);
}

TEST(ExtrapText, EachMetricIsDeclaredOnceWhateverTheSeriesOrder) {
  ExtrapData d = small_study();
  std::swap(d.series[1], d.series[2]);  // time, bytes, time
  const std::string text = compas::analysis::extrap_text(d);
  EXPECT_EQ(text, small_study_text);
  const auto back = compas::analysis::parse_extrap_text(text);
  ASSERT_EQ(back.series.size(), 3u);
  EXPECT_EQ(back.series[0], d.series[0]);
  EXPECT_EQ(back.series[1], d.series[2]);
  EXPECT_EQ(back.series[2], d.series[1]);
}

TEST(ExtrapText, ReadsTheDocumentedVariants) {
  // The documentation's example (docs/examples/input.txt: REGION before METRIC), with comments,
  // CRLF line ends, tabs, bare coordinates and a second POINTS line.
  const auto d = compas::analysis::parse_extrap_text(
      "# measured on 2 nodes\r\n"
      "PARAMETER p\r\n"
      "POINTS 4 8 16\n"
      "POINTS (32)\t(64)\n"
      "\n"
      "REGION example\n"
      "METRIC time\n"
      "DATA 8.31 8.02 8.14\n"
      "# a comment between DATA lines\n"
      "DATA 22.74\t22.66 23.20\n"
      "DATA 65.79 64.74 66.62\n"
      "DATA 186.78 184.68 181.58\n"
      "DATA +528.86 522.44 531.\n"
      "METRIC bytes\n"
      "DATA 1 2 3 4 5\n"
      "DATA 1\nDATA 1\nDATA 1\nDATA 1\n");
  EXPECT_EQ(d.parameters, std::vector<std::string>{"p"});
  EXPECT_EQ(d.points, (std::vector<std::vector<double>>{{4}, {8}, {16}, {32}, {64}}));
  ASSERT_EQ(d.series.size(), 2u);
  EXPECT_EQ(d.series[0].region, "example");
  EXPECT_EQ(d.series[0].metric, "time");
  EXPECT_EQ(d.series[0].values[1], (std::vector<double>{22.74, 22.66, 23.20}));
  EXPECT_EQ(d.series[0].values[4], (std::vector<double>{528.86, 522.44, 531}));
  EXPECT_EQ(d.series[1].metric, "bytes");
  EXPECT_EQ(d.series[1].values[0].size(), 5u);
  // The documentation's multi-parameter form, every coordinate in its own parentheses.
  const auto two = compas::analysis::parse_extrap_text(
      "PARAMETER p\nPARAMETER n\nPOINTS ((1) (64)) ((2) (64))\nREGION r\nDATA 1\nDATA 2\n");
  EXPECT_EQ(two.parameters, (std::vector<std::string>{"p", "n"}));
  EXPECT_EQ(two.points, (std::vector<std::vector<double>>{{1, 64}, {2, 64}}));
  EXPECT_EQ(two.series[0].metric, "");  // METRIC is optional
}

void expect_parse_error(const std::string& text, const std::string& what) {
  try {
    compas::analysis::parse_extrap_text(text);
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(ExtrapText, TheDocumentedRulesAreChecked) {
  const std::string head = "PARAMETER p\nPOINTS (1) (2) (4)\n";
  expect_parse_error(head + "REGION r\nDATA 1\nDATA 2\nREGION s\nDATA 1\nDATA 2\nDATA 3\n",
                     "line 6: 2 DATA lines for region 'r' metric '', one per point (3)");
  expect_parse_error(head + "REGION r\nDATA 1\nDATA 2\n", "line 5: 2 DATA lines");
  expect_parse_error(head + "REGION r\nDATA 1\nDATA 2\nDATA 3\nDATA 4\n",
                     "line 7: more DATA lines than the 3 points");
  expect_parse_error(head + "REGION r\nDATA 1\nDATA 1e-3\nDATA 3\n",
                     "line 5: '1e-3' is not a NUMBER");
  expect_parse_error(head + "DATA 1\nDATA 2\nDATA 3\n", "line 3: DATA before any REGION");
  expect_parse_error("PARAMETER p\nPOINTS (1) (2) (1)\n", "line 2: a point is given twice");
  expect_parse_error(head + "PARAMETER n\n", "line 3: PARAMETER after POINTS");
  expect_parse_error("POINTS (1)\n", "line 1: POINTS before PARAMETER");
  expect_parse_error(head + "REGION r\nDATA 1\nDATA 2\nDATA 3\nPOINTS (8)\n",
                     "line 7: POINTS after");
  expect_parse_error(head + "REGION r\nREGION s\nDATA 1\nDATA 2\nDATA 3\n",
                     "line 4: REGION r has no DATA");
  expect_parse_error(head + "REGION r\nDATA 1\nDATA 2\nDATA 3\nREGION r\nDATA 1\n",
                     "line 8: region 'r' metric '' is given twice");
  expect_parse_error(head + "VALUES 1\n", "line 3: unknown section 'VALUES'");
  expect_parse_error("PARAMETER a b c d e\n", "more than 4 parameters");
  expect_parse_error("PARAMETER p n\nPOINTS (1) (2)\n", "a point has 1 coordinates for 2");
  expect_parse_error("PARAMETER p n\nPOINTS 1 2\n", "points need parentheses");
  expect_parse_error(head + "REGION r\n", "REGION r has no DATA");
  expect_parse_error(head, "no DATA line");
  expect_parse_error("PARAMETER p\nPARAMETER p\n", "line 2: parameter 'p' is given twice");
  expect_parse_error(" PARAMETER p\n", "line 1: a line must start with a section name");
}

void expect_write_error(const ExtrapData& d, const std::string& what) {
  try {
    compas::analysis::extrap_text(d);
    ADD_FAILURE() << "no error, expected " << what;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
  EXPECT_THROW(compas::report::extrap_json(d), std::invalid_argument);
}

TEST(ExtrapText, DataExtraPWouldReadOtherwiseAreRefused) {
  auto d = small_study();
  d.series[0].values.pop_back();
  expect_write_error(d, "has values for 2 of 3 points");
  d = small_study();
  d.points[2] = {1};
  expect_write_error(d, "a point is given twice");
  d = small_study();
  d.series[2].metric = "time";
  expect_write_error(d, "region 'main' metric 'time' is given twice");
  d = small_study();
  d.series[0].region = "main  loop";
  expect_write_error(d, "outer or doubled spaces");
  d = small_study();
  d.series[0].region = "main->";
  expect_write_error(d, "empty call-path level");
  d = small_study();
  d.series[0].metric = "";
  expect_write_error(d, "metric name is empty");
  d = small_study();
  d.series[1].values[0] = {NAN};
  expect_write_error(d, "not finite");
  d = small_study();
  d.series[1].values[0] = {};
  expect_write_error(d, "a point without a value");
  d = small_study();
  d.parameters = {"p q"};
  expect_write_error(d, "has a space");
  d = small_study();
  d.parameters = {"a", "b", "c", "d", "e"};
  expect_write_error(d, "5 parameters: Extra-P reads 1 to 4");
  d = small_study();
  d.parameters = {"p", "p"};
  for (auto& pt : d.points) pt.push_back(1);
  expect_write_error(d, "parameter 'p' is given twice");
}

// ---- Extra-P JSON format ----

TEST(ExtrapJson, SmallStudyHasTheDocumentedStructure) {
  const auto j = compas::report::extrap_json(small_study());
  EXPECT_EQ(j.dump(),
            R"({"parameters":["p"],"measurements":{"main":{"time":[)"
            R"({"point":[1.0],"values":[10.5,10.25]},{"point":[2.0],"values":[5.5,5.75]},)"
            R"({"point":[4.0],"values":[3.0,3.125]}],"bytes":[{"point":[1.0],"values":[100.0]},)"
            R"({"point":[2.0],"values":[200.0]},{"point":[4.0],"values":[400.0]}]},)"
            R"("main->solve":{"time":[{"point":[1.0],"values":[8.0]},{"point":[2.0],)"
            R"("values":[4.0]},{"point":[4.0],"values":[2.0]}]}}})");
}

}  // namespace
