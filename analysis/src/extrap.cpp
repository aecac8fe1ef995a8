// Extra-P's text and JSON input formats (extrap.hpp). The rules follow Extra-P's
// docs/file-formats.md; where its reader (extrap/fileio/file_reader/text_file_reader.py) would
// read something other than what was meant, the writer refuses the data instead.
#include "compas/analysis/extrap.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

namespace compas::analysis {
namespace {

// Extra-P's text reader stops at more parameters than this.
constexpr std::size_t max_parameters = 4;

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("Extra-P data: " + what);
}

bool control_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

// The reader folds every whitespace run to one space and trims the line, so only names without
// tabs, line breaks, doubled or outer spaces read back as written.
void check_name(const std::string& name, const char* what) {
  if (name.empty()) fail(std::string(what) + " name is empty");
  for (char c : name)
    if (control_char(c)) fail(std::string(what) + " name '" + name + "' has a control character");
  if (name.front() == ' ' || name.back() == ' ' || name.find("  ") != std::string::npos)
    fail(std::string(what) + " name '" + name + "' has outer or doubled spaces");
}

void check_parameters(const std::vector<std::string>& parameters) {
  if (parameters.empty() || parameters.size() > max_parameters)
    fail(std::to_string(parameters.size()) + " parameters: Extra-P reads 1 to 4");
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const auto& p = parameters[i];
    check_name(p, "parameter");
    if (p.find(' ') != std::string::npos) fail("parameter name '" + p + "' has a space");
    if (std::find(parameters.begin(), parameters.begin() + i, p) != parameters.begin() + i)
      fail("parameter '" + p + "' is given twice");
  }
}

void check_points(const ExtrapData& d) {
  if (d.points.empty()) fail("no point");
  std::set<std::vector<double>> seen;
  for (const auto& pt : d.points) {
    if (pt.size() != d.parameters.size())
      fail("a point has " + std::to_string(pt.size()) + " coordinates for " +
           std::to_string(d.parameters.size()) + " parameters");
    for (double c : pt)
      if (!std::isfinite(c)) fail("a coordinate is not finite");
    if (!seen.insert(pt).second) fail("a point is given twice");
  }
}

void check_region(const std::string& region) {
  check_name(region, "region");
  for (std::size_t at = 0;;) {
    const auto arrow = region.find("->", at);
    const auto level = region.substr(at, arrow == std::string::npos ? arrow : arrow - at);
    if (level.empty()) fail("region '" + region + "' has an empty call-path level");
    if (arrow == std::string::npos) break;
    at = arrow + 2;
  }
}

void check_series(const ExtrapData& d) {
  if (d.series.empty()) fail("no series");
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& s : d.series) {
    check_region(s.region);
    check_name(s.metric, "metric");
    if (!seen.insert({s.region, s.metric}).second)
      fail("region '" + s.region + "' metric '" + s.metric + "' is given twice");
    if (s.values.size() != d.points.size())
      fail("region '" + s.region + "' metric '" + s.metric + "' has values for " +
           std::to_string(s.values.size()) + " of " + std::to_string(d.points.size()) + " points");
    for (const auto& reps : s.values) {
      if (reps.empty()) fail("region '" + s.region + "' has a point without a value");
      for (double v : reps)
        if (!std::isfinite(v)) fail("region '" + s.region + "' has a value that is not finite");
    }
  }
}

void check_all(const ExtrapData& d) {
  check_parameters(d.parameters);
  check_points(d);
  check_series(d);
}

// NUMBER of the documented grammar: ["-" / "+"] 1*DIGIT ["." *DIGIT], no exponent. Fixed notation
// with the fewest digits that read back to the same double.
std::string number(double v) {
  char buf[1024];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

std::string join_numbers(const std::vector<double>& values) {
  std::string s;
  for (double v : values) {
    if (!s.empty()) s += ' ';
    s += number(v);
  }
  return s;
}

std::string points_line(const ExtrapData& d) {
  std::string s = "POINTS";
  for (const auto& pt : d.points) s += " (" + join_numbers(pt) + ")";
  return s + "\n";
}

std::vector<std::string> metrics_in_order(const ExtrapData& d) {
  std::vector<std::string> metrics;
  for (const auto& s : d.series)
    if (std::find(metrics.begin(), metrics.end(), s.metric) == metrics.end())
      metrics.push_back(s.metric);
  return metrics;
}

std::string metric_block(const ExtrapData& d, const std::string& metric) {
  std::string out = "\nMETRIC " + metric + "\n";
  for (const auto& s : d.series) {
    if (s.metric != metric) continue;
    out += "REGION " + s.region + "\n";
    for (const auto& reps : s.values) out += "DATA " + join_numbers(reps) + "\n";
  }
  return out;
}

// ---- reading ----

struct Line {
  std::size_t number = 0;
  std::string keyword;
  std::string value;  // whitespace runs folded to one space, trimmed
};

[[noreturn]] void fail_at(std::size_t line, const std::string& what) {
  fail("line " + std::to_string(line) + ": " + what);
}

bool space(char c) {
  return c == ' ' || c == '\t';
}

std::string fold_spaces(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (space(c)) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// nothing for blank and comment lines
std::optional<Line> split_line(std::string_view raw, std::size_t number) {
  if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  if (raw.find_first_not_of(" \t") == std::string_view::npos) return std::nullopt;
  if (raw.front() == '#') return std::nullopt;
  if (space(raw.front())) fail_at(number, "a line must start with a section name, not a space");
  const auto end = std::min(raw.find_first_of(" \t"), raw.size());
  Line l{number, std::string(raw.substr(0, end)), fold_spaces(raw.substr(end))};
  if (l.value.empty()) fail_at(number, l.keyword + " without content");
  return l;
}

std::optional<double> parse_number(std::string_view s) {
  std::size_t i = 0;
  const bool minus = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) ++i;
  const std::size_t digits = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == digits) return std::nullopt;
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));) ++i;
  if (i != s.size()) return std::nullopt;
  double v = 0;
  const auto body = s.substr(digits);
  if (std::from_chars(body.data(), body.data() + body.size(), v).ec != std::errc()) return {};
  return minus ? -v : v;
}

double number_at(std::string_view s, const Line& l) {
  const auto v = parse_number(s);
  if (!v)
    fail_at(l.number, "'" + std::string(s) + "' is not a NUMBER (digits, one '.', no exponent)");
  return *v;
}

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at <= s.size();) {
    const auto end = std::min(s.find(' ', at), s.size());
    out.emplace_back(s.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

std::vector<double> numbers(std::string_view s, const Line& l) {
  std::vector<double> out;
  for (const auto& w : words(s)) out.push_back(number_at(w, l));
  return out;
}

// A NUMBER token from s[at] up to a space or parenthesis.
double coordinate_token(std::string_view s, std::size_t& at, const Line& l) {
  const auto end = std::min(s.find_first_of(" ()", at), s.size());
  const double v = number_at(s.substr(at, end - at), l);
  at = end;
  return v;
}

// Point = "(" Coordinate *(SPACE Coordinate) ")", Coordinate = ["("] NUMBER [")"]; s[at] == '('.
std::vector<double> point_in_parens(std::string_view s, std::size_t& at, const Line& l) {
  std::vector<double> pt;
  for (++at;;) {
    while (at < s.size() && s[at] == ' ') ++at;
    if (at == s.size()) fail_at(l.number, "a point's '(' is not closed");
    if (s[at] == ')') break;
    const bool own = s[at] == '(';
    at += own ? 1 : 0;
    pt.push_back(coordinate_token(s, at, l));
    if (own && (at == s.size() || s[at++] != ')'))
      fail_at(l.number, "a coordinate's '(' is not closed");
  }
  ++at;
  return pt;
}

std::vector<std::vector<double>> parse_points(const Line& l, std::size_t parameters) {
  std::vector<std::vector<double>> out;
  const std::string_view s = l.value;
  for (std::size_t at = 0; at < s.size();) {
    if (s[at] == ' ') {
      ++at;
    } else if (s[at] == '(') {
      out.push_back(point_in_parens(s, at, l));
    } else {
      if (parameters != 1) fail_at(l.number, "points need parentheses with several parameters");
      const auto end = std::min(s.find(' ', at), s.size());
      out.push_back({number_at(s.substr(at, end - at), l)});
      at = end;
    }
  }
  for (const auto& pt : out)
    if (pt.size() != parameters)
      fail_at(l.number, "a point has " + std::to_string(pt.size()) + " coordinates for " +
                            std::to_string(parameters) + " parameters");
  return out;
}

// The state of reading: which section may come next, and the series being filled.
class TextReader {
 public:
  void line(const Line& l) {
    if (l.keyword == "PARAMETER") return parameter(l);
    if (l.keyword == "POINTS") return points(l);
    if (l.keyword == "REGION") return region(l);
    if (l.keyword == "METRIC") return metric(l);
    if (l.keyword == "DATA") return data_line(l);
    fail_at(l.number, "unknown section '" + l.keyword + "'");
  }

  ExtrapData finish(std::size_t last_line) {
    close_series(last_line);
    if (region_ && !region_has_data_) fail_at(last_line, "REGION " + *region_ + " has no DATA");
    if (data_.parameters.empty()) fail("no PARAMETER line");
    if (data_.points.empty()) fail("no POINTS line");
    if (data_.series.empty()) fail("no DATA line");
    return std::move(data_);
  }

 private:
  void parameter(const Line& l) {
    if (!data_.points.empty()) fail_at(l.number, "PARAMETER after POINTS");
    for (const auto& name : words(l.value)) {
      if (std::find(data_.parameters.begin(), data_.parameters.end(), name) !=
          data_.parameters.end())
        fail_at(l.number, "parameter '" + name + "' is given twice");
      data_.parameters.push_back(name);
    }
    if (data_.parameters.size() > max_parameters)
      fail_at(l.number, "more than 4 parameters: Extra-P's reader takes at most 4");
  }

  void points(const Line& l) {
    if (data_.parameters.empty()) fail_at(l.number, "POINTS before PARAMETER");
    if (measuring_) fail_at(l.number, "POINTS after REGION, METRIC or DATA");
    for (auto& pt : parse_points(l, data_.parameters.size())) {
      for (const auto& known : data_.points)
        if (known == pt) fail_at(l.number, "a point is given twice");
      data_.points.push_back(std::move(pt));
    }
  }

  void region(const Line& l) {
    start_section(l);
    if (region_ && !region_has_data_) fail_at(l.number, "REGION " + *region_ + " has no DATA");
    region_ = l.value;
    region_has_data_ = false;
  }

  void metric(const Line& l) {
    start_section(l);
    metric_ = l.value;
  }

  void data_line(const Line& l) {
    if (!region_) fail_at(l.number, "DATA before any REGION");
    if (!open_) open_series(l);
    auto& s = data_.series.back();
    if (s.values.size() == data_.points.size())
      fail_at(l.number,
              "more DATA lines than the " + std::to_string(data_.points.size()) + " points");
    s.values.push_back(numbers(l.value, l));
    region_has_data_ = true;
  }

  void start_section(const Line& l) {
    if (data_.points.empty()) fail_at(l.number, l.keyword + " before POINTS");
    close_series(l.number);
    measuring_ = true;
  }

  void open_series(const Line& l) {
    for (const auto& s : data_.series)
      if (s.region == *region_ && s.metric == metric_)
        fail_at(l.number, "region '" + *region_ + "' metric '" + metric_ + "' is given twice");
    data_.series.push_back({*region_, metric_, {}});
    open_ = true;
  }

  // Each DATA line belongs to one point by its order, so a series must have one per point.
  void close_series(std::size_t line) {
    if (!open_) return;
    const auto& s = data_.series.back();
    if (s.values.size() != data_.points.size())
      fail_at(line, std::to_string(s.values.size()) + " DATA lines for region '" + s.region +
                        "' metric '" + s.metric + "', one per point (" +
                        std::to_string(data_.points.size()) + ") are needed");
    open_ = false;
  }

  ExtrapData data_;
  std::optional<std::string> region_;
  std::string metric_;  // the documented default when no METRIC line comes first
  bool region_has_data_ = false;
  bool measuring_ = false;
  bool open_ = false;
};

}  // namespace

std::string extrap_text(const ExtrapData& data) {
  check_all(data);
  std::string out = "PARAMETER";
  for (const auto& p : data.parameters) out += " " + p;
  out += '\n';
  out += points_line(data);
  for (const auto& metric : metrics_in_order(data)) out += metric_block(data, metric);
  return out;
}

ExtrapData parse_extrap_text(std::string_view text) {
  TextReader reader;
  std::size_t number = 0;
  for (std::size_t at = 0; at < text.size();) {
    const auto end = std::min(text.find('\n', at), text.size());
    if (const auto l = split_line(text.substr(at, end - at), ++number)) reader.line(*l);
    at = end + 1;
  }
  return reader.finish(number);
}

void check_extrap(const ExtrapData& data) {
  check_all(data);
}

}  // namespace compas::analysis
