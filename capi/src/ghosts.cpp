// compas_ghosts_*: ghosted vectors (compas::Partition from this process's count and a
// compas::GhostPlan of its ghosts or of a CSR's columns; ghost.hpp).
#include <cstdint>
#include <span>
#include <string>

#include "counts.hpp"
#include "handles.hpp"
#include "types.hpp"

using namespace compas::capi;

namespace {

// The plan of `count` indices at `data` (int32 or int64, as index_type says), `columns`: a CSR's
// column list, rewritten in place. A bad index_type or count is agreed as the plan's problem
// (the same error on every process, not a process left waiting).
compas::GhostPlan make(compas_runtime* r, std::int64_t n_local, void* data, std::int64_t count,
                       int index_type, bool columns) {
  const compas::Partition d = compas::Partition::from_local(*r->runtime, n_local);
  const char* what = columns ? "cols" : "ghosts";
  std::string problem;
  std::size_t n = 0;
  if (index_type != COMPAS_INT32 && index_type != COMPAS_INT64)
    problem = "index_type " + std::to_string(index_type) +
              " is not allowed: COMPAS_INT32 (3) or COMPAS_INT64 (4)";
  else
    try {
      n = count_of(count, index_type == COMPAS_INT32 ? 4 : 8, data, what);
    } catch (const Error& e) {
      problem = e.what();
    }
  if (!problem.empty()) return compas::GhostPlan(d, std::span<const std::int64_t>(), problem);
  if (index_type == COMPAS_INT32) {
    auto* c = static_cast<std::int32_t*>(data);
    if (columns) return compas::GhostPlan::for_columns(d, std::span<std::int32_t>(c, n));
    return compas::GhostPlan(d, std::span<const std::int32_t>(c, n));
  }
  auto* c = static_cast<std::int64_t*>(data);
  if (columns) return compas::GhostPlan::for_columns(d, std::span<std::int64_t>(c, n));
  return compas::GhostPlan(d, std::span<const std::int64_t>(c, n));
}

int create(const char* call, compas_runtime* rt, std::int64_t n_local, void* data,
           std::int64_t count, int index_type, compas_ghosts** plan, bool columns) {
  return guard(call, [&] {
    need(plan, "plan");
    *plan = nullptr;
    compas_runtime* r = live(rt, "rt");
    check_collective_thread(*r);
    *plan = track(new compas_ghosts(r, make(r, n_local, data, count, index_type, columns)));
  });
}

template <class F>
int call_on(const char* call, compas_ghosts* plan, void* v, std::int64_t count, int type, F f) {
  return guard(call, [&] {
    compas_ghosts* g = live(plan, "plan");
    check_collective_thread(*g->rt);
    with_type(type, [&](auto t) {
      using T = decltype(t);
      f(g->plan, std::span<T>(static_cast<T*>(v), count_of(count, sizeof(T), v, "v")));
    });
  });
}

}  // namespace

extern "C" int compas_ghosts_create(compas_runtime* rt, int64_t n_local, const void* ghosts,
                                    int64_t count, int index_type, compas_ghosts** plan) {
  return create("compas_ghosts_create", rt, n_local, const_cast<void*>(ghosts), count, index_type,
                plan, false);
}

extern "C" int compas_ghosts_create_columns(compas_runtime* rt, int64_t n_local, void* cols,
                                            int64_t count, int index_type, compas_ghosts** plan) {
  return create("compas_ghosts_create_columns", rt, n_local, cols, count, index_type, plan, true);
}

extern "C" int compas_ghosts_destroy(compas_ghosts** plan) {
  return guard("compas_ghosts_destroy", [&] { destroy(plan, "plan"); });
}

extern "C" int compas_ghosts_sizes(const compas_ghosts* plan, int64_t* first, int64_t* n_owned,
                                   int64_t* n_ghosts) {
  return guard("compas_ghosts_sizes", [&] {
    const compas_ghosts* g = live(plan, "plan");
    if (first) *first = g->plan.owned().lo;
    if (n_owned) *n_owned = g->plan.owned_size();
    if (n_ghosts) *n_ghosts = g->plan.ghost_count();
  });
}

extern "C" int compas_ghosts_update(compas_ghosts* plan, void* v, int64_t count, int type) {
  return call_on("compas_ghosts_update", plan, v, count, type,
                 [](compas::GhostPlan& p, auto span) { p.update(span); });
}

extern "C" int compas_ghosts_accumulate(compas_ghosts* plan, void* v, int64_t count, int type) {
  return call_on("compas_ghosts_accumulate", plan, v, count, type,
                 [](compas::GhostPlan& p, auto span) { p.accumulate(span); });
}
