// The checks and count exchanges behind the process-level collectives (collectives.hpp).
#include "compas/runtime/collectives.hpp"

#include "compas/base/hash.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <numeric>
#include <optional>
#include <string>

#include "compas/base/type_name.hpp"

namespace compas {

namespace detail {

namespace {

// What every process sends before the data of a call: fixed size, one small chunk per peer.
struct Wire {
  std::uint32_t call = 0;
  std::int32_t root = -1;
  std::uint64_t elem = 0, n = 0;
  std::uint64_t object = 0;  // CallArgs::object
  std::uint32_t same_n = 0;
  std::uint64_t type = 0, op = 0;             // base::type_id, 0 when not given
  char type_name[24] = {}, op_name[24] = {};  // for the message (cut)
  char problem[104] = {};
};
static_assert(std::is_trivially_copyable_v<Wire> &&
              sizeof(Wire) == 208);  // collectives.hpp says 208

const char* name_of(std::uint32_t call) {
  switch (static_cast<CollectiveCall>(call)) {
    case CollectiveCall::broadcast:
      return "broadcast";
    case CollectiveCall::allgather:
      return "allgather";
    case CollectiveCall::allgatherv:
      return "allgatherv";
    case CollectiveCall::alltoall:
      return "alltoall";
    case CollectiveCall::alltoallv:
      return "alltoallv";
    case CollectiveCall::gather:
      return "gather";
    case CollectiveCall::reduce:
      return "reduce";
    case CollectiveCall::allreduce:
      return "allreduce";
    case CollectiveCall::migrate:
      return "migrate";
    case CollectiveCall::update_flush:
      return "UpdateBatch::flush";
    case CollectiveCall::exscan:
      return "exscan";
    case CollectiveCall::update_make:
      return "UpdateBatch::UpdateBatch";
    case CollectiveCall::halo_exchange:
      return "DistArray::exchange_halos";
    case CollectiveCall::halo_accumulate:
      return "DistArray::accumulate_halos";
    case CollectiveCall::redist_from:
      return "redistribute (from)";
    case CollectiveCall::redist_to:
      return "redistribute (to)";
    case CollectiveCall::ghost_update:
      return "GhostPlan::update";
    case CollectiveCall::ghost_accumulate:
      return "GhostPlan::accumulate";
  }
  return "an unknown call";
}

// The kind of object a call is on (CallArgs::object numbers it).
const char* object_of(std::uint32_t call) {
  const auto c = static_cast<CollectiveCall>(call);
  if (c == CollectiveCall::update_flush) return "UpdateBatch";
  if (c == CollectiveCall::ghost_update || c == CollectiveCall::ghost_accumulate)
    return "GhostPlan";
  return "DistArray";
}

// "UpdateBatch::flush on UpdateBatch #3", or the call's name when it is on no object.
std::string call_text(const Wire& w) {
  std::string t = name_of(w.call);
  if (w.object == 0) return t;
  t += " on ";
  t += object_of(w.call);
  t += " #";
  t += std::to_string(w.object);
  return t;
}

bool has_root(std::uint32_t call) {
  const auto c = static_cast<CollectiveCall>(call);
  return c == CollectiveCall::broadcast || c == CollectiveCall::gather ||
         c == CollectiveCall::reduce;
}

template <std::size_t N>
void put_text(char (&to)[N], const std::string& text) {
  std::memcpy(to, text.data(), std::min(text.size(), N - 1));
}

Wire to_wire(const CallArgs& a) {
  Wire w;
  w.call = static_cast<std::uint32_t>(a.call);
  w.root = a.root;
  w.elem = a.elem;
  w.n = a.n;
  w.object = a.object;
  w.same_n = a.same_n ? 1 : 0;
  if (a.type) w.type = base::type_id(*a.type), put_text(w.type_name, base::type_name(*a.type));
  if (a.op) w.op = base::type_id(*a.op), put_text(w.op_name, base::type_name(*a.op));
  put_text(w.problem, a.problem);
  return w;
}

// Rank r's type or operator (`field`, given on both sides) differs from rank 0's: what is said.
template <class F, class N>
std::string differs_in(const Processes& ps, const std::vector<Wire>& all, F field, N name,
                       const char* what) {
  for (std::size_t r = 1; r < all.size(); ++r)
    if (field(all[r]) != 0 && field(all[0]) != 0 && field(all[r]) != field(all[0]))
      return ps.name(0) + " passes " + what + " " + name(all[0]) + ", " +
             ps.name(static_cast<int>(r)) + " " + what + " " + name(all[r]) +
             ": every process passes the same";
  return "";
}

// The first rank whose field differs from rank 0's, if any.
template <class F>
std::optional<std::size_t> differs(const std::vector<Wire>& all, F field) {
  for (std::size_t r = 1; r < all.size(); ++r)
    if (field(all[r]) != field(all[0])) return r;
  return std::nullopt;
}

// What every process passes for the root: in range and the same everywhere. "" when it does.
std::string root_verdict(const Processes& ps, const std::vector<Wire>& all) {
  const auto process = [&](std::size_t r) { return ps.name(static_cast<int>(r)); };
  const auto P = static_cast<std::int32_t>(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    const std::int32_t root = all[r].root;
    if (root >= 0 && root < P) continue;
    std::string msg = "root " + std::to_string(root) + " on " + process(r) + " is outside the " +
                      ps.scope() + ": " + ps.ranks() + " are 0.." + std::to_string(P - 1);
    const std::size_t other = r == 0 ? 1 : 0;
    if (other < all.size() && all[other].root != root)
      msg += " (" + process(other) + " passes root " + std::to_string(all[other].root) + ")";
    return msg;
  }
  if (const auto r = differs(all, [](const Wire& w) { return w.root; }))
    return process(0) + " passes root " + std::to_string(all[0].root) + ", " + process(*r) +
           " root " + std::to_string(all[*r].root) + ": every process passes the same root";
  return "";
}

// What is wrong with the call as a whole, the same text on every process; "" when nothing.
std::string verdict(const Processes& ps, const std::vector<Wire>& all) {
  const auto process = [&](std::size_t r) { return ps.name(static_cast<int>(r)); };
  if (const auto r = differs(all, [](const Wire& w) { return w.call; }))
    return process(0) + " calls " + call_text(all[0]) + ", " + process(*r) + " calls " +
           call_text(all[*r]) + ": every process makes the same calls in the same order";
  if (const auto r = differs(all, [](const Wire& w) { return w.object; }))
    return process(0) + " calls " + call_text(all[0]) + ", " + process(*r) + " calls " +
           call_text(all[*r]) +
           " (numbered in the order the processes made them): every process makes the same "
           "calls on the same objects in the same order";
  if (const auto r = differs(all, [](const Wire& w) { return w.elem; }))
    return process(0) + " passes elements of " + std::to_string(all[0].elem) + " bytes, " +
           process(*r) + " of " + std::to_string(all[*r].elem) + " bytes";
  auto type = [](const Wire& w) { return w.type; };
  auto type_name = [](const Wire& w) { return std::string(w.type_name); };
  if (std::string t = differs_in(ps, all, type, type_name, "elements of type"); !t.empty())
    return t;
  auto op = [](const Wire& w) { return w.op; };
  auto op_name = [](const Wire& w) { return std::string(w.op_name); };
  if (std::string o = differs_in(ps, all, op, op_name, "the operator"); !o.empty()) return o;
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r].problem[0]) return process(r) + ": " + all[r].problem;
  if (has_root(all[0].call))
    if (std::string root = root_verdict(ps, all); !root.empty()) return root;
  if (all[0].same_n)
    if (const auto r = differs(all, [](const Wire& w) { return w.n; }))
      return process(0) + " passes " + std::to_string(all[0].n) + " elements, " + process(*r) +
             " passes " + std::to_string(all[*r].n) + ": every process passes the same length";
  return "";
}

}  // namespace

namespace {

// What every process must pass alike, hashed: the call, its object, its element size and type, its
// operator, its root (calls with one) and its length (calls whose lengths must match).
std::uint64_t alike_key(const Wire& w) {
  std::uint64_t h = base::splitmix64_mix(0x636f6d7061730001ull ^ w.call);
  h = base::splitmix64_mix(h ^ w.object);
  h = base::splitmix64_mix(h ^ w.elem);
  h = base::splitmix64_mix(h ^ w.type);
  h = base::splitmix64_mix(h ^ w.op);
  if (has_root(w.call)) h = base::splitmix64_mix(h ^ static_cast<std::uint32_t>(w.root));
  if (w.same_n) h = base::splitmix64_mix(h ^ w.n);
  return h;
}

// Whether every process passes what must be alike (and none found its own arguments wrong): one
// allreduce of a hash and its complement (the largest key and the smallest, both mine when all
// are alike) and a flag. Every process, whatever call it is in, meets the others here first.
bool all_alike(const Processes& ps, const Wire& w) {
  const std::uint64_t key = alike_key(w);
  const bool wrong =
      w.problem[0] != 0 || (has_root(w.call) && (w.root < 0 || w.root >= ps.processes()));
  std::array<std::uint64_t, 3> v = {key, ~key, wrong ? 1u : 0u};
  ps.collectives().allreduce(std::span<std::uint64_t>(v), comm::Op::max);
  return v[0] == key && v[1] == ~key && v[2] == 0;
}

}  // namespace

std::vector<std::size_t> agree(const Processes& ps, const CallArgs& mine) {
  const Wire w = to_wire(mine);
  std::vector<Wire> all(static_cast<std::size_t>(ps.processes()));
  if (all.size() == 1) {
    all[0] = w;
  } else {
    // Alike and of one length: nothing more to learn (O(log P)). Otherwise every process's
    // record, for the lengths or for the same message on every process.
    if (w.same_n && all_alike(ps, w))
      return std::vector<std::size_t>(all.size(), static_cast<std::size_t>(w.n));
    if (!w.same_n) (void)all_alike(ps, w);  // every call meets the others in the same step first
    ps.collectives().allgather(std::span<const Wire>(&w, 1), std::span<Wire>(all));
  }
  if (const std::string msg = verdict(ps, all); !msg.empty())
    throw CollectiveError(std::string("compas::") + name_of(all[0].call) + ps.where() + ": " + msg,
                          ps.job_rank(0));
  std::vector<std::size_t> counts;
  for (const Wire& x : all) counts.push_back(x.n);
  return counts;
}

std::uint64_t object_number(ObjectKind kind, bool take) {
  static std::atomic<std::uint64_t> made[3] = {};
  auto& m = made[static_cast<int>(kind)];
  return 1 + (take ? m.fetch_add(1) : m.load());
}

std::byte* reduce_scratch(std::size_t bytes) {
  struct Free {
    void operator()(std::byte* p) const { ::operator delete (p, std::align_val_t{64}); }
  };
  thread_local std::unique_ptr<std::byte, Free> buffer;
  thread_local std::size_t have = 0;
  if (bytes > have) {
    buffer.reset();
    have = 0;
    buffer.reset(static_cast<std::byte*>(::operator new (bytes, std::align_val_t{64})));
    have = bytes;
  }
  return buffer.get();
}

std::string size_problem(const char* what, std::size_t have, std::size_t need) {
  if (have == need) return "";
  return std::string(what) + " holds " + std::to_string(have) + " elements, " +
         std::to_string(need) + " are needed";
}

std::string counts_problem(std::span<const std::size_t> counts, std::size_t send_size, int P) {
  if (counts.size() != static_cast<std::size_t>(P))
    return "send_counts holds " + std::to_string(counts.size()) + " counts, one per process (" +
           std::to_string(P) + ") is needed";
  const std::size_t sum = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  if (sum > send_size)
    return "send_counts add up to " + std::to_string(sum) + " elements, send holds " +
           std::to_string(send_size);
  return "";
}

std::vector<std::size_t> offsets_of(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> offsets(counts.size(), 0);
  for (std::size_t r = 1; r < counts.size(); ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  return offsets;
}

std::vector<std::size_t> exchange_counts(const Processes& ps,
                                         std::span<const std::size_t> send_counts) {
  const std::vector<std::size_t> ones(send_counts.size(), 1);
  std::vector<std::size_t> recv_counts(send_counts.size(), 0);
  exchange<std::size_t>(ps, send_counts, ones, recv_counts, ones);
  return recv_counts;
}

}  // namespace detail

}  // namespace compas
