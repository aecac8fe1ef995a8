// Extra-P's JSON input format.
#include "compas/report/extrap_json.hpp"

namespace compas::report {

nlohmann::ordered_json extrap_json(const analysis::ExtrapData& data) {
  analysis::check_extrap(data);
  nlohmann::ordered_json j = {{"parameters", data.parameters},
                              {"measurements", nlohmann::ordered_json::object()}};
  for (const auto& s : data.series) {
    auto& list = j["measurements"][s.region][s.metric];
    list = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < data.points.size(); ++i)
      list.push_back({{"point", data.points[i]}, {"values", s.values[i]}});
  }
  return j;
}

}  // namespace compas::report
