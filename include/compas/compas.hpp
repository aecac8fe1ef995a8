// compas: the hybrid threads x processes runtime. One include for user programs.
#pragma once

#include "compas/base/cxx_version.hpp"  // first: an older standard is said in words
#include "compas/comm/bootstrap.hpp"
#include "compas/comm/collectives.hpp"
#include "compas/comm/ucx.hpp"
#include "compas/comm/window.hpp"
#include "compas/perf/region.hpp"
#include "compas/port/channel.hpp"
#include "compas/port/dist_array.hpp"
#include "compas/port/dist_array3.hpp"
#include "compas/port/ghost.hpp"
#include "compas/port/irregular.hpp"
#include "compas/port/migrate.hpp"
#include "compas/port/partition.hpp"
#include "compas/port/partition3.hpp"
#include "compas/port/redistribute3.hpp"
#include "compas/port/summa.hpp"
#include "compas/port/transpose.hpp"
#include "compas/port/update_batch.hpp"
#include "compas/runtime/collectives.hpp"
#include "compas/runtime/group.hpp"
#include "compas/runtime/range.hpp"
#include "compas/runtime/runtime.hpp"
#include "compas/threads/barrier.hpp"
#include "compas/threads/ops.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/topology.hpp"
#include "compas/threads/wait.hpp"

namespace compas {
using threads::BarrierAlgorithm;
using threads::BindSpec;
using threads::Team;
using threads::TeamOptions;
using threads::ThreadCtx;
using threads::Topology;
using threads::WaitPolicy;
template <class T>
using Window = comm::Window<T>;
}  // namespace compas
