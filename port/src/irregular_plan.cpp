// GatherPlan's inspector (irregular.hpp): the indices and the array checked against every
// process's, the indices sorted by owner, and the index lists sent to their owners once.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>

#include "compas/port/irregular.hpp"
#include "irregular_owners.hpp"

namespace compas::detail {

namespace {

// What every process says about its plan before any index moves, to every peer with the number
// of its indices that peer owns.
struct PlanWire {
  std::int64_t what = 0, dims = 0, elem = 0;
  std::int64_t domain[4] = {}, grid[2] = {};
  std::uint64_t splits = 0;  // a digest of a user partition's split points (0: the block split)
  std::int64_t bad = 0, bad_pos = 0, bad_key[2] = {};
  std::uint64_t count = 0;
  char problem[96] = {};  // what else is wrong with this process's arguments ("" when nothing)
};
static_assert(std::is_trivially_copyable_v<PlanWire>);

void put_range2(std::int64_t* out, const Range2& r) {
  out[0] = r.rows.lo;
  out[1] = r.rows.hi;
  out[2] = r.cols.lo;
  out[3] = r.cols.hi;
}
Range2 range2_of(const std::int64_t* in) {
  return {{in[0], in[1]}, {in[2], in[3]}};
}

std::string text_of(const Range2& r, std::int64_t dims) {
  const auto one = [](const Range& x) {
    return "[" + std::to_string(x.lo) + ", " + std::to_string(x.hi) + ")";
  };
  return dims == 1 ? one(r.cols) : one(r.rows) + " x " + one(r.cols);
}
std::string key_text(const std::int64_t* key, std::int64_t dims) {
  if (dims == 1) return std::to_string(key[1]);
  return "(" + std::to_string(key[0]) + ", " + std::to_string(key[1]) + ")";
}
std::string process(std::size_t r) {
  return "process " + std::to_string(r);
}

std::uint64_t splits_digest(const std::vector<index>& starts) {
  std::uint64_t h = starts.empty() ? 0 : 1469598103934665603ull;
  for (index v : starts) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
  return h;
}

PlanWire wire_of(const IrregularArray& a, std::span<const std::array<index, 2>> keys,
                 const std::string& problem) {
  PlanWire w;
  std::memcpy(w.problem, problem.data(), std::min(problem.size(), sizeof w.problem - 1));
  w.dims = a.dims;
  w.elem = static_cast<std::int64_t>(a.elem);
  put_range2(w.domain, a.domain);
  w.grid[0] = a.grid.rows;
  w.grid[1] = a.grid.cols;
  w.splits = splits_digest(a.starts);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (a.domain.rows.contains(keys[k][0]) && a.domain.cols.contains(keys[k][1])) continue;
    w.bad = 1;
    w.bad_pos = static_cast<std::int64_t>(k);
    w.bad_key[0] = keys[k][0];
    w.bad_key[1] = keys[k][1];
    break;
  }
  return w;
}

// "a 2-D array of [0, 8) x [0, 8) in 2 x 1 parts and elements of 8 bytes"
std::string array_text(const PlanWire& w) {
  return "a " + std::to_string(w.dims) + "-D array of " + text_of(range2_of(w.domain), w.dims) +
         " in " + std::to_string(w.grid[0]) + " x " + std::to_string(w.grid[1]) + " parts" +
         (w.splits ? " (a user's partition)" : "") + " and elements of " + std::to_string(w.elem) +
         " bytes";
}
std::string what_text(std::int64_t what) {
  return what == static_cast<std::int64_t>(RouteFor::plan) ? "makes a GatherPlan"
                                                           : "calls compas::scatter_indexed";
}

// The same verdict on every process: arrays that differ, then the first index out of range.
void check_plan(const std::vector<PlanWire>& all) {
  const PlanWire& w0 = all[0];
  for (std::size_t r = 1; r < all.size(); ++r) {
    const PlanWire& w = all[r];
    if (w.what != w0.what)
      throw CollectiveError("compas::GatherPlan: " + process(0) + " " + what_text(w0.what) + ", " +
                            process(r) + " " + what_text(w.what) +
                            ": every process makes the same calls in the same order");
    if (w.dims != w0.dims || w.elem != w0.elem ||
        std::memcmp(w.domain, w0.domain, sizeof w.domain) != 0 ||
        std::memcmp(w.grid, w0.grid, sizeof w.grid) != 0 || w.splits != w0.splits)
      throw CollectiveError("compas::GatherPlan: " + process(0) + " passes " + array_text(w0) +
                            ", " + process(r) + " " + array_text(w) +
                            ": every process passes the same array");
  }
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r].problem[0])
      throw CollectiveError("compas::GatherPlan: " + process(r) + ": " + all[r].problem);
  for (std::size_t r = 0; r < all.size(); ++r) {
    const PlanWire& w = all[r];
    if (!w.bad) continue;
    throw std::out_of_range("compas::GatherPlan: " + process(r) + ": index " +
                            key_text(w.bad_key, w.dims) + " at position " +
                            std::to_string(w.bad_pos) + " is outside the array's global range " +
                            text_of(range2_of(w.domain), w.dims));
  }
}

// Sorts the keys by owner: counts, positions (stable), and the keys this process owns.
std::vector<std::array<index, 2>> sort_by_owner(IrregularPlan& plan, const Owners& owners,
                                                const IrregularArray& a,
                                                std::span<const std::array<index, 2>> keys) {
  std::vector<std::size_t> owner(keys.size());
  for (std::size_t k = 0; k < keys.size(); ++k) {
    owner[k] = owners.of(keys[k][0], keys[k][1]);
    if (owner[k] != plan.me) ++plan.ask_counts[owner[k]];
  }
  std::vector<std::size_t> next = offsets_of(plan.ask_counts);
  plan.remote_k.resize(next.back() + plan.ask_counts.back());
  std::vector<std::array<index, 2>> asked(plan.remote_k.size());
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (owner[k] == plan.me) {
      plan.self_k.push_back(k);
      plan.self_at.push_back(local_offset(a, keys[k]));
      continue;
    }
    const std::size_t m = next[owner[k]]++;
    plan.remote_k[m] = k;
    asked[m] = keys[k];
  }
  return asked;
}

std::atomic<std::uint64_t> plans_made{0};

// The longest block of a copy: a longer one is cut, so that the blocks of one long run (the
// whole array at P = 1) are shared by the team (move() in irregular.hpp) instead of copied by one
// thread.
constexpr std::size_t kRunMax = 16384;

// The moves i < n from src(i) to dst(i) as blocks of consecutive positions on both sides, at most
// kRunMax long; none when there would be more than n / 4 of them.
template <class D, class S>
std::vector<IrregularPlan::Run> runs_of(std::size_t n, D dst, S src) {
  std::vector<IrregularPlan::Run> runs;
  for (std::size_t i = 0; i < n; ++i) {
    if (!runs.empty() && runs.back().len < kRunMax && runs.back().dst + runs.back().len == dst(i) &&
        runs.back().src + runs.back().len == src(i)) {
      ++runs.back().len;
      continue;
    }
    if (runs.size() >= n / 4) return {};
    runs.push_back({dst(i), src(i), 1});
  }
  return runs;
}

void find_runs(IrregularPlan& p) {
  const auto same = [](std::size_t i) { return i; };
  p.serve_runs = runs_of(p.serve.size(), same, [&](std::size_t m) { return p.serve[m]; });
  p.remote_runs = runs_of(
      p.remote_k.size(), [&](std::size_t m) { return p.remote_k[m]; }, same);
  p.self_runs = runs_of(
      p.self_k.size(), [&](std::size_t s) { return p.self_k[s]; },
      [&](std::size_t s) { return p.self_at[s]; });
}

// Every process's part, from the grid of parts the array is cut into.
std::vector<Range2> parts_of(const IrregularArray& a, int P) {
  std::vector<Range2> parts;
  for (index r = 0; r < P; ++r)
    parts.push_back({block_of(a.domain.rows, a.grid.rows, r / a.grid.cols),
                     a.starts.empty() ? block_of(a.domain.cols, a.grid.cols, r % a.grid.cols)
                                      : Range{a.starts[static_cast<std::size_t>(r)],
                                              a.starts[static_cast<std::size_t>(r) + 1]}});
  return parts;
}

}  // namespace

std::vector<std::array<index, 2>> keys_of(std::span<const index> indices) {
  std::vector<std::array<index, 2>> keys(indices.size());
  for (std::size_t k = 0; k < indices.size(); ++k) keys[k] = {0, indices[k]};
  return keys;
}

Routed route(Runtime& rt, const IrregularArray& a, std::span<const std::array<index, 2>> keys,
             RouteFor what, const std::string& problem) {
  rt.check_funneled("compas::GatherPlan", kFunneled);
  const auto P = static_cast<std::size_t>(rt.processes());
  PlanWire mine = wire_of(a, keys, problem);
  mine.what = static_cast<std::int64_t>(what);
  Routed out;
  IrregularPlan& plan = out.plan;
  plan.n = keys.size();
  plan.me = static_cast<std::size_t>(rt.process());
  plan.ask_counts.assign(P, 0);
  const bool grid_fits = static_cast<std::size_t>(a.grid.rows) * a.grid.cols == P;
  if (!mine.bad && grid_fits)  // else nothing is sorted: the verdict below throws
    out.asked = sort_by_owner(plan, Owners(parts_of(a, static_cast<int>(P))), a, keys);
  // One round: every process's record, with its count for each peer.
  std::vector<PlanWire> send(P, mine), all(P);
  for (std::size_t r = 0; r < P; ++r) send[r].count = plan.ask_counts[r];
  const std::vector<std::size_t> ones(P, 1);
  exchange<PlanWire>(rt, send, ones, all, ones);
  check_plan(all);
  plan.id = plans_made.fetch_add(1);
  for (const PlanWire& w : all) plan.serve_counts.push_back(w.count);
  return out;
}

IrregularPlan make_plan(Runtime& rt, const IrregularArray& a,
                        std::span<const std::array<index, 2>> keys, const std::string& problem) {
  Routed r = route(rt, a, keys, RouteFor::plan, problem);
  IrregularPlan& plan = r.plan;
  // route() agreed and exchanged the counts: one round for the keys.
  std::vector<std::array<index, 2>> got(offsets_of(plan.serve_counts).back() +
                                        plan.serve_counts.back());
  exchange<std::array<index, 2>>(rt, r.asked, plan.ask_counts, got, plan.serve_counts);
  plan.serve.reserve(got.size());
  for (const auto& key : got) plan.serve.push_back(local_offset(a, key));
  find_runs(plan);
  return plan;
}

}  // namespace compas::detail
