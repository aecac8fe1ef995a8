// GatherPlan's calls agreed before any value moves (irregular.hpp): the same operation on the
// same plan with spans of the right length on every process, or the same CollectiveError
// everywhere.
#include <algorithm>
#include <cstring>
#include <string>

#include "compas/port/irregular.hpp"

namespace compas::detail {

namespace {

struct CallWire {
  std::uint32_t call = 0;
  std::uint64_t plan = 0, elem = 0;
  char problem[160] = {};
};
// docs/decisions/0011-collectives-groups-irregular-channels.md says 184.
static_assert(std::is_trivially_copyable_v<CallWire> && sizeof(CallWire) == 184);

const char* name_of(std::uint32_t call) {
  switch (static_cast<IrregularCall>(call)) {
    case IrregularCall::gather:
      return "gather";
    case IrregularCall::scatter:
      return "scatter";
    case IrregularCall::fetch_add:
      return "fetch_add";
  }
  return "an unknown call";
}

std::string process(std::size_t r) {
  return "process " + std::to_string(r);
}

// What is wrong with the call as a whole, the same text on every process; "" when nothing.
std::string verdict(const std::vector<CallWire>& all) {
  for (std::size_t r = 1; r < all.size(); ++r) {
    if (all[r].call != all[0].call)
      return process(0) + " calls " + name_of(all[0].call) + ", " + process(r) + " calls " +
             name_of(all[r].call) + ": every process makes the same calls in the same order";
    if (all[r].plan != all[0].plan)
      return process(0) + " uses its plan #" + std::to_string(all[0].plan) + ", " + process(r) +
             " its plan #" + std::to_string(all[r].plan) +
             ": every process calls the plan made by the same collective";
    if (all[r].elem != all[0].elem)
      return process(0) + " passes elements of " + std::to_string(all[0].elem) + " bytes, " +
             process(r) + " of " + std::to_string(all[r].elem) + " bytes";
  }
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r].problem[0]) return process(r) + ": " + all[r].problem;
  return "";
}

}  // namespace

void agree_call(Runtime& rt, const IrregularPlan& plan, IrregularCall call, std::size_t elem,
                const std::string& problem) {
  rt.check_funneled("compas::GatherPlan", kFunneled);
  CallWire w;
  w.call = static_cast<std::uint32_t>(call);
  w.plan = plan.id;
  w.elem = elem;
  std::memcpy(w.problem, problem.data(), std::min(problem.size(), sizeof w.problem - 1));
  std::vector<CallWire> all(static_cast<std::size_t>(rt.processes()));
  if (all.size() == 1)
    all[0] = w;
  else
    rt.collectives().allgather(std::span<const CallWire>(&w, 1), std::span<CallWire>(all));
  if (const std::string msg = verdict(all); !msg.empty())
    throw CollectiveError(std::string("compas::GatherPlan::") + name_of(w.call) + ": " + msg);
}

}  // namespace compas::detail
