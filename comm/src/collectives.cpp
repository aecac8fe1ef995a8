// Process collectives over chunked, acknowledged channels through one scratch window (see
// collectives.hpp for the protocol and the algorithms).
//
// Why the schedules cannot deadlock: every chunk is sent and received at the same point of both
// processes' sequences of (call, phase, step). Within a step a process issues its sends before
// its receives (or, in a broadcast, receives from its parent before sending on, which only
// chains towards the root). A send waits only for the acknowledgement of the chunk kSlots earlier
// on the same channel, which the receiver gave at a strictly earlier step; a receive waits only
// for a send of the same step. Nothing waits for the future, so every step completes.
#include "compas/comm/collectives.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>

#include "collectives_channel.hpp"
#include "collectives_ops.hpp"
#include "compas/base/type_name.hpp"
#include "compas/comm/window.hpp"
#include "internals.hpp"

namespace compas::comm {

using detail::binomial;
using detail::combine;
using detail::Kind;
using detail::Phase;
using detail::type_code;

namespace {

constexpr std::size_t kAutoScratchBytes = 4u << 20;
constexpr std::size_t kAutoSlotMin = 4096, kAutoSlotMax = 256 * 1024;
constexpr std::size_t kMinSlotBytes = 128;
constexpr std::size_t kMaxSlotBytes = std::size_t{1} << 30;

const char* type_name(std::uint64_t code) {
  switch (code) {
    case 1:
      return "int32";
    case 2:
      return "int64";
    case 3:
      return "uint32";
    case 4:
      return "uint64";
    case 5:
      return "float";
    case 6:
      return "double";
    default:
      return "?";
  }
}

// " (type id 0x..., operator id 0x...)": call_id's halves.
std::string call_ids(std::uint64_t id) {
  char text[64];
  std::snprintf(text, sizeof text, " (type id %08llx, operator id %08llx)",
                static_cast<unsigned long long>(id >> 32),
                static_cast<unsigned long long>(id & 0xffffffffULL));
  return text;
}

}  // namespace

namespace detail {

std::string describe(std::uint32_t kind, std::uint32_t elem, std::uint64_t arg) {
  switch (static_cast<Kind>(kind)) {
    case Kind::broadcast:
      return "broadcast from root " + std::to_string(arg) + " of " + std::to_string(elem) +
             "-byte elements";
    case Kind::allreduce: {
      static const char* const phases[] = {"recursive doubling", "reduce-scatter",
                                           "allgather of the reduced blocks"};
      const std::uint64_t phase = arg >> 16;
      return std::string("allreduce(") + to_string(static_cast<Op>(arg & 0xff)) + ", " +
             type_name((arg >> 8) & 0xff) + ") in its " + (phase < 3 ? phases[phase] : "?") +
             " phase";
    }
    case Kind::allgather:
      return "allgather of " + std::to_string(elem) + "-byte elements";
    case Kind::alltoallv:
      return "alltoallv of " + std::to_string(elem) + "-byte elements";
    case Kind::allreduce_user:
      return "allreduce with a caller's operator on " + std::to_string(elem) + "-byte elements" +
             call_ids(arg);
    case Kind::exclusive_scan_user:
      return "exclusive_scan with a caller's operator on " + std::to_string(elem) +
             "-byte elements" + call_ids(arg);
    case Kind::agree_user:
      return "the check that every process passes the same call with a caller's operator";
    case Kind::barrier:
      return "barrier";
    case Kind::reduce:
      return std::string("reduce(") + to_string(static_cast<Op>(arg & 0xff)) + ", " +
             type_name((arg >> 8) & 0xff) + ") to root " + std::to_string(arg >> 16);
  }
  return "an unknown collective (kind " + std::to_string(kind) + ")";
}

std::uint64_t call_id(const std::type_info& type, const std::type_info& op) {
  const auto fold = [](std::uint64_t h) { return (h ^ (h >> 32)) & 0xffffffffULL; };
  return fold(base::type_id(type)) << 32 | fold(base::type_id(op));
}

std::string elements(std::uint64_t bytes, std::uint32_t elem) {
  if (elem == 0 || bytes % elem != 0) return std::to_string(bytes) + " bytes";
  return std::to_string(bytes / elem) + " elements (" + std::to_string(bytes) + " bytes)";
}

}  // namespace detail

std::string CollectivesImpl::out_of_step(const detail::Header& h, int src) {
  return "process collectives out of step" + where() + ": " + who(src) + " is in call #" +
         std::to_string(h.seq) + " (" + detail::describe(h.kind, h.elem, h.arg) + ") while " +
         who(me) + " is in call #" + std::to_string(seq) + " (" +
         detail::describe(kind, elem, arg) +
         "): every process must make the same collective calls, "
         "with the same root, operator and element type, in the same order";
}

namespace {

std::vector<std::vector<int>> checked_hosts(const std::vector<std::vector<int>>& hosts, int p) {
  std::vector<int> seen(static_cast<std::size_t>(p), 0);
  for (const auto& h : hosts) {
    if (h.empty()) throw std::invalid_argument("collectives: a host group is empty");
    for (int r : h) {
      if (r < 0 || r >= p)
        throw std::invalid_argument("collectives: host groups name rank " + std::to_string(r) +
                                    ", outside the job (ranks 0.." + std::to_string(p - 1) + ")");
      if (seen[static_cast<std::size_t>(r)]++)
        throw std::invalid_argument("collectives: rank " + std::to_string(r) +
                                    " is in more than one host group");
    }
  }
  for (int r = 0; r < p; ++r)
    if (!seen[static_cast<std::size_t>(r)])
      throw std::invalid_argument("collectives: rank " + std::to_string(r) +
                                  " is in no host group");
  return hosts;
}

}  // namespace

namespace detail {

// Binomial tree over virtual ranks 0..n-1 rooted at 0: the parent of v (or -1) and its children,
// larger subtrees first.
void binomial(int v, int n, int& parent, std::vector<int>& children) {
  parent = -1;
  int mask = 1;
  while (mask < n) {
    if (v & mask) {
      parent = v - mask;
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (v + mask < n) children.push_back(v + mask);
}

}  // namespace detail

const char* to_string(Op op) {
  switch (op) {
    case Op::sum:
      return "sum";
    case Op::min:
      return "min";
    case Op::max:
      return "max";
    case Op::prod:
      return "prod";
  }
  return "?";
}

BroadcastTree broadcast_tree(const std::vector<std::vector<int>>& hosts, int root, int rank) {
  int root_host = -1, my_host = -1;
  std::size_t my_index = 0;
  for (std::size_t h = 0; h < hosts.size(); ++h)
    for (std::size_t i = 0; i < hosts[h].size(); ++i) {
      if (hosts[h][i] == root) root_host = static_cast<int>(h);
      if (hosts[h][i] == rank) {
        my_host = static_cast<int>(h);
        my_index = i;
      }
    }
  if (root_host < 0)
    throw std::invalid_argument("broadcast_tree: root " + std::to_string(root) +
                                " is in no host group");
  if (my_host < 0)
    throw std::invalid_argument("broadcast_tree: rank " + std::to_string(rank) +
                                " is in no host group");
  const int nh = static_cast<int>(hosts.size());
  auto leader_index = [&](int h) -> std::size_t {
    if (h != root_host) return 0;
    const auto& g = hosts[static_cast<std::size_t>(h)];
    return static_cast<std::size_t>(std::find(g.begin(), g.end(), root) - g.begin());
  };
  auto leader = [&](int h) { return hosts[static_cast<std::size_t>(h)][leader_index(h)]; };

  BroadcastTree t;
  const auto& mine = hosts[static_cast<std::size_t>(my_host)];
  const int m = static_cast<int>(mine.size());
  const std::size_t li = leader_index(my_host);
  if (mine[li] == rank) {
    // Among host leaders, hosts numbered from the root's.
    const int v = (my_host - root_host + nh) % nh;
    int parent = -1;
    std::vector<int> children;
    binomial(v, nh, parent, children);
    if (parent >= 0) t.parent = leader((parent + root_host) % nh);
    for (int c : children) t.children.push_back(leader((c + root_host) % nh));
  }
  // Inside the host, members numbered from the leader's position.
  const int u = (static_cast<int>(my_index) - static_cast<int>(li) + m) % m;
  int parent = -1;
  std::vector<int> children;
  binomial(u, m, parent, children);
  auto member = [&](int w) {
    return mine[static_cast<std::size_t>((w + static_cast<int>(li)) % m)];
  };
  if (parent >= 0) t.parent = member(parent);
  for (int c : children) t.children.push_back(member(c));
  return t;
}

ProcessCollectives::ProcessCollectives(Comm& comm, CollectivesOptions options)
    : impl_(std::make_unique<Impl>()) {
  std::vector<int> everyone(static_cast<std::size_t>(comm.size()));
  for (std::size_t r = 0; r < everyone.size(); ++r) everyone[r] = static_cast<int>(r);
  impl_->setup(comm, std::move(everyone), options);
}

ProcessCollectives::ProcessCollectives(Comm& comm, std::vector<int> members,
                                       CollectivesOptions options)
    : impl_(std::make_unique<Impl>()) {
  detail::check_members(comm, members);
  impl_->setup(comm, std::move(members), options);
}

void CollectivesImpl::setup(Comm& c, std::vector<int> group, const CollectivesOptions& o) {
  comm = &c;
  members = std::move(group);
  p = static_cast<int>(members.size());
  me = static_cast<int>(std::find(members.begin(), members.end(), c.rank()) - members.begin());
  whole = p == c.size();  // every process, in rank order (group indices are job ranks)
  for (int g = 0; whole && g < p; ++g) whole = members[static_cast<std::size_t>(g)] == g;
  const auto& job_hosts = o.hosts.empty() ? c.hosts() : checked_hosts(o.hosts, c.size());
  hosts = whole ? job_hosts : detail::group_hosts(job_hosts, members);
  if (o.slot_bytes == 0) {
    const std::size_t share = kAutoScratchBytes / (kSlots * static_cast<std::size_t>(p));
    slot = std::clamp(share, kAutoSlotMin, kAutoSlotMax) / 64 * 64;
  } else {
    if (o.slot_bytes < kMinSlotBytes || o.slot_bytes > kMaxSlotBytes)
      throw std::invalid_argument("collectives: slot_bytes " + std::to_string(o.slot_bytes) +
                                  " is not allowed: 0 (automatic) or " +
                                  std::to_string(kMinSlotBytes) + ".." +
                                  std::to_string(kMaxSlotBytes));
    slot = o.slot_bytes / 64 * 64;
  }
  payload = slot - kHeaderBytes;
  small_bytes = o.allreduce_small_bytes;
  sent.assign(static_cast<std::size_t>(p), 0);
  received.assign(static_cast<std::size_t>(p), 0);
  stage.resize(kHeaderBytes + std::min(detail::kStageMaxBytes, payload));
  tmp.resize(payload);
  // Window creation is collective over the Comm: every process takes part, each sizing its
  // window for its own group (a group of one included).
  if (c.size() > 1)
    win = std::make_unique<WindowBytes>(c, static_cast<std::size_t>(p) * kSlots * slot,
                                        2 * static_cast<std::size_t>(p));
}

ProcessCollectives::~ProcessCollectives() = default;

Comm& ProcessCollectives::comm() {
  return *impl_->comm;
}
int ProcessCollectives::rank() const {
  return impl_->me;
}
int ProcessCollectives::size() const {
  return impl_->p;
}
const std::vector<int>& ProcessCollectives::members() const {
  return impl_->members;
}
std::size_t ProcessCollectives::slot_bytes() const {
  return impl_->slot;
}
const std::vector<std::vector<int>>& ProcessCollectives::hosts() const {
  return impl_->hosts;
}
void ProcessCollectives::barrier() {
  Impl& m = *impl_;
  detail::require_owner_thread(detail::Internals::comm(*m.comm), "comm::ProcessCollectives");
  if (m.whole) return m.comm->barrier();
  if (m.p == 1) return;
  m.run([&] {
    // Recursive doubling of nothing: every process hears from all others, in ceil(log2 p) rounds.
    m.begin(Kind::barrier, 1, 0);
    m.recursive_doubling(std::span<std::uint32_t>(), Op::max);
  });
}

void ProcessCollectives::broadcast_bytes(void* data, std::size_t bytes, int root,
                                         std::size_t elem) {
  Impl& m = *impl_;
  if (root < 0 || root >= m.p)
    throw std::invalid_argument("broadcast: root " + std::to_string(root) + " is outside the " +
                                (m.whole ? "job (ranks 0.." : "group (indices 0..") +
                                std::to_string(m.p - 1) + ")");
  if (m.p == 1) return;
  m.run([&] {
    m.begin(Kind::broadcast, elem, static_cast<std::uint64_t>(root));
    const BroadcastTree t = broadcast_tree(m.hosts, root, m.me);
    auto* buf = static_cast<std::byte*>(data);
    for (std::uint64_t j = 0, nc = m.chunks(bytes); j < nc; ++j) {
      if (t.parent >= 0) {
        const std::byte* at = m.receive(t.parent, bytes, j);
        if (const std::size_t len = m.chunk_len(bytes, j))
          std::memcpy(buf + static_cast<std::size_t>(j) * m.payload, at, len);
        m.release(t.parent);
      }
      for (int c : t.children) m.send(c, buf, bytes, j);
    }
  });
}

// MPICH's scheme (detail::Doubling): the extra processes fold into their neighbours, p2 processes
// double, the extras get the result back. Partners combine as op(lower ranks' value, higher ranks'
// value), so both compute the same bits.
template <class T>
void CollectivesImpl::recursive_doubling(std::span<T> v, Op op) {
  auto* buf = reinterpret_cast<std::byte*>(v.data());
  const std::size_t bytes = v.size_bytes();
  auto absorb = [&](int src, std::uint64_t j, const std::byte* at, bool src_first) {
    const std::size_t len = chunk_len(bytes, j);
    combine(reinterpret_cast<T*>(buf + static_cast<std::size_t>(j) * payload),
            reinterpret_cast<const T*>(at), len / sizeof(T), src_first, op);
    release(src);
  };
  const detail::Doubling d(p);
  if (d.folds(me)) {
    send_message(me + 1, buf, bytes);
  } else {
    if (d.absorbs(me))
      for (std::uint64_t j = 0, nc = chunks(bytes); j < nc; ++j)
        absorb(me - 1, j, receive(me - 1, bytes, j), true);
    const int vrank = d.vrank(me);
    for (int mask = 1; mask < d.p2; mask <<= 1) {
      const int vpartner = vrank ^ mask;
      const int partner = d.rank_of(vpartner);
      for (std::uint64_t j = 0, nc = chunks(bytes); j < nc; ++j) {
        send(partner, buf, bytes, j);
        absorb(partner, j, receive(partner, bytes, j), vpartner < vrank);
      }
    }
  }
  if (d.absorbs(me))
    send_message(me - 1, buf, bytes);
  else if (d.folds(me))
    receive_message(me + 1, buf, bytes);
}

// Block b of the vector is reduced at rank b, combining the P contributions in rank order
// (x0 op x1 op ... op xP-1, bitwise the serial left fold), then every block goes to everyone.
template <class T>
void CollectivesImpl::reduce_scatter_allgather(std::span<T> v, Op op) {
  const std::size_t n = v.size();
  const std::size_t q = n / static_cast<std::size_t>(p), extra = n % static_cast<std::size_t>(p);
  auto lo = [&](int b) {
    const auto u = static_cast<std::size_t>(b);
    return u * q + std::min(u, extra);
  };
  auto block_bytes = [&](int b) { return (lo(b + 1) - lo(b)) * sizeof(T); };
  auto* buf = reinterpret_cast<std::byte*>(v.data());
  auto block_at = [&](int b) { return buf + lo(b) * sizeof(T); };

  arg |= static_cast<std::uint64_t>(Phase::reduce_scatter) << 16;
  const std::size_t mine = block_bytes(me);
  std::uint64_t steps = chunks(mine);
  for (int d = 0; d < p; ++d) steps = std::max(steps, chunks(block_bytes(d)));
  T* acc = reinterpret_cast<T*>(tmp.data());
  for (std::uint64_t j = 0; j < steps; ++j) {
    for (int k = 1; k < p; ++k) {
      const int d = (me + k) % p;
      if (j < chunks(block_bytes(d))) send(d, block_at(d), block_bytes(d), j);
    }
    if (j >= chunks(mine)) continue;
    const std::size_t len = chunk_len(mine, j), count = len / sizeof(T);
    std::byte* own = block_at(me) + static_cast<std::size_t>(j) * payload;
    for (int s = 0; s < p; ++s) {
      const std::byte* src = s == me ? own : receive(s, mine, j);
      if (s == 0)
        std::memcpy(acc, src, len);
      else
        combine(acc, reinterpret_cast<const T*>(src), count, false, op);
      if (s != me) release(s);
    }
    std::memcpy(own, acc, len);
  }

  arg = (arg & 0xffff) | static_cast<std::uint64_t>(Phase::gather) << 16;
  std::vector<Part> out(static_cast<std::size_t>(p), Part{block_at(me), mine});
  std::vector<Sink> in(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) in[static_cast<std::size_t>(s)] = {block_at(s), block_bytes(s)};
  all_pairs(out, in);
}

void CollectivesImpl::max_words(std::span<std::uint64_t> v) {
  begin(Kind::agree_user, sizeof(std::uint64_t), 0);
  recursive_doubling(v, Op::max);
}

template <class T>
void ProcessCollectives::allreduce_impl(std::span<T> inout, Op op) {
  static_assert(is_reducible_v<T>);
  Impl& m = *impl_;
  if (op != Op::sum && op != Op::min && op != Op::max && op != Op::prod)
    throw std::invalid_argument("allreduce: operator " + std::to_string(static_cast<int>(op)) +
                                " is not allowed: sum, min, max or prod");
  if (m.p == 1) return;
  m.run([&] {
    // With two processes recursive doubling moves as many bytes as reduce-scatter + allgather
    // in one step instead of two; with fewer elements than processes the blocks would be empty.
    const bool small = m.p == 2 || inout.size_bytes() <= m.small_bytes ||
                       inout.size() < static_cast<std::size_t>(m.p);
    m.begin(Kind::allreduce, sizeof(T),
            static_cast<std::uint64_t>(op) | type_code<T>() << 8 |
                static_cast<std::uint64_t>(Phase::doubling) << 16);
    if (small)
      m.recursive_doubling(inout, op);
    else
      m.reduce_scatter_allgather(inout, op);
  });
}

void ProcessCollectives::allgather_bytes(const void* mine, std::size_t n, void* all,
                                         std::size_t all_n, std::size_t elem) {
  Impl& m = *impl_;
  const auto p = static_cast<std::size_t>(m.p);
  if (n > std::numeric_limits<std::size_t>::max() / p || all_n != p * n)
    throw std::invalid_argument("allgather: all.size() is " + std::to_string(all_n) +
                                " but must be P * mine.size() = " + std::to_string(p) + " * " +
                                std::to_string(n));
  const std::size_t bytes = n * elem;
  auto* dst = static_cast<std::byte*>(all);
  if (bytes) std::memmove(dst + static_cast<std::size_t>(m.me) * bytes, mine, bytes);
  if (m.p == 1) return;
  m.run([&] {
    m.begin(Kind::allgather, elem, 0);
    const auto* own = dst + static_cast<std::size_t>(m.me) * bytes;
    std::vector<Impl::Part> out(p, Impl::Part{own, bytes});
    std::vector<Impl::Sink> in(p);
    for (std::size_t s = 0; s < p; ++s) in[s] = {dst + s * bytes, bytes};
    m.all_pairs(out, in);
  });
}

void ProcessCollectives::alltoallv_bytes(const void* send, std::size_t send_n,
                                         std::span<const std::size_t> send_counts, void* recv,
                                         std::size_t recv_n,
                                         std::span<const std::size_t> recv_counts,
                                         std::size_t elem) {
  Impl& m = *impl_;
  const auto p = static_cast<std::size_t>(m.p);
  auto check_entries = [&](const char* name, std::span<const std::size_t> counts) {
    if (counts.size() != p)
      throw std::invalid_argument(
          std::string("alltoallv: ") + name + " has " + std::to_string(counts.size()) +
          " entries but must have one per process (" + std::to_string(p) + ")");
  };
  check_entries("send_counts", send_counts);
  check_entries("recv_counts", recv_counts);
  auto displacements = [&](const char* name, std::span<const std::size_t> counts,
                           std::size_t capacity, const char* buffer) {
    std::vector<std::size_t> at(p + 1, 0);
    for (std::size_t r = 0; r < p; ++r) {
      if (counts[r] > std::numeric_limits<std::size_t>::max() / elem - at[r])
        throw std::invalid_argument(std::string("alltoallv: the ") + name + " overflow");
      at[r + 1] = at[r] + counts[r];
    }
    if (at[p] > capacity)
      throw std::invalid_argument(std::string("alltoallv: the ") + name + " add up to " +
                                  std::to_string(at[p]) + " elements but " + buffer +
                                  ".size() is " + std::to_string(capacity));
    return at;
  };
  const auto sd = displacements("send_counts", send_counts, send_n, "send");
  const auto rd = displacements("recv_counts", recv_counts, recv_n, "recv");
  const auto me = static_cast<std::size_t>(m.me);
  if (send_counts[me] != recv_counts[me])
    throw std::invalid_argument("alltoallv: rank " + std::to_string(me) + " sends itself " +
                                std::to_string(send_counts[me]) + " elements (send_counts[" +
                                std::to_string(me) + "]) but expects " +
                                std::to_string(recv_counts[me]) + " (recv_counts[" +
                                std::to_string(me) + "])");
  const auto* src = static_cast<const std::byte*>(send);
  auto* dst = static_cast<std::byte*>(recv);
  if (send_counts[me])
    std::memmove(dst + rd[me] * elem, src + sd[me] * elem, send_counts[me] * elem);
  if (m.p == 1) return;
  m.run([&] {
    m.begin(Kind::alltoallv, elem, 0);
    std::vector<Impl::Part> out(p);
    std::vector<Impl::Sink> in(p);
    for (std::size_t r = 0; r < p; ++r) {
      out[r] = {src + sd[r] * elem, send_counts[r] * elem};
      in[r] = {dst + rd[r] * elem, recv_counts[r] * elem};
    }
    m.all_pairs(out, in);
  });
}

template void ProcessCollectives::allreduce_impl<std::int32_t>(std::span<std::int32_t>, Op);
template void ProcessCollectives::allreduce_impl<std::int64_t>(std::span<std::int64_t>, Op);
template void ProcessCollectives::allreduce_impl<std::uint32_t>(std::span<std::uint32_t>, Op);
template void ProcessCollectives::allreduce_impl<std::uint64_t>(std::span<std::uint64_t>, Op);
template void ProcessCollectives::allreduce_impl<float>(std::span<float>, Op);
template void ProcessCollectives::allreduce_impl<double>(std::span<double>, Op);
}  // namespace compas::comm
