// compas study's probe sizes (stream_sizes.hpp).
#include "stream_sizes.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "compas/base/size.hpp"

namespace compas::app {

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

std::uint64_t round_up_mib(std::uint64_t b) {
  return (b + kMiB - 1) / kMiB * kMiB;
}

}  // namespace

std::string stream_rule_text(std::uint64_t working_set, std::uint64_t llc_total,
                             const std::string& llc_text) {
  const std::string ws = "working set " + base::format_size(working_set);
  if (llc_total == 0) return ws + ": no last-level cache known to hold it against";
  const double x = double(working_set) / double(llc_total);
  return fmt::format("{}: {:.1f}x the last-level caches ({}), {} STREAM's rule (at least {}x){}",
                     ws, x, llc_text, x >= kStreamCacheFactor ? "as" : "below", kStreamCacheFactor,
                     x >= kStreamCacheFactor ? "" : ": the caches serve part of it");
}

LastLevelCache last_level_cache(const std::vector<threads::CacheLevel>& caches) {
  const threads::CacheLevel* llc = nullptr;
  for (const auto& c : caches)
    if (c.type != "instruction" && (!llc || c.level > llc->level)) llc = &c;
  LastLevelCache out;
  if (!llc) return out;
  out.one = llc->size_bytes;
  out.total = llc->size_bytes * std::uint64_t(std::max(1, llc->count));
  out.text = fmt::format("L{} {} x {}", llc->level, base::format_size(llc->size_bytes), llc->count);
  return out;
}

StreamSizes stream_sizes(const threads::Topology& topo, double scale,
                         const base::MemoryBound& limit, std::uint64_t given) {
  StreamSizes s;
  s.membw = (scale >= 1 ? 512 : scale >= 0.3 ? 128 : 16) * kMiB;
  s.cache_max = (scale >= 1 ? 256 : scale >= 0.3 ? 64 : 4) * kMiB;
  const LastLevelCache llc = last_level_cache(topo.caches());
  s.llc_one = llc.one;
  s.llc_total = llc.total;
  s.llc_text = llc.text;
  if (given > 0) {
    s.membw = s.cache_max = given;
    s.given = true;
    return s;
  }
  s.membw = std::max(s.membw, round_up_mib(kStreamCacheFactor * s.llc_total));
  s.cache_max = std::max(s.cache_max, round_up_mib(kStreamCacheFactor * s.llc_one));
  const std::uint64_t cap = limit.bytes / 4 / kMiB * kMiB;
  if (cap > 0 && (s.membw > cap || s.cache_max > cap)) {
    s.capped = kStreamCacheFactor * s.llc_total > cap;
    s.cap = "a quarter of " + limit.what;
    s.membw = std::min(s.membw, cap);
    s.cache_max = std::min(s.cache_max, cap);
  }
  return s;
}

}  // namespace compas::app
