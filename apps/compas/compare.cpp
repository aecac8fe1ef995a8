#include "compare.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common.hpp"
#include "compas/probes/membw.hpp"
#include "printable.hpp"
#include "read_json.hpp"
#include "read_whole.hpp"

namespace compas::app::comparison {

namespace fs = std::filesystem;

const char* const kRules =
    "A and B are two study directories (compas study --out DIR, or their study.json) or two JSON "
    "files of one command (the --json of membw, cache, barrier, pingpong, run KERNEL), each a "
    "regular file of at most 64 MiB (a FIFO, a device or a larger file is refused) of JSON nested "
    "at most 64 levels deep, with keys of at most 1024 bytes, each key once in its object, and "
    "values that take at most 12 times the file's size in memory. Points of "
    "a study: each kernel's rows, by kernel, size and P x T, compared on the kernel's rate (work "
    "per second: mlups, gflops, mops, mkeys_per_s) with each run's rate as a repetition, so that "
    "runs of different work compare per unit of work. Points of a command's file: each record, "
    "matched by a key made of its string, boolean and integer fields except measurements, the "
    "bounds of a field X the record has (min_X, max_X, X_min, X_max), *_hash, free text "
    "(*_reason, *_note), what a run found (verified, verification, "
    "skipped_passes, repeats, stores, isa, cpus, method, streaming_stores, stores_calibrated, "
    "transport, saturated, saturation_threads, peak_threads, digit_bits, official_zeta) and how "
    "much it did, its work (iters, sweeps, iterations, passes, loads, repetitions, "
    "iteration_factor; in membw "
    "also bytes); and each of its measurements (a kernel run's also its work record's "
    "seconds_per_unit, comparable whatever work each run did): numbers named as times (*seconds, "
    "*_ns, *_us, *_ms, ns_per_*, "
    "us_per_*, cycles_per_*, latency*: lower is better) or rates (*gbs, *_mbs, *_per_s, mlups, "
    "gflops, mops, rate, bandwidth: higher is better); other numbers are neither key nor "
    "compared. A total time (*seconds) is paired only with one of equal work, else the point is "
    "listed as different work (its rates are still compared). Repetitions of a side: its samples "
    "(X_samples; for seconds also samples, iter_seconds, iteration_seconds; a rate without "
    "samples takes them from its record's seconds, as rate x median / each time); spread: (max - "
    "min) / median. Verdict: with at least 3 repetitions on each side, the 90% confidence "
    "interval of B / A from the pairwise ratios B_j / A_i (Mann-Whitney's, as Hodges-Lehmann's "
    "estimate; no distribution assumed; exact coverage stated): a real difference when it "
    "excludes 1 (of N such tests about N / 10 do so by chance alone: the summary says how many "
    "were made). With fewer, or with only min and max known on a side: a real difference when the "
    "ranges do not overlap and |B - A| / max(A, B) exceeds 5%; this is no test and the note says "
    "so. Two single runs (no spread known on either side): unknown, whatever their difference. "
    "Swapping A and B keeps every verdict. --fail-above R: exit 3 when a real difference makes B "
    "worse than A by more than R times (B's time over A's, A's rate over B's), exit 1 when no "
    "point could be judged (none in both, or none comparable); exit 1 is also any other failure "
    "and 2 bad input.";

namespace {

// The largest input read (kRules says it): the bounded reader's.
constexpr std::uint64_t kInputLimit = kJsonSizeLimit;

// Integer and string fields that say what a run found or how long it tried, not which point it
// measured: two runs of one point may differ in them, so they stay out of the key.
const std::set<std::string> kOutcomes = {"verified",
                                         "verification",
                                         "skipped_passes",
                                         "repeats",
                                         "disturbed_repeats",
                                         "stores",
                                         "isa",
                                         "cpus",
                                         "method",
                                         "streaming_stores",
                                         "stores_calibrated",
                                         "transport",
                                         "saturated",
                                         "saturation_threads",
                                         "peak_threads",
                                         "digit_bits",
                                         "official_zeta"};

// Fields that say how much a run did: a total time is paired only with one of equal work.
const std::set<std::string> kWork = {"iters", "sweeps",      "iterations",      "passes",
                                     "loads", "repetitions", "iteration_factor"};

[[noreturn]] void refuse(const std::string& label, const std::string& path,
                         const std::string& what) {
  throw std::invalid_argument(label + " '" + path + "': " + what);
}

bool starts_with(const std::string& s, const char* p) {
  return s.rfind(p, 0) == 0;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ---- loading ----------------------------------------------------------------------------------

std::string read_text(const std::string& label, const std::string& file) {
  try {
    return read_whole(file, kInputLimit, Links::follow);
  } catch (const UnreadableFile& e) {
    refuse(label, file, e.what());
  }
}

json parse_json(const std::string& label, const std::string& file) {
  const std::string text = read_text(label, file);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    refuse(label, file, "the file is empty, not a compas JSON file");
  try {
    return parse_bounded_json(text);
  } catch (const BadJson& e) {
    refuse(label, file, e.what());
  }
}

void check_study(const Input& in) {
  if (!in.doc.contains("kernels") || !in.doc["kernels"].is_object())
    refuse(in.label, in.file, "a study without a \"kernels\" object (a damaged study.json?)");
}

void check_records(const Input& in) {
  if (!in.doc.contains("results") || !in.doc["results"].is_array())
    refuse(in.label, in.file, "a '" + in.kind + "' file without a \"results\" list");
  const json& results = in.doc["results"];
  for (std::size_t i = 0; i < results.size(); ++i)
    if (!results[i].is_object())
      refuse(in.label, in.file, fmt::format("results[{}] is not an object", i));
}

// "run" files of different kernels measure different things: the kernel is part of the kind.
std::string command_kind(const json& doc) {
  std::string kind = doc["command"].get<std::string>();
  if (kind != "run" || !doc.contains("results") || !doc["results"].is_array()) return kind;
  std::set<std::string> kernels;
  for (const auto& r : doc["results"])
    if (r.is_object() && r.contains("kernel") && r["kernel"].is_string())
      kernels.insert(r["kernel"].get<std::string>());
  return kernels.size() == 1 ? kind + " " + *kernels.begin() : kind;
}

void classify(Input& in, bool directory) {
  if (!in.doc.is_object() || !in.doc.contains("command") || !in.doc["command"].is_string())
    refuse(in.label, in.file, "not a compas JSON file (no \"command\" string at the top)");
  const std::string command = in.doc["command"].get<std::string>();
  if (directory && command != "study")
    refuse(in.label, in.file, "says command '" + command + "', not 'study'");
  if (command == "compare")
    refuse(in.label, in.file, "a comparison (compas compare --json), not measurements");
  if (command == "study") {
    in.kind = "study";
    in.what = directory ? "a study directory" : "a study JSON file";
    check_study(in);
    return;
  }
  in.kind = command_kind(in.doc);
  in.what = "a '" + in.kind + "' JSON file";
  check_records(in);
}

// ---- points -----------------------------------------------------------------------------------

// min_X / max_X / X_min / X_max of a field X the record has: X's range, not a quantity of its own
// (membw's max_threads, with no "threads" beside it, is one).
bool is_bound(const json& rec, const std::string& name) {
  for (const char* p : {"min_", "max_"})
    if (starts_with(name, p) && rec.contains(name.substr(4))) return true;
  for (const char* p : {"_min", "_max"})
    if (ends_with(name, p) && rec.contains(name.substr(0, name.size() - 4))) return true;
  return false;
}

std::optional<Better> direction_of(const std::string& name) {
  if (ends_with(name, "seconds") || ends_with(name, "_ns") || ends_with(name, "_us") ||
      ends_with(name, "_ms") || starts_with(name, "ns_per_") || starts_with(name, "us_per_") ||
      starts_with(name, "cycles_per_") || starts_with(name, "latency"))
    return Better::lower;
  if (ends_with(name, "gbs") || ends_with(name, "_mbs") || ends_with(name, "_per_s") ||
      name == "mlups" || name == "gflops" || name == "mops" || name == "rate" ||
      name == "bandwidth")
    return Better::higher;
  return std::nullopt;
}

// membw's "bytes" are the bytes moved over all passes (its working_set_bytes names the point).
bool is_work_field(const std::string& command, const std::string& name) {
  return kWork.count(name) || (command == "membw" && name == "bytes");
}

// Free text that explains a choice or a shortfall ("stores_reason", "min_seconds_note") may hold
// timings of its own: it says why, not which point.
bool is_free_text(const std::string& name) {
  return ends_with(name, "_reason") || ends_with(name, "_note") || ends_with(name, "_notes");
}

bool is_key_field(const std::string& command, const json& rec, const std::string& name) {
  const json& v = rec[name];
  if (!v.is_string() && !v.is_boolean() && !v.is_number_integer()) return false;
  if (direction_of(name) || is_bound(rec, name) || ends_with(name, "_hash")) return false;
  if (is_free_text(name)) return false;
  return !kOutcomes.count(name) && !is_work_field(command, name);
}

// How much the record's run did, as the fields that say it.
json work_of(const std::string& command, const json& rec) {
  json w = json::object();
  for (auto it = rec.begin(); it != rec.end(); ++it)
    if (is_work_field(command, it.key()) && !it.value().is_structured()) w[it.key()] = it.value();
  return w;
}

std::vector<double> samples_of(const json& rec, const std::string& field,
                               const std::string& where) {
  std::vector<std::string> names = {field + "_samples"};
  if (field == "seconds" || field == "median_seconds")
    names.insert(names.end(), {"samples", "iter_seconds", "iteration_seconds"});
  for (const auto& name : names) {
    if (!rec.contains(name)) continue;
    const json& s = rec[name];
    const bool numbers = s.is_array() && std::all_of(s.begin(), s.end(),
                                                     [](const json& x) { return x.is_number(); });
    if (!numbers)
      throw std::invalid_argument(where + ": \"" + name + "\" is not a list of numbers");
    if (!s.empty()) return s.get<std::vector<double>>();
  }
  return {};
}

std::optional<std::pair<double, double>> range_of(const json& rec, const std::string& field) {
  const std::pair<std::string, std::string> names[] = {{field + "_min", field + "_max"},
                                                       {"min_" + field, "max_" + field}};
  for (const auto& [lo, hi] : names)
    if (rec.contains(lo) && rec.contains(hi) && rec[lo].is_number() && rec[hi].is_number())
      return std::pair{rec[lo].get<double>(), rec[hi].get<double>()};
  return std::nullopt;
}

// A rate without samples of its own, in a record whose time has them: the rate of each
// repetition, as the rate is work over that time (rate x median time / the repetition's time).
std::vector<double> borrowed_samples(const json& rec, const std::string& field,
                                     const std::string& where) {
  if (direction_of(field) != Better::higher || !rec.contains("seconds")) return {};
  std::vector<double> times = samples_of(rec, "seconds", where);
  if (times.size() < 2 || std::any_of(times.begin(), times.end(), [](double t) { return t <= 0; }))
    return {};
  const double center = median(times), rate = rec[field].get<double>();
  for (double& t : times) t = rate * center / t;
  return times;
}

// Likewise a rate's range from its record's seconds' range: rate x seconds / max .. / min.
std::optional<std::pair<double, double>> borrowed_range(const json& rec, const std::string& field) {
  if (direction_of(field) != Better::higher || !rec.contains("seconds") ||
      !rec["seconds"].is_number())
    return std::nullopt;
  const auto t = range_of(rec, "seconds");
  if (!t || !(t->first > 0)) return std::nullopt;
  const double work = rec[field].get<double>() * rec["seconds"].get<double>();
  return std::pair{work / t->second, work / t->first};
}

Value value_of(const json& rec, const std::string& field, const std::string& where) {
  Value v;
  v.value = v.lo = v.hi = v.center = rec[field].get<double>();
  auto s = samples_of(rec, field, where);
  if (s.empty()) s = borrowed_samples(rec, field, where);
  if (!s.empty()) {
    v.samples = s;
    v.lo = std::min(v.value, *std::min_element(s.begin(), s.end()));
    v.hi = std::max(v.value, *std::max_element(s.begin(), s.end()));
    v.center = median(s);
    v.runs = static_cast<int>(s.size());
    v.spread_known = s.size() > 1;
  } else if (const auto r = range_of(rec, field)) {
    v.lo = std::min(v.value, r->first);
    v.hi = std::max(v.value, r->second);
    v.runs = 0;
    v.spread_known = true;
  } else if (const auto t = borrowed_range(rec, field)) {
    v.lo = std::min(v.value, t->first);
    v.hi = std::max(v.value, t->second);
    v.runs = 0;
    v.spread_known = true;
  }
  return v;
}

// A study's point is judged on the kernel's rate (work per second: comparable whatever work each
// run did), with each run's rate as its samples; a study without rates, on the seconds per unit.
Point study_point(const std::string& kernel, const std::string& rate_field, const json& row,
                  const std::string& where) {
  if (!row.is_object()) throw std::invalid_argument(where + " is not an object");
  for (const char* f : {"procs", "threads"})
    if (!row.contains(f) || !row[f].is_number_integer())
      throw std::invalid_argument(where + ": no integer \"" + f + "\"");
  const bool by_rate = rate_field != "seconds" && row.contains("rate") && row["rate"].is_number();
  const std::string field = by_rate ? "rate" : "seconds_per_unit";
  if (!row.contains(field) || !row[field].is_number())
    throw std::invalid_argument(where + ": no number \"" + field +
                                "\" (a study of an older compas?)");
  const int procs = row["procs"].get<int>(), threads = row["threads"].get<int>();
  const bool over = row.value("oversubscribed", false);
  Point p;
  p.key = fmt::format("{} | {} x {}{}", kernel, procs, threads, over ? " (over)" : "");
  p.key_fields = {
      {"kernel", kernel}, {"procs", procs}, {"threads", threads}, {"oversubscribed", over}};
  p.work = row.contains("unit") ? json{{"unit", row["unit"]}} : json(nullptr);
  json rec = {{field, row[field]}};  // the figure under its own name, with its runs' samples
  for (const char* suffix : {"_samples", "_min", "_max"})
    if (row.contains(field + suffix)) rec[field + suffix] = row[field + suffix];
  p.measurement = by_rate ? rate_field : field;
  p.better = by_rate ? Better::higher : Better::lower;
  rec[p.measurement] = rec[field];
  if (by_rate)
    for (const char* suffix : {"_samples", "_min", "_max"})
      if (rec.contains(field + suffix)) rec[p.measurement + suffix] = rec[field + suffix];
  p.value = value_of(rec, p.measurement, where);
  return p;
}

std::vector<Point> study_points(const Input& in) {
  std::vector<Point> out;
  const json& kernels = in.doc["kernels"];
  for (auto it = kernels.begin(); it != kernels.end(); ++it) {
    const std::string where = fmt::format("{} '{}': kernels.\"{}\"", in.label, in.file, it.key());
    if (!it.value().is_object() || !it.value().contains("rows") || !it.value()["rows"].is_array())
      throw std::invalid_argument(where + " has no \"rows\" list");
    const json& rows = it.value()["rows"];
    const json& rate = it.value().contains("rate_field") ? it.value()["rate_field"] : json();
    const std::string rate_field = rate.is_string() ? rate.get<std::string>() : "seconds";
    for (std::size_t i = 0; i < rows.size(); ++i)
      out.push_back(
          study_point(it.key(), rate_field, rows[i], fmt::format("{}.rows[{}]", where, i)));
  }
  return out;
}

std::pair<std::string, json> record_key(const std::string& command, const json& rec) {
  std::string key;
  json fields = json::object();
  for (auto it = rec.begin(); it != rec.end(); ++it) {
    if (!is_key_field(command, rec, it.key())) continue;
    key += (key.empty() ? "" : " ") + it.key() + "=" + text_of(it.value());
    fields[it.key()] = it.value();
  }
  return {key.empty() ? std::string("(no key)") : key, fields};
}

std::vector<Point> record_points(const Input& in) {
  std::vector<Point> out;
  const std::string command = in.doc["command"].get<std::string>();
  const json& results = in.doc["results"];
  for (std::size_t i = 0; i < results.size(); ++i) {
    const json& rec = results[i];
    const auto [key, fields] = record_key(command, rec);
    const std::string where = fmt::format("{} '{}': results[{}]", in.label, in.file, i);
    const json work = work_of(command, rec);
    for (auto it = rec.begin(); it != rec.end(); ++it) {
      const auto better = direction_of(it.key());
      if (!better || !it.value().is_number() || is_bound(rec, it.key())) continue;
      // A total time depends on how much was done; a rate or a time per operation does not.
      const bool total = ends_with(it.key(), "seconds");
      out.push_back({key, fields, it.key(), *better, value_of(rec, it.key(), where), work, total});
    }
    // A kernel run's work record: its time per unit compares whatever work each run did.
    if (rec.contains("work") && rec["work"].is_object() &&
        rec["work"].contains("seconds_per_unit") && rec["work"]["seconds_per_unit"].is_number())
      out.push_back({key, fields, "seconds_per_unit", Better::lower,
                     value_of(rec["work"], "seconds_per_unit", where + ".work"), work, false});
  }
  return out;
}

// Two points of one input with one key and measurement (records alike in every key field) stay
// apart as "#2", "#3", ... in input order, so that each is matched with its counterpart.
void number_repeated_keys(std::vector<Point>& points) {
  std::map<std::string, int> seen;
  for (auto& p : points)
    if (const int n = ++seen[p.key + '\n' + p.measurement]; n > 1) {
      p.key += fmt::format(" #{}", n);
      p.key_fields["occurrence"] = n;
    }
}

json side_json(const std::optional<Value>& v) {
  if (!v) return nullptr;
  return {{"value", v->value}, {"min", v->lo},
          {"max", v->hi},      {"median", v->center},
          {"runs", v->runs},   {"spread", v->spread_known ? json(v->spread()) : json(nullptr)}};
}

json input_json(const Input& in) {
  return {{"path", in.path},
          {"file", in.file},
          {"kind", in.kind},
          {"what", in.what},
          {"version", in.doc.contains("version") ? in.doc["version"] : json(nullptr)}};
}

}  // namespace

// ---- public -----------------------------------------------------------------------------------

std::string text_of(const json& v) {
  return printable(v.is_string() ? v.get<std::string>() : v.dump());
}

Input load_input(const std::string& label, const std::string& path) {
  if (path.empty())
    throw std::invalid_argument(label + " is empty: give a study directory or a compas JSON file");
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) refuse(label, path, "no such file or directory");
  const bool directory = fs::is_directory(status);
  Input in{label, path, path, "", "", json()};
  if (directory) {
    in.file = (fs::path(path) / "study.json").string();
    if (!fs::exists(in.file, ec))
      refuse(label, path,
             "a directory without study.json, not a study directory (compas study --out DIR "
             "makes one)");
  }
  in.doc = parse_json(label, in.file);
  classify(in, directory);
  return in;
}

void check_same_kind(const Input& a, const Input& b) {
  if (a.kind == b.kind) return;
  throw std::invalid_argument(fmt::format(
      "A '{}' is {}, B '{}' is {}: compare needs two of one kind (two study directories, or two "
      "JSON files of the same command)",
      a.path, a.what, b.path, b.what));
}

double Value::spread() const {
  return spread_known && center > 0 ? (hi - lo) / center : 0;
}

std::vector<Point> points_of(const Input& in) {
  std::vector<Point> points;
  try {
    points = in.kind == "study" ? study_points(in) : record_points(in);
  } catch (const json::exception& e) {  // a field of an unexpected type: a damaged input
    refuse(in.label, in.file, std::string("a field of the wrong type: ") + e.what());
  }
  number_repeated_keys(points);
  return points;
}

std::vector<Row> match(const std::vector<Point>& a, const std::vector<Point>& b) {
  std::map<std::string, const Point*> in_b;
  for (const auto& p : b) in_b[p.key + '\n' + p.measurement] = &p;
  std::set<std::string> matched;
  std::vector<Row> rows;
  for (const auto& p : a) {
    const std::string id = p.key + '\n' + p.measurement;
    Row r{p, p.value, std::nullopt, {}, nullptr};
    if (const auto it = in_b.find(id); it != in_b.end()) {
      const Point& q = *it->second;
      r.b = q.value;
      r.b_work = q.work;
      const bool equal_work = !p.work.is_null() && p.work == q.work;
      r.verdict = p.needs_equal_work && !equal_work ? different_work(p.work, q.work)
                                                    : judge(*r.a, *r.b, p.better);
      matched.insert(id);
    }
    rows.push_back(std::move(r));
  }
  for (const auto& p : b)
    if (!matched.count(p.key + '\n' + p.measurement))
      rows.push_back({p, std::nullopt, p.value, {}, nullptr});
  return rows;
}

Summary summarize(const std::vector<Row>& rows) {
  Summary s;
  double log_speedup = 0, log_ratio = 0;
  std::set<Better> directions;
  for (const auto& r : rows) {
    if (!r.a) ++s.only_b;
    if (!r.b) ++s.only_a;
    if (!r.a || !r.b) continue;
    ++s.both;
    const Verdict& v = r.verdict;
    if (v.different_work) {
      ++s.different_work;
      continue;
    }
    if (!v.comparable) {
      ++s.not_comparable;
      continue;
    }
    if (v.tested) ++s.tested;
    if (v.unknown)
      ++s.unknown;
    else if (!v.real)
      ++s.noise;
    else
      ++(v.speedup > 1 ? s.faster : s.slower);
    ++s.ratios;
    log_speedup += std::log(v.speedup);
    log_ratio += std::log(v.ratio);
    directions.insert(r.point.better);
  }
  if (s.ratios > 0) s.geomean_speedup = std::exp(log_speedup / s.ratios);
  if (s.ratios > 0 && directions.size() == 1) s.geomean_ratio = std::exp(log_ratio / s.ratios);
  return s;
}

json row_json(const Row& r) {
  const bool both = r.a && r.b, comparable = both && r.verdict.comparable;
  const double speedup = r.verdict.speedup;
  return {
      {"point", r.point.key},
      {"key", r.point.key_fields},
      {"measurement", r.point.measurement},
      {"better", r.point.better == Better::lower ? "lower" : "higher"},
      {"in", both  ? "both"
             : r.a ? "A"
                   : "B"},
      {"a", side_json(r.a)},
      {"b", side_json(r.b)},
      {"ratio", comparable ? json(r.verdict.ratio) : json(nullptr)},
      {"speedup", comparable ? json(speedup) : json(nullptr)},
      {"direction", !comparable   ? json(nullptr)
                    : speedup > 1 ? json("faster")
                    : speedup < 1 ? json("slower")
                                  : json("same")},
      {"verdict", verdict_name(r)},
      {"work", both ? json{{"a", r.point.work}, {"b", r.b_work}} : json(nullptr)},
      {"tested", comparable && r.verdict.tested},
      {"interval",
       comparable && r.verdict.tested ? json{r.verdict.ci_lo, r.verdict.ci_hi} : json(nullptr)},
      {"confidence", comparable && r.verdict.tested ? json(r.verdict.confidence) : json(nullptr)},
      {"p_value", comparable && r.verdict.tested ? json(r.verdict.p_value) : json(nullptr)},
      {"note", r.verdict.note}};
}

json comparison_json(const Input& a, const Input& b, const std::vector<MachineLine>& machines,
                     const std::vector<Row>& rows, const Summary& s) {
  json m = json::array();
  for (const auto& l : machines)
    m.push_back({{"field", l.field}, {"a", l.a}, {"b", l.b}, {"differs", l.differs}});
  json results = json::array();
  for (const auto& r : rows) results.push_back(row_json(r));
  return {{"command", "compare"},
          {"version", report::version()},
          {"params", {{"a", input_json(a)}, {"b", input_json(b)}, {"rules", kRules}}},
          {"machines", m},
          {"results", results},
          {"summary",
           {{"points_in_both", s.both},
            {"faster", s.faster},
            {"slower", s.slower},
            {"within_noise", s.noise},
            {"unknown", s.unknown},
            {"tested", s.tested},
            {"tested_confidence", kConfidence},
            {"expected_false_differences", s.tested * (1 - kConfidence)},
            {"not_comparable", s.not_comparable},
            {"different_work", s.different_work},
            {"only_in_a", s.only_a},
            {"only_in_b", s.only_b},
            {"geomean_speedup", s.ratios ? json(s.geomean_speedup) : json(nullptr)},
            {"geomean_ratio", s.geomean_ratio ? json(*s.geomean_ratio) : json(nullptr)}}}};
}

}  // namespace compas::app::comparison
