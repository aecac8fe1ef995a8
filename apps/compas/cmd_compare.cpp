// compas compare A B: two study directories, or two JSON files of one command, side by side: the
// machines, every point's values with B/A and the spread of each side's repetitions, and whether
// the difference is real or within noise (the rules are comparison::kRules, in compare.cpp).
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "compare.hpp"
#include "compas/base/number.hpp"

namespace compas::app {

namespace comparison {

namespace {

struct CompareArgs {
  std::string a, b;
  std::string fail_above;  // empty: never fail on a regression
  OutputFlags out;
};

// --fail-above R: a factor above 1 ("1.1": B more than 10% worse).
std::optional<double> fail_factor(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const auto v = base::parse_decimal(text);
  if (!v || !(*v > 1) || !(*v <= 1e6))
    throw std::invalid_argument("--fail-above '" + text +
                                "' is not allowed: a decimal factor above 1 (e.g. 1.1 fails on a "
                                "point where B is more than 1.1 times worse than A)");
  return *v;
}

// Writing the comparison over one of its inputs would lose the measurements.
void check_not_input(const char* flag, const std::string& out, const Input& a, const Input& b) {
  if (out.empty()) return;
  std::error_code ec_out;
  const auto target = std::filesystem::weakly_canonical(out, ec_out);
  for (const Input* in : {&a, &b}) {
    std::error_code ec_in;
    const auto input = std::filesystem::weakly_canonical(in->file, ec_in);
    if (!ec_out && !ec_in && target == input)
      throw std::invalid_argument(std::string(flag) + " '" + out + "' is input " + in->label +
                                  ": it would be overwritten");
  }
}

std::string number(const std::optional<Value>& v) {
  return v ? fmt::format("{:.5g}", v->value) : "-";
}

std::string spread_text(const std::optional<Value>& v) {
  if (!v || !v->spread_known) return "-";
  return fmt::format("{:.1f}%", 100 * v->spread());
}

std::string ratio_text(const Row& r) {
  return r.a && r.b && r.verdict.comparable ? fmt::format("{:.3f}", r.verdict.ratio) : "-";
}

std::string how_text(double speedup) {
  if (speedup > 1) return fmt::format("B {:.2f}x faster", speedup);
  if (speedup < 1) return fmt::format("B {:.2f}x slower", 1 / speedup);
  return "B the same";
}

std::string verdict_text(const Row& r) {
  const std::string name = verdict_name(r);
  if (!r.a || !r.b) return name;
  if (r.verdict.different_work) return r.verdict.note;
  if (!r.verdict.comparable) return name + ": " + r.verdict.note;
  const std::string how = how_text(r.verdict.speedup);
  if (r.verdict.real)
    return name + ": " + how + (r.verdict.note.empty() ? "" : "; " + r.verdict.note);
  return name + " (" + how + (r.verdict.note.empty() ? "" : "; " + r.verdict.note) + ")";
}

void print_inputs(const Input& a, const Input& b) {
  fmt::print(
      "compas compare: B against A; B/A is B's value over A's (times: lower is better, "
      "rates: higher is better)\n");
  for (const Input* in : {&a, &b}) fmt::print("  {}: {} ({})\n", in->label, in->path, in->what);
}

void print_machines(const std::vector<MachineLine>& lines) {
  std::size_t wf = 5, wa = 1;
  for (const auto& l : lines) wf = std::max(wf, l.field.size()), wa = std::max(wa, l.a.size());
  fmt::print("\nmachines (* marks a line that differs):\n");
  fmt::print("    {:<{}}  {:<{}}  {}\n", "field", wf, "A", wa, "B");
  for (const auto& l : lines)
    fmt::print("  {} {:<{}}  {:<{}}  {}\n", l.differs ? '*' : ' ', l.field, wf, l.a, wa, l.b);
}

std::string field_text(const std::string& name, const json& v) {
  return name + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
}

// Key fields with one value in every row that has them (not the "#n" of a repeated key).
json shared_fields(const std::vector<Row>& rows) {
  json values = json::object();
  std::set<std::string> varying = {"occurrence"};
  for (const auto& r : rows)
    for (auto it = r.point.key_fields.begin(); it != r.point.key_fields.end(); ++it) {
      if (!values.contains(it.key())) values[it.key()] = it.value();
      if (values[it.key()] != it.value()) varying.insert(it.key());
    }
  for (const auto& name : varying) values.erase(name);
  return values;
}

struct DisplayKeys {
  std::vector<std::string> keys;  // one per row
  std::string common;             // the fields left out of every row
};

// Shared key fields say nothing about which point a row is: they are printed once above the table
// and left out of the rows; a row left with no field shows its whole key. A study's keys are
// short already.
DisplayKeys display_keys(const std::vector<Row>& rows, bool study) {
  DisplayKeys d;
  for (const auto& r : rows) d.keys.push_back(r.point.key);
  if (study) return d;
  const json shared = shared_fields(rows);
  std::vector<std::string> shortened;
  bool any = false;
  for (const auto& r : rows) {
    std::string k;
    for (auto it = r.point.key_fields.begin(); it != r.point.key_fields.end(); ++it)
      if (!shared.contains(it.key())) {
        if (!k.empty()) k += ' ';
        k += field_text(it.key(), it.value());
      }
    any = any || !k.empty();
    shortened.push_back(k.empty() ? r.point.key : k);
  }
  if (!any) return d;  // nothing but shared fields: the whole keys say it best
  d.keys = std::move(shortened);
  for (auto it = shared.begin(); it != shared.end(); ++it)
    d.common += (d.common.empty() ? "" : " ") + field_text(it.key(), it.value());
  return d;
}

void print_points(const std::vector<Row>& rows, const DisplayKeys& d) {
  const auto& keys = d.keys;
  fmt::print("\npoints (spread: (max - min) / median of each side's repetitions; - : unknown):\n");
  if (!d.common.empty()) fmt::print("  every point that has these fields has {}\n", d.common);
  if (rows.empty()) {
    fmt::print("  none: neither input has a point\n");
    return;
  }
  std::size_t wk = 5, wm = 7, wa = 1, wb = 1;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    wk = std::max(wk, keys[i].size());
    wm = std::max(wm, rows[i].point.measurement.size());
    wa = std::max(wa, number(rows[i].a).size());
    wb = std::max(wb, number(rows[i].b).size());
  }
  fmt::print("  {:<{}}  {:<{}}  {:>{}}  {:>{}}  {:>7}  {:>8}  {:>8}  {}\n", "point", wk, "measure",
             wm, "A", wa, "B", wb, "B/A", "A spread", "B spread", "verdict");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    fmt::print("  {:<{}}  {:<{}}  {:>{}}  {:>{}}  {:>7}  {:>8}  {:>8}  {}\n", keys[i], wk,
               r.point.measurement, wm, number(r.a), wa, number(r.b), wb, ratio_text(r),
               spread_text(r.a), spread_text(r.b), verdict_text(r));
  }
}

void print_summary(const Summary& s) {
  std::string line =
      fmt::format("\nsummary: {} point{} in both: {} faster, {} slower, {} within noise", s.both,
                  s.both == 1 ? "" : "s", s.faster, s.slower, s.noise);
  if (s.unknown) line += fmt::format(", {} unknown (single runs, no spread)", s.unknown);
  if (s.not_comparable) line += fmt::format(", {} not comparable", s.not_comparable);
  if (s.different_work) line += fmt::format(", {} of different work", s.different_work);
  line += fmt::format("; {} only in A, {} only in B", s.only_a, s.only_b);
  if (s.ratios > 0) {
    line += fmt::format("; geometric mean speedup of B over A {:.3f}x", s.geomean_speedup);
    if (s.geomean_ratio) line += fmt::format(" (of B/A {:.3f})", *s.geomean_ratio);
  }
  fmt::print("{}\n", line);
  if (s.tested > 1)
    fmt::print(
        "({} points tested at {:.0f}% each: about {:.1f} of them would show a real difference by "
        "chance alone)\n",
        s.tested, 100 * kConfidence, s.tested * (1 - kConfidence));
}

// A CSV row is one level: a side's value as "a", its range as "a_min", "a_max", ...; the key
// object is left out ("point" says it in one cell).
json csv_record(const json& r) {
  json f = json::object();
  for (auto it = r.begin(); it != r.end(); ++it) {
    if (it.key() == "key") continue;
    if (!it.value().is_object()) {
      f[it.key()] = it.value();
      continue;
    }
    for (auto s = it.value().begin(); s != it.value().end(); ++s)
      f[s.key() == "value" ? it.key() : it.key() + "_" + s.key()] = s.value();
  }
  return f;
}

void write_comparison(const json& doc, const OutputFlags& out) {
  write_output(out, out.json, doc.dump(2) + "\n");
  if (out.csv.empty()) return;
  std::vector<json> records;
  for (const auto& r : doc["results"]) records.push_back(csv_record(r));
  write_output(out, out.csv, report::to_csv(records));
}

// Exit 3 with one line per regression beyond --fail-above; 1 when no point could be judged (a
// check that looked at nothing has not passed); 0 when none is worse.
int judge_regressions(const std::vector<Row>& rows, const Summary& s, std::optional<double> factor,
                      bool quiet) {
  if (!factor) return 0;
  if (s.ratios == 0) {
    fmt::print(stderr,
               "compas compare: --fail-above {}: no point could be judged ({} in both, {} "
               "comparable): nothing was checked\n",
               *factor, s.both, s.ratios);
    return 1;
  }
  const auto bad = regressions(rows, *factor);
  if (!quiet || !bad.empty())
    fmt::print(stderr, "compas compare: {} regression{} beyond --fail-above {}{}\n", bad.size(),
               bad.size() == 1 ? "" : "s", *factor, bad.empty() ? "" : ":");
  for (const Row* r : bad)
    fmt::print(stderr, "  {} / {}: B {:.3g}x worse ({})\n", r->point.key, r->point.measurement,
               1 / r->verdict.speedup, r->verdict.note);
  return bad.empty() ? 0 : 3;
}

int run_compare(const CompareArgs& args) {
  const auto factor = fail_factor(args.fail_above);
  const Input a = load_input("A", args.a);
  const Input b = load_input("B", args.b);
  check_same_kind(a, b);
  check_outputs(args.out);
  check_not_input("--json", args.out.json, a, b);
  check_not_input("--csv", args.out.csv, a, b);

  const auto rows = match(points_of(a), points_of(b));
  const auto machines = machine_lines(a, b);
  const Summary summary = summarize(rows);
  write_comparison(comparison_json(a, b, machines, rows, summary), args.out);
  if (!args.out.quiet) {
    print_inputs(a, b);
    print_machines(machines);
    print_points(rows, display_keys(rows, a.kind == "study"));
    print_summary(summary);
  }
  return judge_regressions(rows, summary, factor, args.out.quiet);
}

}  // namespace

}  // namespace comparison

Command setup_compare(CLI::App& app) {
  auto args = std::make_shared<comparison::CompareArgs>();
  auto* cmd = app.add_subcommand(
      "compare", "compare two study directories or two JSON files of one command, point by point");
  cmd->footer(comparison::kRules);
  cmd->add_option("A", args->a, "the baseline: a study directory or a compas JSON file")
      ->required();
  cmd->add_option("B", args->b, "what is compared with A: of the same kind as A")->required();
  cmd->add_option("--fail-above", args->fail_above,
                  "exit 3 when a real difference makes B worse than A by more than this factor "
                  "(e.g. 1.1), for CI; exit 1 when no point could be judged");
  add_output_flags(*cmd, args->out);
  return {cmd, [args] { return comparison::run_compare(*args); }};
}

}  // namespace compas::app
