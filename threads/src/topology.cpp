#include "compas/threads/topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace compas::threads {

struct Topology::Impl {
  hwloc_topology_t topo = nullptr;
  ~Impl() {
    if (topo) hwloc_topology_destroy(topo);
  }
};

// The name of Topology's implementation, private to it, for this file's helpers.
struct detail::TopologyInternals {
  using Impl = Topology::Impl;
};
using TopologyImpl = detail::TopologyInternals::Impl;

namespace {

std::unique_ptr<TopologyImpl> make_impl() {
  auto impl = std::make_unique<TopologyImpl>();
  if (hwloc_topology_init(&impl->topo) != 0) throw std::runtime_error("hwloc_topology_init failed");
  return impl;
}

std::vector<int> bitmap_to_vector(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  int i;
  hwloc_bitmap_foreach_begin(i, set) out.push_back(i);
  hwloc_bitmap_foreach_end();
  return out;
}

int logical_ancestor(hwloc_topology_t topo, hwloc_obj_t obj, hwloc_obj_type_t type) {
  hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(topo, type, obj);
  return a ? static_cast<int>(a->logical_index) : 0;
}

}  // namespace

Topology::Topology(std::unique_ptr<Impl> impl, bool synthetic, std::string description)
    : impl_(std::move(impl)), synthetic_(synthetic), description_(std::move(description)) {
  read();
}
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::~Topology() = default;

namespace {

std::unique_ptr<TopologyImpl> load_host() {
  auto impl = make_impl();
  // Cache objects are wanted; I/O devices are not.
  hwloc_topology_set_io_types_filter(impl->topo, HWLOC_TYPE_FILTER_KEEP_NONE);
  if (hwloc_topology_load(impl->topo) != 0) throw std::runtime_error("hwloc_topology_load failed");
  return impl;
}

}  // namespace

Topology Topology::machine() {
  return Topology(load_host(), false, "host");
}

Topology Topology::host() {
  auto impl = load_host();
  // Keep only the PUs this process may run on (a launcher's slice, taskset, a batch system's
  // binding): placement must never pick a PU outside them.
  hwloc_bitmap_t bound = hwloc_bitmap_alloc();
  if (hwloc_get_cpubind(impl->topo, bound, HWLOC_CPUBIND_PROCESS) == 0 &&
      !hwloc_bitmap_iszero(bound) &&
      !hwloc_bitmap_isincluded(hwloc_topology_get_allowed_cpuset(impl->topo), bound))
    hwloc_topology_restrict(impl->topo, bound, 0);
  hwloc_bitmap_free(bound);
  return Topology(std::move(impl), false, "host");
}

Topology Topology::synthetic(const std::string& description) {
  auto impl = make_impl();
  if (hwloc_topology_set_synthetic(impl->topo, description.c_str()) != 0)
    throw std::invalid_argument("invalid synthetic topology '" + description +
                                "': expected an hwloc synthetic description such as "
                                "\"pack:2 numa:1 l3:1 core:8 pu:2\"");
  if (hwloc_topology_load(impl->topo) != 0)
    throw std::invalid_argument("hwloc could not load synthetic topology '" + description + "'");
  return Topology(std::move(impl), true, description);
}

void Topology::read() {
  hwloc_topology_t t = impl_->topo;
  sockets_ = std::max(1, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE));
  numa_nodes_ = std::max(1, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE));
  cores_ = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);

  const int npus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  pus_.clear();
  std::map<int, int> smt_seen;  // core -> PUs seen so far
  for (int i = 0; i < npus; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    Pu p;
    p.os_index = static_cast<int>(pu->os_index);
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pu);
    p.core = core ? static_cast<int>(core->logical_index) : i;  // no core level: PU is a core
    p.socket = logical_ancestor(t, pu, HWLOC_OBJ_PACKAGE);
    // NUMA nodes are memory children in hwloc 2: find the one whose cpuset covers this PU.
    hwloc_obj_t numa = nullptr;
    while ((numa = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, numa)) != nullptr)
      if (hwloc_bitmap_isset(numa->cpuset, pu->os_index)) break;
    p.numa = numa ? static_cast<int>(numa->logical_index) : 0;
    p.smt = smt_seen[p.core]++;
    pus_.push_back(p);
  }
  if (cores_ == 0) cores_ = npus;

  caches_.clear();
  const hwloc_obj_type_t kinds[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE,
                                    HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE};
  for (hwloc_obj_type_t kind : kinds) {
    const int n = hwloc_get_nbobjs_by_type(t, kind);
    if (n <= 0) continue;
    hwloc_obj_t c = hwloc_get_obj_by_type(t, kind, 0);
    CacheLevel level;
    level.level = static_cast<int>(c->attr->cache.depth);
    level.type = c->attr->cache.type == HWLOC_OBJ_CACHE_UNIFIED ? "unified"
                 : c->attr->cache.type == HWLOC_OBJ_CACHE_DATA  ? "data"
                                                                : "instruction";
    level.size_bytes = c->attr->cache.size;
    level.line_bytes = static_cast<int>(c->attr->cache.linesize);
    level.shared_by = std::max(1, hwloc_bitmap_weight(c->cpuset));
    level.count = n;
    caches_.push_back(level);
  }

  cpu_model_.clear();
  if (hwloc_obj_t pkg = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0)) {
    if (const char* m = hwloc_obj_get_info_by_name(pkg, "CPUModel")) cpu_model_ = m;
  }
  if (cpu_model_.empty()) {
    if (const char* m = hwloc_obj_get_info_by_name(hwloc_get_root_obj(t), "CPUModel"))
      cpu_model_ = m;
  }
  if (cpu_model_.empty()) cpu_model_ = synthetic_ ? "synthetic" : "unknown";
}

std::uint64_t Topology::cache_bytes(int level) const {
  for (const auto& c : caches_)
    if (c.level == level && c.type != "instruction") return c.size_bytes;
  return 0;
}

int Topology::find_pu(int os_index) const {
  for (std::size_t i = 0; i < pus_.size(); ++i)
    if (pus_[i].os_index == os_index) return static_cast<int>(i);
  return -1;
}

std::vector<int> Topology::bind_current_thread(int os_index) const {
  return bind_current_thread(std::vector<int>{os_index});
}

std::vector<int> Topology::bind_current_thread(const std::vector<int>& os_indices) const {
  if (synthetic_)
    throw std::logic_error("cannot bind threads on synthetic topology '" + description_ + "'");
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  for (int i : os_indices) hwloc_bitmap_set(set, static_cast<unsigned>(i));
  const int rc = hwloc_set_cpubind(impl_->topo, set, HWLOC_CPUBIND_THREAD | HWLOC_CPUBIND_STRICT);
  hwloc_bitmap_free(set);
  (void)rc;  // the read-back below is the truth, whatever the call said
  return current_thread_binding();
}

std::vector<int> Topology::current_thread_binding() const {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  std::vector<int> out;
  if (hwloc_get_cpubind(impl_->topo, set, HWLOC_CPUBIND_THREAD) == 0) out = bitmap_to_vector(set);
  hwloc_bitmap_free(set);
  return out;
}

void* Topology::native_handle() const {
  return impl_->topo;
}

std::string hwloc_version() {
  return HWLOC_VERSION;
}

}  // namespace compas::threads
