// analysis: plain numbers in, plain structs out. Speedup, efficiency and Amdahl / Gustafson fits
// (scaling.hpp), performance models in Extra-P's normal form (model.hpp) and Extra-P's text input
// (extrap.hpp). Needs no other layer; docs/decisions/0007-study-and-report.md.
#pragma once

#include "compas/analysis/extrap.hpp"
#include "compas/analysis/model.hpp"
#include "compas/analysis/scaling.hpp"
