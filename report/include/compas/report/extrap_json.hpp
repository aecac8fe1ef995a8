// Measurements in Extra-P's JSON input format (the text format: compas/analysis/extrap.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include "compas/analysis/extrap.hpp"

namespace compas::report {

// {"parameters": [...], "measurements": {region: {metric: [{"point": [...], "values": [...]}]}}}.
// Same checks as analysis::extrap_text (std::invalid_argument naming what Extra-P could not read).
nlohmann::ordered_json extrap_json(const analysis::ExtrapData& data);

}  // namespace compas::report
