// compas compare's machine lines: each side's compas version, build and machine fields, flattened
// to "name: value" (caches as "L1d 32 KiB x2, ..."), side by side.
#include <fmt/core.h>

#include <algorithm>
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

void flatten(const std::string& prefix, const json& v,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      flatten(prefix.empty() ? it.key() : prefix + "." + it.key(), it.value(), out);
    return;
  }
  out.push_back({prefix, prefix == "caches" && v.is_array() ? caches_text(v) : text_of(v)});
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

std::vector<std::pair<std::string, std::string>> machine_fields(const Input& in) {
  std::vector<std::pair<std::string, std::string>> out = {
      {"compas version", in.doc.contains("version") ? text_of(in.doc["version"]) : "-"}};
  if (in.doc.contains("run") && in.doc["run"].is_object())  // how each side was built
    for (const char* f : {"git_commit", "build", "libraries"})
      if (in.doc["run"].contains(f)) flatten(std::string("run.") + f, in.doc["run"][f], out);
  if (in.doc.contains("machine")) flatten("", in.doc["machine"], out);
  out.push_back({"busy: other processes' share of the CPU time", load_text(in.doc)});
  return out;
}

}  // namespace

std::vector<MachineLine> machine_lines(const Input& a, const Input& b) {
  const auto fa = machine_fields(a), fb = machine_fields(b);
  std::vector<std::string> names;
  for (const auto* f : {&fa, &fb})
    for (const auto& [name, value] : *f)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  auto find = [](const auto& fields, const std::string& name) -> std::string {
    for (const auto& [n, v] : fields)
      if (n == name) return v;
    return "-";
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
