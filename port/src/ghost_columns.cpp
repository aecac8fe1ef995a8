// GhostPlan::for_columns's two passes over a CSR's columns (ghost.hpp): an owned column is a
// range check; only the off-process ones go through a hash table the size of the ghosts (open
// addressing, linear probing), never a sort or a search of the whole list.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "compas/port/ghost.hpp"
#include "compas/runtime/thread_order.hpp"

namespace compas::detail {

namespace {

// Global index -> value (a free slot holds kFree, no index of a domain); grows at half full.
constexpr index kFree = INT64_MIN;

class IndexMap {
 public:
  explicit IndexMap(std::size_t expected) { rehash(std::max<std::size_t>(64, 2 * expected)); }
  // The value of `key`, inserting it with `value` when absent; `added` says whether it was.
  index find_or_add(index key, index value, bool& added) {
    std::size_t s = slot(key);
    added = keys_[s] != key;
    if (!added) return values_[s];
    keys_[s] = key;
    values_[s] = value;
    if (++size_ * 2 > keys_.size()) rehash(keys_.size() * 2);
    return value;
  }
  index at(index key) const { return values_[slot(key)]; }

 private:
  std::size_t slot(index key) const {
    std::size_t s =
        static_cast<std::size_t>(static_cast<std::uint64_t>(key) * 0x9e3779b97f4a7c15ull >> shift_);
    while (keys_[s] != key && keys_[s] != kFree) s = (s + 1) & (keys_.size() - 1);
    return s;
  }
  void rehash(std::size_t want) {
    std::size_t cap = 64;
    while (cap < want) cap *= 2;
    std::vector<index> k = std::move(keys_), v = std::move(values_);
    keys_.assign(cap, kFree);
    values_.assign(cap, 0);
    shift_ = 64 - static_cast<int>(__builtin_ctzll(cap));
    for (std::size_t i = 0; i < k.size(); ++i)
      if (k[i] != kFree) {
        const std::size_t s = slot(k[i]);
        keys_[s] = k[i];
        values_[s] = v[i];
      }
  }
  std::vector<index> keys_, values_;
  std::size_t size_ = 0;
  int shift_ = 58;
};

}  // namespace

// Whether every column of cols[at, end) lies in `own`: one branch-free pass over the block, two
// compares in the columns' own type (the release build vectorizes it: -fopt-info-vec).
template <class I>
bool all_owned(std::span<const I> cols, std::size_t at, std::size_t end, Range own) {
  constexpr index top = std::numeric_limits<I>::max();
  if (own.size() <= 0 || own.lo > top) return at == end;
  const I lo = static_cast<I>(own.lo), last = static_cast<I>(std::min(own.hi - 1, top));
  const I* c = cols.data();
  int outside = 0;
  for (std::size_t e = at; e < end; ++e) outside |= (c[e] < lo) | (c[e] > last);
  return outside == 0;
}

// Columns are looked at in blocks of this many: a block of owned columns (most of a CSR's) costs
// one vectorized range check, the others a branch and a hash probe per off-process column.
constexpr std::size_t kColumnBlock = 1024;

template <class I>
Columns<I> distinct_off_process(const Partition& d, std::span<const I> cols) {
  const Range own = d.owned(), dom = d.domain();
  Columns<I> out;
  IndexMap seen(1024);
  bool added = false;
  for (std::size_t at = 0; at < cols.size(); at += kColumnBlock) {
    const std::size_t end = std::min(cols.size(), at + kColumnBlock);
    if (all_owned(cols, at, end, own)) continue;
    for (std::size_t e = at; e < end; ++e) {
      const index c = cols[e];
      if (own.contains(c)) continue;
      if (!dom.contains(c)) {
        if (out.bad_pos < 0) out.bad_pos = static_cast<index>(e), out.bad = c;
        continue;
      }
      seen.find_or_add(c, 0, added);
      if (added) out.ghosts.push_back(static_cast<I>(c));
    }
  }
  std::sort(out.ghosts.begin(), out.ghosts.end());
  return out;
}

template <class I>
void renumber(const Partition& d, std::span<I> cols, const std::vector<I>& ghosts) {
  const Range own = d.owned();
  const index n = own.size();
  IndexMap place(ghosts.size());
  bool added = false;
  for (std::size_t k = 0; k < ghosts.size(); ++k)
    place.find_or_add(ghosts[k], n + static_cast<index>(k), added);
  for (I& c : cols)
    if (!own.contains(c))
      c = static_cast<I>(place.at(c));
    else if (own.lo != 0)
      c = static_cast<I>(c - own.lo);
}

template <class I>
Columns<I> merge_columns(std::vector<Columns<I>>& parts, const std::vector<std::size_t>& starts) {
  Columns<I> out;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    out.ghosts.insert(out.ghosts.end(), parts[k].ghosts.begin(), parts[k].ghosts.end());
    if (out.bad_pos < 0 && parts[k].bad_pos >= 0) {
      out.bad_pos = parts[k].bad_pos + static_cast<index>(starts[k]);
      out.bad = parts[k].bad;
    }
  }
  std::sort(out.ghosts.begin(), out.ghosts.end());
  out.ghosts.erase(std::unique(out.ghosts.begin(), out.ghosts.end()), out.ghosts.end());
  return out;
}

int column_parts(std::size_t n) {
  return n < (std::size_t{1} << 16) ? 1 : batch_threads();
}

template Columns<std::int32_t> distinct_off_process(const Partition&,
                                                    std::span<const std::int32_t>);
template Columns<std::int64_t> distinct_off_process(const Partition&,
                                                    std::span<const std::int64_t>);
template void renumber(const Partition&, std::span<std::int32_t>, const std::vector<std::int32_t>&);
template void renumber(const Partition&, std::span<std::int64_t>, const std::vector<std::int64_t>&);
template Columns<std::int32_t> merge_columns(std::vector<Columns<std::int32_t>>&,
                                             const std::vector<std::size_t>&);
template Columns<std::int64_t> merge_columns(std::vector<Columns<std::int64_t>>&,
                                             const std::vector<std::size_t>&);

}  // namespace compas::detail
