// base: what several layers need, once. Machine primitives (machine.hpp: the pause of a spin
// loop, futex waits and wakes), the COMPAS_* environment (env.hpp), numbers and sizes as the
// command line takes them (number.hpp, size.hpp), what memory the host can give (memory.hpp),
// memory granules and buffers (pages.hpp), children and their supervision (spawn.hpp,
// stop_schedule.hpp, children.hpp, abort_notice.hpp), type names and ids (type_name.hpp),
// splitmix64 (hash.hpp), median and spread (statistics.hpp), instruction sets (isa.hpp), store
// kinds (stores.hpp), other processes' CPU load (cpu_load.hpp), the C++20 check
// (cxx_version.hpp). Needs no other layer; docs/decisions/0001-layers.md.
#pragma once

#include "compas/base/abort_notice.hpp"
#include "compas/base/children.hpp"
#include "compas/base/cpu_load.hpp"
#include "compas/base/cxx_version.hpp"
#include "compas/base/env.hpp"
#include "compas/base/hash.hpp"
#include "compas/base/isa.hpp"
#include "compas/base/machine.hpp"
#include "compas/base/memory.hpp"
#include "compas/base/number.hpp"
#include "compas/base/pages.hpp"
#include "compas/base/size.hpp"
#include "compas/base/spawn.hpp"
#include "compas/base/statistics.hpp"
#include "compas/base/stop_schedule.hpp"
#include "compas/base/stores.hpp"
#include "compas/base/type_name.hpp"
