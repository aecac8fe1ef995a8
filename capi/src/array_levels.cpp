// 3-D levels: compas_array_create_split (a partition of the program's own, on the job or a group),
// compas_array_create_like (aligned coarsening, or a level onto a group), compas_array_redistribute
// and the grid and membership queries.
#include <string>
#include <utility>

#include "array_impl.hpp"
#include "types.hpp"

using namespace compas::capi;

namespace {

const char* const kDimName[3] = {"planes", "rows", "columns"};

// The partition the split points describe: counts[d] boundaries of dimension d, dimension 0's
// first. Counts below 2 are refused here, before anything collective; the boundaries themselves
// are checked by the array (against the domain, after the processes agreed on them).
compas::Partition3 partition_of(const std::int64_t* splits, const int* counts) {
  need(splits, "splits");
  need(counts, "counts");
  compas::Partition3 p;
  const std::int64_t* at = splits;
  for (int d = 0; d < 3; ++d) {
    if (counts[d] < 2)
      throw Error(COMPAS_ERR_ARG, "counts[" + std::to_string(d) +
                                      "] = " + std::to_string(counts[d]) + ": the " + kDimName[d] +
                                      " need 2 or more boundaries (the first index and the end)");
    p.splits[d].assign(at, at + counts[d]);
    at += counts[d];
  }
  return p;
}

// The live 3-D array behind a handle, as `what`.
compas_array* live3(const compas_array* a, const char* what) {
  compas_array* h = live(a, what);
  if (h->impl->dims != 3)
    throw Error(COMPAS_ERR_ARG, std::string(what) + " has " + std::to_string(h->impl->dims) +
                                    " dimensions: a 3-D array is needed");
  return h;
}

// The group handle (nullptr: none) of the runtime `rt`.
compas_group* group_of(compas_group* group, const compas_runtime* rt) {
  if (group == nullptr) return nullptr;
  compas_group* g = live(group, "group");
  if (g->rt != rt) throw Error(COMPAS_ERR_HANDLE, "group belongs to another runtime");
  return g;
}

}  // namespace

compas::Range3 compas::capi::coarse_domain(const compas::Range3& domain, index factor) {
  compas::Range3 c = domain;
  for (int d = 0; d < 3; ++d) {
    const compas::Range r = domain.dim(d);
    if (r.size() % factor != 0)
      throw Error(COMPAS_ERR_ARG, "factor " + std::to_string(factor) + ": the " + kDimName[d] +
                                      " [" + std::to_string(r.lo) + ", " + std::to_string(r.hi) +
                                      ") hold " + std::to_string(r.size()) +
                                      " cells, not a multiple of it");
    c.dim(d) = {r.lo, r.lo + r.size() / factor};
  }
  return c;
}

extern "C" int compas_array_create_split(compas_runtime* rt, compas_group* group, int type,
                                         const int64_t* lo, const int64_t* hi,
                                         const int64_t* splits, const int* counts,
                                         const compas_array_options* options, int layout,
                                         compas_array** array) {
  return guard("compas_array_create_split", [&] {
    need(array, "array");
    *array = nullptr;
    compas_runtime* r = live(rt, "rt");
    compas_group* g = group_of(group, r);
    with_type(type, [](auto) {});
    const compas::Layout l = layout_of(layout);
    need(lo, "lo");
    need(hi, "hi");
    compas_array_options o;
    compas_array_options_init(&o);
    if (options != nullptr) o = *options;
    compas::DistOptions3 d = options_3d(o);
    d.layout = l;
    if (splits != nullptr || counts != nullptr) d.partition = partition_of(splits, counts);
    const compas::Range3 domain{{lo[0], hi[0]}, {lo[1], hi[1]}, {lo[2], hi[2]}};
    auto impl = with_type(type, [&](auto t) -> std::unique_ptr<ArrayBase> {
      using T = decltype(t);
      if (g != nullptr) return std::make_unique<ArrayImpl<T, 3>>(g->group, domain, d, type);
      return std::make_unique<ArrayImpl<T, 3>>(*r->runtime, domain, d, type);
    });
    *array = track(new compas_array(r, std::move(impl)));
    (*array)->on = g;
  });
}

extern "C" int compas_array_create_like(const compas_array* like, int64_t factor,
                                        compas_group* group, compas_array** array) {
  return guard("compas_array_create_like", [&] {
    need(array, "array");
    *array = nullptr;
    compas_array* a = live3(like, "like");
    compas_group* g = group_of(group, a->rt);
    if (factor < 1) throw Error(COMPAS_ERR_ARG, "factor " + std::to_string(factor) + ": 1 or more");
    auto impl = a->impl->like(factor, g != nullptr ? &g->group : nullptr);
    *array = track(new compas_array(a->rt, std::move(impl)));
    (*array)->on = g != nullptr ? g : a->on;
  });
}

extern "C" int compas_array_redistribute(compas_array* from, compas_array* to) {
  return guard("compas_array_redistribute", [&] {
    compas_array* f = live3(from, "from");
    compas_array* t = live3(to, "to");
    if (f->impl->type != t->impl->type)
      throw Error(COMPAS_ERR_ARG, "from is of type " + std::to_string(f->impl->type) +
                                      ", to of type " + std::to_string(t->impl->type) +
                                      ": one element type is needed");
    check_collective_thread(*f->rt);
    f->impl->redistribute_to(*t->impl);
  });
}

extern "C" int compas_array_grid(const compas_array* array, int* grid) {
  return guard("compas_array_grid", [&] {
    const compas_array* a = live3(array, "array");
    need(grid, "grid");
    const std::array<int, 3> g = a->impl->grid();
    for (int d = 0; d < 3; ++d) grid[d] = g[d];
  });
}

extern "C" int compas_array_member(const compas_array* array, int* member) {
  return guard("compas_array_member", [&] {
    const compas_array* a = live(array, "array");
    need(member, "member");
    *member = a->impl->member() ? 1 : 0;
  });
}
