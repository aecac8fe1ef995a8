// GhostPlan's machinery (ghost.hpp): the ghosts sorted by owner in one linear pass, the lists and
// offsets exchanged in two rounds, and each call's transfer: one put per peer into its staging
// window, the job's agreement first (which also says every receiver is ready for the puts).
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "compas/comm/window.hpp"
#include "compas/port/ghost.hpp"
#include "compas/runtime/collectives.hpp"
#include "dist_agree.hpp"

namespace compas::detail {

namespace {

// What every process says to every peer before any index moves.
struct GhostWire {
  std::uint64_t digest = 0;
  std::int64_t lo = 0, hi = 0, parts = 0;
  std::int64_t bad = 0, bad_pos = 0, bad_index = 0;
  std::uint64_t count = 0;  // how many of the sender's ghosts the receiver owns
  std::uint64_t at = 0;     // where they arrive in the sender's forward staging (elements)
  char problem[96] = {};    // what else is wrong with the sender's arguments
};
static_assert(std::is_trivially_copyable_v<GhostWire>);

std::string process(std::size_t r) {
  return "process " + std::to_string(r);
}

std::string partition_text(const GhostWire& w) {
  return "a partition of " + range_text({w.lo, w.hi}) + " over " + std::to_string(w.parts) +
         " processes (digest " + std::to_string(w.digest) + ")";
}

// The same verdict on every process: partitions that differ, a problem, an index out of range.
void check(const std::vector<GhostWire>& all) {
  const GhostWire& w0 = all[0];
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r].digest != w0.digest || all[r].lo != w0.lo || all[r].hi != w0.hi)
      throw CollectiveError("compas::GhostPlan: " + process(0) + " passes " + partition_text(w0) +
                            ", " + process(r) + " " + partition_text(all[r]) +
                            ": every process passes the same partition");
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r].problem[0])
      throw CollectiveError("compas::GhostPlan: " + process(r) + ": " + all[r].problem);
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r].bad)
      throw std::out_of_range("compas::GhostPlan: " + process(r) + ": index " +
                              std::to_string(all[r].bad_index) + " at position " +
                              std::to_string(all[r].bad_pos) +
                              " is outside the partition's domain " + range_text({w0.lo, w0.hi}));
}

}  // namespace

struct GhostCore::Impl {
  Runtime* rt = nullptr;
  std::vector<std::byte> pack;
  struct Staging {
    std::size_t elem = 0;
    std::unique_ptr<comm::WindowBytes> win;
    std::uint64_t calls = 0;  // calls in this direction with this element size: the signal's
                              // target is calls x senders
  };
  std::vector<Staging> staging[2];  // by GhostCall, one window per element size
  std::vector<comm::Request> sent;

  Staging& window(int call, std::size_t elem, std::size_t arriving);
};

GhostCore::Impl::Staging& GhostCore::Impl::window(int call, std::size_t elem,
                                                  std::size_t arriving) {
  for (Staging& s : staging[call])
    if (s.elem == elem) return s;
  const std::size_t bytes = comm::detail::checked_bytes(std::max<std::size_t>(arriving, 1), elem,
                                                        "GhostPlan's staging window");
  staging[call].push_back(
      {elem, std::make_unique<comm::WindowBytes>(rt->comm(), bytes, 1, comm::Fill::none), 0});
  return staging[call].back();
}

namespace {

// The plan from this process's ghosts (make_plan, below), in steps.
struct Builder {
  GhostCore& c;
  Runtime& rt;
  std::size_t P, me;
  Range own, dom;
  GhostWire mine;
  std::vector<std::size_t> ask, serve;  // per peer: my ghosts it owns, its ghosts I own
  std::vector<index> asked;             // my off-process ghosts, grouped by owner
  std::vector<GhostWire> all;           // every peer's record to me

  // One pass: own ghosts are a range check, the others counted by owner (O(log P) each).
  template <class I>
  void classify(std::span<const I> ghosts) {
    ask.assign(P, 0);
    for (std::size_t k = 0; k < ghosts.size(); ++k) {
      const index g = ghosts[k];
      if (own.contains(g)) {
        c.self_ghost.push_back(k);
        c.self_owned.push_back(static_cast<std::size_t>(g - own.lo));
      } else if (dom.contains(g)) {
        ++ask[static_cast<std::size_t>(c.parts.owner(g))];
      } else if (!mine.bad) {
        mine.bad = 1, mine.bad_pos = static_cast<std::int64_t>(k), mine.bad_index = g;
      }
    }
  }
  // A counting sort of the off-process ghosts by owner (stable): where each arrives.
  template <class I>
  void group_by_owner(std::span<const I> ghosts) {
    std::vector<std::size_t> next = offsets_of(ask);
    GhostRoute& fwd = c.route[0];
    fwd.unpack.resize(next.back() + ask.back());
    asked.resize(fwd.unpack.size());
    if (mine.bad) return;  // the verdict throws
    for (std::size_t k = 0; k < ghosts.size(); ++k) {
      if (own.contains(ghosts[k])) continue;
      const std::size_t m = next[static_cast<std::size_t>(c.parts.owner(ghosts[k]))]++;
      fwd.unpack[m] = k;
      asked[m] = ghosts[k];
    }
  }
  // Round 1: every process's record, with its count and forward offset for each peer; checked.
  void agree_and_count() {
    const std::vector<std::size_t> at = offsets_of(ask), ones(P, 1);
    std::vector<GhostWire> send(P, mine);
    all.resize(P);
    for (std::size_t r = 0; r < P; ++r) send[r].count = ask[r], send[r].at = at[r];
    exchange<GhostWire>(rt, send, ones, all, ones);
    check(all);
    serve.resize(P);
    for (std::size_t r = 0; r < P; ++r) serve[r] = r == me ? 0 : all[r].count;
  }
  // Round 2: to each peer, where its ghosts of mine arrive here in reverse, then my asked list.
  std::vector<index> lists() {
    const std::vector<std::size_t> at = offsets_of(ask), serve_at = offsets_of(serve);
    std::vector<std::size_t> out_n(P), in_n(P);
    std::vector<index> out, in;
    for (std::size_t r = 0; r < P; ++r) {
      out_n[r] = r == me ? 0 : 1 + ask[r];
      in_n[r] = r == me ? 0 : 1 + serve[r];
      if (r == me) continue;
      out.push_back(static_cast<index>(serve_at[r]));
      out.insert(out.end(), asked.begin() + static_cast<std::ptrdiff_t>(at[r]),
                 asked.begin() + static_cast<std::ptrdiff_t>(at[r] + ask[r]));
    }
    in.resize(offsets_of(in_n).back() + in_n.back());
    exchange<index>(rt, out, out_n, in, in_n);
    return in;
  }
  // Both directions' destinations, counts and offsets, and what forward packs (owned offsets).
  void routes(const std::vector<index>& in) {
    GhostRoute& fwd = c.route[0];
    GhostRoute& rev = c.route[1];
    std::size_t m = 0;
    for (std::size_t r = 0; r < P; ++r) {
      if (r == me) continue;
      const auto rev_at = static_cast<std::size_t>(in[m++]);
      for (std::size_t k = 0; k < serve[r]; ++k)
        fwd.pack.push_back(static_cast<std::size_t>(in[m++] - own.lo));
      if (serve[r]) add_to(fwd, r, serve[r], all[r].at);
      if (ask[r]) add_to(rev, r, ask[r], rev_at);
      if (r < me) fwd.below += ask[r], rev.below += serve[r];
    }
    for (std::size_t r = 0; r < P; ++r) fwd.sources += ask[r] > 0, rev.sources += serve[r] > 0;
    rev.pack = fwd.unpack;
    rev.unpack = fwd.pack;
  }
  static void add_to(GhostRoute& route, std::size_t r, std::size_t count, std::size_t at) {
    route.to.push_back(static_cast<int>(r));
    route.to_count.push_back(count);
    route.to_at.push_back(at);
  }
};

template <class I>
void make_plan(GhostCore& c, std::span<const I> ghosts, const std::string& problem) {
  const Partition& d = c.parts;
  Builder b{c,
            d.runtime(),
            static_cast<std::size_t>(d.parts()),
            static_cast<std::size_t>(d.process()),
            d.owned(),
            d.domain(),
            {},
            {},
            {},
            {},
            {}};
  b.mine.digest = d.digest();
  b.mine.lo = b.dom.lo;
  b.mine.hi = b.dom.hi;
  b.mine.parts = d.parts();
  std::memcpy(b.mine.problem, problem.data(), std::min(problem.size(), sizeof b.mine.problem - 1));
  b.classify(ghosts);
  b.group_by_owner(ghosts);
  b.agree_and_count();
  b.routes(b.lists());
  c.ghost_n = static_cast<index>(ghosts.size());
}

}  // namespace

GhostCore::GhostCore(const Partition& d)
    : parts(d), owned_n(d.owned().size()), impl_(std::make_unique<Impl>()) {
  impl_->rt = &d.runtime();
  d.runtime().check_funneled("compas::GhostPlan", kFunneled);
}

GhostCore::GhostCore(const Partition& d, std::span<const std::int32_t> ghosts,
                     const std::string& problem)
    : GhostCore(d) {
  make_plan(*this, ghosts, problem);
  number = object_number(ObjectKind::ghost_plan, true);
}

GhostCore::GhostCore(const Partition& d, std::span<const std::int64_t> ghosts,
                     const std::string& problem)
    : GhostCore(d) {
  make_plan(*this, ghosts, problem);
  number = object_number(ObjectKind::ghost_plan, true);
}

GhostCore::~GhostCore() = default;

void GhostCore::agree(GhostCall call, std::size_t elem, const std::type_info& type,
                      const std::string& problem) {
  Runtime& rt = *impl_->rt;
  rt.check_funneled("compas::GhostPlan", kFunneled);
  const CollectiveCall what =
      call == GhostCall::update ? CollectiveCall::ghost_update : CollectiveCall::ghost_accumulate;
  if (rt.processes() == 1) {
    if (!problem.empty())
      throw CollectiveError(std::string("compas::GhostPlan::") +
                            (call == GhostCall::update ? "update" : "accumulate") +
                            " on GhostPlan #" + std::to_string(number) + ": process 0: " + problem);
    return;
  }
  detail::agree(rt, {what, elem, 0, -1, true, problem, number, &type});
}

std::byte* GhostCore::pack_buffer(std::size_t bytes) {
  if (impl_->pack.size() < bytes) impl_->pack.resize(bytes);
  return impl_->pack.data();
}

const std::byte* GhostCore::transfer(GhostCall call, std::size_t elem) {
  const int c = static_cast<int>(call);
  GhostRoute& r = route[c];
  Impl::Staging& s = impl_->window(c, elem, r.unpack.size());
  comm::WindowBytes& w = *s.win;
  ++s.calls;
  std::size_t off = 0;
  impl_->sent.clear();
  for (std::size_t k = 0; k < r.to.size(); ++k) {
    impl_->sent.push_back(w.put_signal_nb(
        r.to[k], r.to_at[k] * elem, impl_->pack.data() + off * elem, r.to_count[k] * elem, 0));
    off += r.to_count[k];
  }
  w.wait_until(0, s.calls * r.sources);
  for (comm::Request& q : impl_->sent) q.wait();
  return w.local();
}

std::string ghost_size_problem(std::size_t have, index owned, index ghosts) {
  if (static_cast<index>(have) == owned + ghosts) return "";
  return "a vector of " + std::to_string(have) + " elements, " + std::to_string(owned + ghosts) +
         " are needed (" + std::to_string(owned) + " owned, " + std::to_string(ghosts) + " ghosts)";
}

}  // namespace compas::detail
