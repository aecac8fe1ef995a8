// compas compare's machine lines: each side's compas version, build and machine fields, flattened
// to "name: value" (caches as "L1d 32 KiB x2, ..."), side by side.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compare.hpp"
#include "compas/probes/membw.hpp"

namespace compas::app::comparison {

namespace {

bool is_cache_entry(const json& c) {
  auto integer = [&](const char* k) { return c.contains(k) && c[k].is_number_unsigned(); };
  return c.is_object() && integer("level") && integer("size_bytes") && integer("count") &&
         (!c.contains("type") || c["type"].is_string());
}

// "L1d 32 KiB x2"
std::string cache_text(const json& c) {
  const std::string type = c.value("type", "");
  return fmt::format("L{}{} {} x{}", c["level"].get<int>(),
                     type == "data"          ? "d"
                     : type == "instruction" ? "i"
                                             : "",
                     base::format_size(c["size_bytes"].get<std::size_t>()), c["count"].get<int>());
}

// "L1d 32 KiB x2, L2 1 MiB x2, ...", or the JSON when the list is not what machine_json writes.
std::string caches_text(const json& caches) {
  if (!std::all_of(caches.begin(), caches.end(), is_cache_entry)) return caches.dump();
  std::string out;
  for (const auto& c : caches) out += (out.empty() ? "" : ", ") + cache_text(c);
  return out.empty() ? "none" : out;
}

// One side's fields: at most kMachineText of names and values (a machine description is a few
// KiB), so that no nesting of long keys, however deep the reader lets it be, multiplies the
// input's size; the rest is counted.
constexpr std::size_t kMachineText = 1 << 20;

struct Fields {
  std::vector<std::pair<std::string, std::string>> lines;
  std::size_t bytes = 0;
  std::size_t left_out = 0;
};

std::size_t leaves(const json& v) {
  if (!v.is_object()) return 1;
  std::size_t n = 0;
  for (const auto& child : v) n += leaves(child);
  return n;
}

void flatten(const std::string& prefix, const json& v, Fields& out) {
  if (out.bytes > kMachineText) {
    out.left_out += leaves(v);
    return;
  }
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      flatten(prefix.empty() ? it.key() : prefix + "." + it.key(), it.value(), out);
    return;
  }
  out.lines.push_back({prefix, prefix == "caches" && v.is_array() ? caches_text(v) : text_of(v)});
  out.bytes += out.lines.back().first.size() + out.lines.back().second.size();
}

// How busy the machine was besides: a command's own machine_load, or a study's kernel runs' (the
// median and the most of any run). A whole column of "slower" may be this line.
std::string load_text(const json& doc) {
  const auto share = [](const json& o, const char* f) {
    return o.is_object() && o.contains(f) && o[f].is_number()
               ? fmt::format("{:.0f}%", 100 * o[f].get<double>())
               : std::string("-");
  };
  if (doc.contains("kernel_runs_load"))
    return share(doc["kernel_runs_load"], "median") + " (most " +
           share(doc["kernel_runs_load"], "max") + ")";
  if (doc.contains("run") && doc["run"].is_object() && doc["run"].contains("machine_load"))
    return share(doc["run"]["machine_load"], "other_processes_cpu_share");
  return "-";
}

std::map<std::string, std::string> machine_fields(const Input& in,
                                                  std::vector<std::string>& names) {
  Fields f;
  f.lines = {{"compas version", in.doc.contains("version") ? text_of(in.doc["version"]) : "-"}};
  if (in.doc.contains("run") && in.doc["run"].is_object())  // how each side was built
    for (const char* field : {"git_commit", "build", "libraries"})
      if (in.doc["run"].contains(field))
        flatten(std::string("run.") + field, in.doc["run"][field], f);
  if (in.doc.contains("machine")) flatten("", in.doc["machine"], f);
  f.lines.push_back({"busy: other processes' share of the CPU time", load_text(in.doc)});
  if (f.left_out > 0)
    f.lines.push_back({"(fields left out)", fmt::format("{} past {} of text", f.left_out,
                                                        base::format_size(kMachineText))});
  std::map<std::string, std::string> by_name;
  for (auto& [name, value] : f.lines)
    if (by_name.emplace(name, std::move(value)).second) names.push_back(name);
  return by_name;
}

}  // namespace

std::vector<MachineLine> machine_lines(const Input& a, const Input& b) {
  std::vector<std::string> names;  // in order of appearance, A's first
  const auto fa = machine_fields(a, names);
  std::vector<std::string> names_b;
  const auto fb = machine_fields(b, names_b);
  for (const auto& name : names_b)
    if (!fa.count(name)) names.push_back(name);
  auto find = [](const auto& fields, const std::string& name) -> std::string {
    const auto it = fields.find(name);
    return it == fields.end() ? "-" : it->second;
  };
  std::vector<MachineLine> lines;
  for (const auto& name : names) {
    MachineLine l{name, find(fa, name), find(fb, name), false};
    l.differs = l.a != l.b;
    lines.push_back(std::move(l));
  }
  return lines;
}

}  // namespace compas::app::comparison
