// compas::Partition (partition.hpp): the block split, and the user's split from local counts or
// split points, checked alike on every process.
#include "compas/port/partition.hpp"

#include <algorithm>
#include <string>

#include "compas/base/hash.hpp"
#include "compas/runtime/collectives.hpp"
#include "dist_agree.hpp"

namespace compas {

namespace {

std::string process_text(std::size_t r) {
  return "process " + std::to_string(r);
}

std::string list_text(std::span<const index> v) {
  std::string t;
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (k) t += ", ";
    t += std::to_string(v[k]);
  }
  return t;
}

// What is wrong with split points for P processes ("" when nothing).
std::string splits_problem(std::span<const index> s, int P) {
  if (s.size() != static_cast<std::size_t>(P) + 1)
    return std::to_string(s.size()) + " split points: " + std::to_string(P + 1) +
           " (one more than the processes) are allowed";
  for (std::size_t r = 0; r + 1 < s.size(); ++r)
    if (s[r + 1] <= s[r])
      return "part " + std::to_string(r) + " [" + std::to_string(s[r]) + ", " +
             std::to_string(s[r + 1]) + ") is empty: split points must increase strictly";
  return "";
}

}  // namespace

Partition::Partition(Runtime& rt, std::vector<index> starts, bool block)
    : rt_(&rt),
      s_(std::make_shared<const std::vector<index>>(std::move(starts))),
      me_(rt.process()),
      block_(block) {}

Partition Partition::block(Runtime& rt, Range domain) {
  const int P = rt.processes();
  if (domain.hi < domain.lo) domain.hi = domain.lo;
  std::vector<index> s(static_cast<std::size_t>(P) + 1, domain.hi);
  for (int r = 0; r < P; ++r) s[static_cast<std::size_t>(r)] = block_of(domain, P, r).lo;
  return Partition(rt, std::move(s), true);
}

Partition Partition::from_local(Runtime& rt, index n_local, index lo) {
  rt.check_funneled("compas::Partition::from_local", detail::kFunneled);
  const auto P = static_cast<std::size_t>(rt.processes());
  std::vector<index> counts(P, n_local);
  if (P > 1)
    rt.collectives().allgather(std::span<const index>(&n_local, 1), std::span<index>(counts));
  std::vector<index> s{lo};
  for (std::size_t r = 0; r < P; ++r) {
    if (counts[r] < 1)
      throw CollectiveError("compas::Partition::from_local: " + process_text(r) + " holds " +
                            std::to_string(counts[r]) + " indices: 1 or more are allowed");
    index next = 0;
    if (__builtin_add_overflow(s.back(), counts[r], &next))
      throw CollectiveError("compas::Partition::from_local: the local counts " + list_text(counts) +
                            " from " + std::to_string(lo) + " pass the largest index");
    s.push_back(next);
  }
  return Partition(rt, std::move(s), false);
}

Partition Partition::from_local(Runtime& rt, index n_local, Range domain) {
  Partition d = from_local(rt, n_local, domain.lo);
  if (d.size() != domain.size() || domain.hi < domain.lo) {
    std::vector<index> counts;
    for (int r = 0; r < d.parts(); ++r) counts.push_back(d.part(r).size());
    throw CollectiveError("compas::Partition::from_local: the local counts " + list_text(counts) +
                          " add up to " + std::to_string(d.size()) + ", not to the " +
                          std::to_string(domain.hi - domain.lo) + " indices of the domain " +
                          detail::range_text(domain));
  }
  return d;
}

Partition Partition::from_splits(Runtime& rt, std::span<const index> starts) {
  rt.check_funneled("compas::Partition::from_splits", detail::kFunneled);
  std::string text = "[";  // built by += : GCC 12's -Wrestrict misfires on chains of + here
  text += list_text(starts);
  text += "]";
  const detail::Disagreement d = detail::compare_across(rt, text);
  if (d.rank != 0)
    throw CollectiveError("compas::Partition::from_splits: process 0 passes the split points " +
                          d.first + ", " + process_text(static_cast<std::size_t>(d.rank)) + " " +
                          d.other + ": every process passes the same");
  if (const std::string bad = splits_problem(starts, rt.processes()); !bad.empty())
    throw CollectiveError("compas::Partition::from_splits: " + text + ": " + bad);
  return Partition(rt, std::vector<index>(starts.begin(), starts.end()), false);
}

int Partition::owner(index i) const {
  if (block_) return static_cast<int>(part_holding(domain(), parts(), i));
  const auto& s = *s_;
  return static_cast<int>(std::upper_bound(s.begin() + 1, s.end() - 1, i) - s.begin()) - 1;
}

index Partition::largest() const {
  index m = 0;
  for (int r = 0; r < parts(); ++r) m = std::max(m, part(r).size());
  return m;
}

std::uint64_t Partition::digest() const {
  std::uint64_t h = base::kFnvOffset;  // FNV-1a over the split points' bytes
  for (index v : *s_) h = base::fnv1a_word(h, static_cast<std::uint64_t>(v));
  return h;
}

}  // namespace compas
