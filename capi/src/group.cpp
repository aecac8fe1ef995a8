// compas_group_*: process groups (compas::split) and their collectives.
#include <string>
#include "collectives.hpp"

#include "handles.hpp"

using namespace compas::capi;

extern "C" int compas_group_split(compas_runtime* rt, int colour, int key, compas_group** group) {
  return guard("compas_group_split", [&] {
    need(group, "group");
    *group = nullptr;
    compas_runtime* r = live(rt, "rt");
    *group = track(new compas_group(r, compas::split(*r->runtime, colour, key)));
  });
}

extern "C" int compas_group_destroy(compas_group** group) {
  return guard("compas_group_destroy", [&] {
    need(group, "group");
    compas_group* g = live(*group, "group");
    int arrays = 0;  // the arrays on it (compas_array_create_split, _like) hold its address
    for (compas_child* c : g->rt->children)
      if (c->tag == compas::capi::Kind::array && static_cast<compas_array*>(c)->on == g) ++arrays;
    if (arrays > 0)
      throw Error(COMPAS_ERR_STATE,
                  std::to_string(arrays) + " array(s) lie on the group: destroy them before it");
    destroy(group, "group");
  });
}

extern "C" int compas_group_rank(const compas_group* group, int* rank) {
  return guard("compas_group_rank", [&] {
    need(rank, "rank");
    *rank = live(group, "group")->group.process();
  });
}

extern "C" int compas_group_size(const compas_group* group, int* size) {
  return guard("compas_group_size", [&] {
    need(size, "size");
    *size = live(group, "group")->group.processes();
  });
}

extern "C" int compas_group_barrier(compas_group* group) {
  return guard("compas_group_barrier", [&] { compas::barrier(live(group, "group")->group); });
}

extern "C" int compas_group_allreduce(compas_group* group, const void* in, void* out, int64_t count,
                                      int type, int op) {
  return guard("compas_group_allreduce",
               [&] { allreduce(live(group, "group")->group, in, out, count, type, op); });
}

extern "C" int compas_group_broadcast(compas_group* group, void* data, int64_t count, int type,
                                      int root) {
  return guard("compas_group_broadcast",
               [&] { broadcast(live(group, "group")->group, data, count, type, root); });
}

extern "C" int compas_group_exscan(compas_group* group, const void* in, void* out, int64_t count,
                                   int type, int op) {
  return guard("compas_group_exscan",
               [&] { exscan(live(group, "group")->group, in, out, count, type, op); });
}
