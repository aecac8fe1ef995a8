// The registry of live handles and the runtime's list of children.
#include "handles.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace compas::capi {
namespace {

std::mutex registry_mutex;
std::unordered_map<const void*, Kind>& registry() {
  static auto* r = new std::unordered_map<const void*, Kind>;  // outlives static destructors
  return *r;
}

}  // namespace

const char* name_of(Kind k) {
  switch (k) {
    case Kind::runtime:
      return "compas_runtime";
    case Kind::array:
      return "compas_array";
    case Kind::exchange:
      return "compas_exchange";
    case Kind::group:
      return "compas_group";
    case Kind::channel:
      return "compas_channel";
    case Kind::ghosts:
      return "compas_ghosts";
  }
  return "handle";
}

void add_live(const Handle* h) {
  std::lock_guard lock(registry_mutex);
  registry()[h] = h->tag;
}

void release(Handle* h) {
  {
    std::lock_guard lock(registry_mutex);
    registry().erase(h);
  }
  h->tag = Kind{};
  delete h;
}

void finish_pending(compas_array& a) {
  if (a.pending == nullptr) return;
  compas_exchange* x = std::exchange(a.pending, nullptr);
  x->x.wait();
  release(x);
}

void check_teardown(compas_runtime& rt, const char* what) {
  const std::string failure = rt.runtime->comm().take_teardown_failure();
  if (!failure.empty())
    throw comm::CommError(std::string(what) + " destroyed without every process: " + failure);
}

Handle* find_live(const void* p, Kind k, const char* what) {
  if (p == nullptr) throw Error(COMPAS_ERR_HANDLE, std::string(what) + " is NULL");
  std::optional<Kind> found;
  {
    std::lock_guard lock(registry_mutex);
    auto it = registry().find(p);
    if (it != registry().end()) found = it->second;
  }
  if (!found)
    throw Error(COMPAS_ERR_HANDLE, std::string(what) + " is not a live " + name_of(k) +
                                       " (destroyed, finalized or never made)");
  if (*found != k)
    throw Error(COMPAS_ERR_HANDLE,
                std::string(what) + " is a " + name_of(*found) + ", not a " + name_of(k));
  auto* h = static_cast<Handle*>(const_cast<void*>(p));
  if (h->tag != k) throw Error(COMPAS_ERR_HANDLE, std::string(what) + " has a damaged tag");
  return h;
}

}  // namespace compas::capi

compas_child::compas_child(compas::capi::Kind k, compas_runtime* owner) : Handle(k), rt(owner) {
  rt->children.push_back(this);
}

compas_child::~compas_child() {
  auto& c = rt->children;
  c.erase(std::remove(c.begin(), c.end(), this), c.end());
}
