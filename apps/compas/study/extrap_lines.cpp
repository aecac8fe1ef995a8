// Extra-P JSON Lines of the study (extrap_lines.hpp).
#include "extrap_lines.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>
#include <set>

#include "compas/base/size.hpp"

namespace compas::app {

std::pair<std::string, double> size_parameter(const std::string& label) {
  const auto eq = label.find('=');
  if (eq == std::string::npos || eq == 0) return {"", 0};
  const std::string name = label.substr(0, eq), value = label.substr(eq + 1);
  try {
    return {name, static_cast<double>(base::parse_size(value, base::SizeSyntax::count, name))};
  } catch (const std::invalid_argument&) {
    return {"", 0};  // "class=W": a name, not a number
  }
}

namespace {

// The size's parameter name when every point has a numeric size and there are several.
std::string varying_size(const std::vector<ExtrapPoint>& points) {
  std::set<double> values;
  std::string name;
  for (const auto& p : points) {
    const auto [n, v] = size_parameter(p.size);
    if (n.empty() || (!name.empty() && n != name)) return "";
    name = n;
    values.insert(v);
  }
  return values.size() > 1 ? name : "";
}

std::string note_of(const std::map<std::string, int>& values) {
  std::string few;
  for (const auto& [name, n] : values)
    if (n < kExtrapValuesPerParameter)
      few += fmt::format("{}{} {}", few.empty() ? "" : ", ", name, n);
  if (few.empty()) return "";
  return fmt::format(
      "Extra-P wants at least {} values of each parameter for a model; this study has {} (the "
      "file pools with more runs, e.g. a larger --grid or more sizes)",
      kExtrapValuesPerParameter, few);
}

}  // namespace

ExtrapLines extrap_lines(const std::string& kernel, const std::vector<ExtrapPoint>& points) {
  ExtrapLines out;
  const std::string size = varying_size(points);
  std::set<std::string> labels;
  for (const auto& p : points) labels.insert(p.size);
  const bool by_callpath = size.empty() && labels.size() > 1;
  std::map<std::string, std::set<double>> seen;
  for (const auto& p : points) {
    if (p.oversubscribed || p.seconds.empty()) continue;
    nlohmann::ordered_json params = {{"processes", p.procs}, {"threads", p.threads}};
    if (!size.empty()) params[size] = size_parameter(p.size).second;
    for (auto it = params.begin(); it != params.end(); ++it)
      seen[it.key()].insert(it.value().get<double>());
    const nlohmann::ordered_json line = {{"params", params},
                                         {"callpath", by_callpath ? kernel + "/" + p.size : kernel},
                                         {"metric", "time_per_" + p.unit},
                                         {"value", p.seconds}};
    out.text += line.dump() + "\n";
  }
  for (const auto& [name, v] : seen) out.values[name] = static_cast<int>(v.size());
  out.note = note_of(out.values);
  return out;
}

}  // namespace compas::app
