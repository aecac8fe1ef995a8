// threads: the team of one process. The machine as hwloc sees it (topology.hpp), which PU each
// thread runs on (placement.hpp, domain.hpp), the pinned team (team.hpp), waits (wait.hpp),
// barriers (barrier.hpp), team collectives' operators (ops.hpp) and what the layer costs
// (activity.hpp). Sits on base; docs/decisions/0004-barriers.md, 0010-runtime-placement-openmp.md.
#pragma once

#include "compas/threads/activity.hpp"
#include "compas/threads/barrier.hpp"
#include "compas/threads/domain.hpp"
#include "compas/threads/ops.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/topology.hpp"
#include "compas/threads/wait.hpp"
