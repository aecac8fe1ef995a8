// port: the porting layer, the data structures a ported program keeps its data in, above the job
// (runtime). DistArray in 1-D and 2-D (dist_array.hpp) and 3-D (dist_array3.hpp) with halos,
// user partitions and aligned levels in 3-D (partition3.hpp), a level moved between process sets
// (redistribute3.hpp), 1-D user partitions (partition.hpp) and ghosted vectors (ghost.hpp),
// irregular access by global index (irregular.hpp: GatherPlan, scatter), update batches
// (update_batch.hpp, batch_slots.hpp, batch_inbox.hpp), transpose (transpose.hpp), SUMMA
// (summa.hpp), migrate (migrate.hpp) and channels (channel.hpp). docs/PORTING.md is the guide;
// docs/decisions/0005-porting-layer.md and 0018-port-layer.md say how it is built.
#pragma once

#include "compas/port/batch_inbox.hpp"
#include "compas/port/batch_slots.hpp"
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
