#include "study_load.hpp"

#include <fmt/format.h>

namespace compas::app {

namespace {

const report::json* machine_load(const report::json& raw) {
  if (!raw.contains("run") || !raw["run"].is_object()) return nullptr;
  const auto it = raw["run"].find("machine_load");
  if (it == raw["run"].end() || !it->is_object()) return nullptr;
  return &*it;
}

}  // namespace

double busy_share(const report::json& raw) {
  const report::json* l = machine_load(raw);
  return l ? l->value("other_processes_cpu_share", 0.0) : 0.0;
}

std::string busy_note(const report::json& raw, const std::string& what) {
  const double share = busy_share(raw);
  if (share < kBusyShare) return "";
  const report::json* l = machine_load(raw);
  return fmt::format(
      "**Busy machine:** while {} measured, other processes used {:.0f}% of the machine's CPU "
      "time (the hypervisor took {:.0f}%): the figures below may be low, and what is judged "
      "against them with them. Measure again on a quiet machine to cite them.\n\n",
      what, 100 * share, 100 * l->value("steal_share", 0.0));
}

std::string busy_stream_caveat(double share) {
  if (share < kBusyShare) return "";
  return fmt::format(
      " (the stream was measured while other processes used {:.0f}% of the machine's CPU time: "
      "its bandwidth may be low, and this judgement with it)",
      100 * share);
}

}  // namespace compas::app
