// A region's summary as a report record.
#include "compas/perf/region.hpp"
#include "compas/report/report.hpp"

namespace compas::report {

json to_json(const perf::RegionSummary& s) {
  auto stat = [](const perf::Stat& st) {
    return json{{"min", st.min}, {"mean", st.mean}, {"max", st.max}, {"sum", st.sum}, {"n", st.n}};
  };
  json j;
  j["region"] = s.region;
  j["threads"] = s.threads;
  j["processes"] = s.processes;
  j["calls"] = stat(s.calls);
  j["seconds"] = stat(s.seconds);
  json c = json::object();
  for (const auto& [e, st] : s.counters) c[e] = stat(st);
  j["counters"] = c;
  json d = json::object();
  for (const auto& [k, v] : s.derived) d[k] = v;
  j["derived"] = d;
  return j;
}

}  // namespace compas::report
