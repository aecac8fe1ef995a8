// The C API's handles: each is a C++ object behind an opaque pointer, with a tag saying its kind.
// Every live handle is in a registry (address -> kind), so a destroyed or foreign pointer is
// found out without reading the memory it points to; the tag is cleared on destroy.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "compas/compas.h"
#include "compas/port/channel.hpp"
#include "compas/port/dist_array.hpp"
#include "compas/port/ghost.hpp"
#include "compas/runtime/group.hpp"
#include "compas/runtime/runtime.hpp"
#include "errors.hpp"

namespace compas::capi {

enum class Kind : std::uint32_t {
  runtime = 0x43525431,  // "CRT1"
  array = 0x43415231,
  exchange = 0x43455831,
  group = 0x43475231,
  channel = 0x43434831,
  ghosts = 0x43474831,
};
const char* name_of(Kind k);

struct Handle {
  explicit Handle(Kind k) : tag(k) {}
  virtual ~Handle() = default;
  Kind tag;
};

// Registry of live handles (thread-safe). track() returns h once it is registered; release()
// unregisters h, clears its tag and deletes it.
template <class H>
H* track(H* h);
void add_live(const Handle* h);
void release(Handle* h);
// The live handle at p of kind k: Error(COMPAS_ERR_HANDLE) naming `what` otherwise.
Handle* find_live(const void* p, Kind k, const char* what);

template <class H>
H* live(const H* p, const char* what) {
  return static_cast<H*>(find_live(p, H::kind, what));
}

// The untyped side of a DistArray<T, D> (array_impl.hpp).
class ArrayBase {
 public:
  virtual ~ArrayBase() = default;
  virtual void bounds(std::int64_t* lo, std::int64_t* hi, bool halos) const = 0;
  virtual void* data(std::int64_t* strides) = 0;
  virtual void exchange() = 0;
  virtual HaloExchange begin() = 0;
  virtual void accumulate() = 0;  // accumulate_halos()
  // 3-D arrays only (array_levels.cpp checks dims first): a new array made from this one
  // (compas_array_create_like), the transfer into another of the same type, the grid, membership.
  virtual std::unique_ptr<ArrayBase> like(index factor, Group* group) const = 0;
  virtual void redistribute_to(ArrayBase& to) = 0;
  virtual std::array<int, 3> grid() const = 0;
  virtual bool member() const = 0;
  int type = 0, dims = 0;
};

}  // namespace compas::capi

// A child of a runtime: destroyed by compas_finalize if the program did not.
struct compas_child : compas::capi::Handle {
  compas_child(compas::capi::Kind k, compas_runtime* owner);
  ~compas_child() override;
  compas_runtime* rt;
};

struct compas_runtime : compas::capi::Handle {
  static constexpr compas::capi::Kind kind = compas::capi::Kind::runtime;
  compas_runtime() : Handle(kind) {}
  std::unique_ptr<compas::Runtime> runtime;
  std::vector<compas_child*> children;  // in creation order
};

struct compas_exchange;

struct compas_array : compas_child {
  static constexpr compas::capi::Kind kind = compas::capi::Kind::array;
  compas_array(compas_runtime* owner, std::unique_ptr<compas::capi::ArrayBase> a)
      : compas_child(kind, owner), impl(std::move(a)) {}
  std::unique_ptr<compas::capi::ArrayBase> impl;
  compas_exchange* pending = nullptr;
  compas_group* on = nullptr;  // the group the array lies on (outlives it), or nullptr
};

struct compas_exchange : compas::capi::Handle {
  static constexpr compas::capi::Kind kind = compas::capi::Kind::exchange;
  explicit compas_exchange(compas_array* a) : Handle(kind), array(a) {}
  ~compas_exchange() noexcept override {}  // released after x.wait(): nothing left to wait for
  compas_array* array;
  compas::HaloExchange x;
};

struct compas_group : compas_child {
  static constexpr compas::capi::Kind kind = compas::capi::Kind::group;
  compas_group(compas_runtime* owner, compas::Group g)
      : compas_child(kind, owner), group(std::move(g)) {}
  compas::Group group;
};

struct compas_channel : compas_child {
  static constexpr compas::capi::Kind kind = compas::capi::Kind::channel;
  compas_channel(compas_runtime* owner, int t, std::size_t capacity, std::size_t max_count,
                 std::size_t elem, const std::type_info& elem_type)
      : compas_child(kind, owner),
        type(t),
        bytes(*owner->runtime, capacity, max_count, elem, elem_type) {}
  int type;
  compas::detail::ChannelBytes bytes;
};

struct compas_ghosts : compas_child {
  static constexpr compas::capi::Kind kind = compas::capi::Kind::ghosts;
  compas_ghosts(compas_runtime* owner, compas::GhostPlan p)
      : compas_child(kind, owner), plan(std::move(p)) {}
  compas::GhostPlan plan;
};

namespace compas::capi {

template <class H>
H* track(H* h) {
  add_live(h);
  return h;
}

// The runtime compas_init made in this process (one per process), or nullptr.
compas_runtime* current_runtime() noexcept;

// Completes an array's pending exchange and releases its handle.
void finish_pending(compas_array& a);

// Throws std::logic_error (COMPAS_ERR_STATE) unless the calling thread is the one that called
// compas_init, outside Runtime::run: what every collective call of the C API checks before it
// does anything, the destroys and compas_finalize included (their C++ destructors cannot refuse).
inline void check_collective_thread(const compas_runtime& rt) {
  rt.runtime->check_funneled("a collective call",
                             "make it from the thread that called compas_init");
}

// After a collective destroy: throws comm::CommError (COMPAS_ERR_COMM) when a window it destroyed
// could not meet the other processes (a timeout, a dead peer), which the C++ destructors cannot
// say themselves (the handle is gone all the same).
void check_teardown(compas_runtime& rt, const char* what);

// Destroys a child handle (collective for arrays, groups and channels) and clears *slot; the
// teardown's failure, if any, is the call's.
template <class H>
void destroy(H** slot, const char* what) {
  need(slot, what);
  H* h = live(*slot, what);
  compas_runtime& rt = *h->rt;
  check_collective_thread(rt);
  if constexpr (std::is_same_v<H, compas_array>) finish_pending(*h);
  rt.runtime->comm().take_teardown_failure();  // not this call's
  release(h);
  *slot = nullptr;
  check_teardown(rt, what);
}

}  // namespace compas::capi
