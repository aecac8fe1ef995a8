// compas compare's verdict on one pair of values (compare.hpp): a Mann-Whitney interval of B / A
// where both sides have repetitions enough, else the ranges, else a 5% rule for single runs.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "compare.hpp"
#include "ratio_interval.hpp"

namespace compas::app::comparison {

namespace {

// The smallest difference single runs (or ranges without samples) must show.
constexpr double kUntestedLimit = 0.05;

void judge_by_interval(const Value& a, const Value& b, Verdict& v) {
  const RatioInterval r = ratio_interval(a.samples, b.samples, kConfidence);
  v.tested = r.bounded;
  if (!r.bounded) return;
  v.ci_lo = r.lo;
  v.ci_hi = r.hi;
  v.confidence = r.confidence;
  v.p_value = r.p_value;
  v.real = r.lo > 1 || r.hi < 1;
  v.note = fmt::format("B/A {:.0f}% interval {:.4g} - {:.4g} {} 1 ({} and {} runs, p = {:.2g})",
                       100 * kConfidence, r.lo, r.hi, v.real ? "excludes" : "includes",
                       a.samples.size(), b.samples.size(), r.p_value);
}

void judge_by_ranges(const Value& a, const Value& b, Verdict& v) {
  const bool known = a.spread_known || b.spread_known;
  const bool apart = a.hi < b.lo || b.hi < a.lo;
  // Equal to 1 - min(B/A, A/B), computed alike either way round.
  const double difference = std::abs(b.value - a.value) / std::max(a.value, b.value);
  if (!known && difference > 0) {  // two single runs: how far apart chance puts them is unknown
    v.unknown = true;
    v.note = fmt::format(
        "no spread known (single runs): a difference of {:.1f}% may be noise; repeat the "
        "measurements (3 runs a side for a test)",
        100 * difference);
    return;
  }
  v.real = apart && difference > kUntestedLimit;
  const std::string why =
      a.samples.size() > 1 && b.samples.size() > 1
          ? fmt::format("{} and {} runs, too few for a {:.0f}% interval (it needs {} each)",
                        a.samples.size(), b.samples.size(), 100 * kConfidence,
                        repetitions_for(kConfidence))
      : known ? std::string("ranges only, no test")
              : std::string("single runs, no test");
  if (!known)
    v.note = "single runs of equal values";
  else if (!apart)
    v.note = "ranges overlap (" + why + ")";
  else
    v.note = fmt::format("ranges apart, the difference {:.1f}% {} 5% ({})", 100 * difference,
                         v.real ? "exceeds" : "is within", why);
}

std::string work_text(const json& w) {
  if (w.is_null()) return "not recorded";
  std::string out;
  for (auto it = w.begin(); it != w.end(); ++it)
    out += (out.empty() ? "" : ", ") + it.key() + " " + it.value().dump();
  return out.empty() ? "none" : out;
}

}  // namespace

Verdict judge(const Value& a, const Value& b, Better better) {
  Verdict v;
  if (!(a.value > 0 && b.value > 0)) {
    v.note = "a value is zero or negative";
    return v;
  }
  v.comparable = true;
  v.ratio = b.value / a.value;
  v.speedup = better == Better::lower ? 1 / v.ratio : v.ratio;
  if (a.samples.size() > 1 && b.samples.size() > 1) judge_by_interval(a, b, v);
  if (!v.tested) judge_by_ranges(a, b, v);
  return v;
}

Verdict different_work(const json& a, const json& b) {
  Verdict v;
  v.different_work = true;
  v.note = "different work: A " + work_text(a) + "; B " + work_text(b) +
           " (the rates compare them per unit of work)";
  return v;
}

std::string verdict_name(const Row& r) {
  if (!r.b) return "only in A";
  if (!r.a) return "only in B";
  if (r.verdict.different_work) return "different work";
  if (!r.verdict.comparable) return "not comparable";
  if (r.verdict.unknown) return "unknown (no spread)";
  return r.verdict.real ? "real difference" : "within noise";
}

std::vector<const Row*> regressions(const std::vector<Row>& rows, double factor) {
  std::vector<const Row*> out;
  for (const auto& r : rows)
    if (r.a && r.b && r.verdict.comparable && r.verdict.real && 1 / r.verdict.speedup > factor)
      out.push_back(&r);
  return out;
}

}  // namespace compas::app::comparison
