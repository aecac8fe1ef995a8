// The working sets compas study gives its memory probes: STREAM's rule, at least 4 times the
// last-level caches, at every budget (a stream that fits in cache measures the cache, and the
// kernels' "memory-bound" verdicts are judged against it), within a quarter of what the host can
// give.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compas/base/memory.hpp"
#include "compas/threads/topology.hpp"

namespace compas::app {

struct StreamSizes {
  std::uint64_t membw = 0;      // membw --size: all arrays, all threads
  std::uint64_t cache_max = 0;  // cache --max: one thread's working set
  std::uint64_t llc_total = 0;  // the last-level caches, every instance
  std::uint64_t llc_one = 0;    // one instance (what one thread's working set is judged against)
  std::string llc_text;         // "L3 32 MiB x 2", "no cache known"
  bool capped = false;          // 4x did not fit in a quarter of `limit`
  std::string cap;              // what capped it, when it did
  bool given = false;           // --stream-size set both sizes
};

// The factor of STREAM's rule.
constexpr int kStreamCacheFactor = 4;

// `scale` is the study's budget over 10 minutes: it sets the smallest sizes (16 MiB / 4 MiB below
// 0.3, 128 MiB / 64 MiB below 1, 512 MiB / 256 MiB from 1), which the rule may only raise.
// The last level of data or unified cache: every instance's bytes, one's, and "L3 32 MiB x 2"
// ("no cache known", zeros, when the list has none).
struct LastLevelCache {
  std::uint64_t total = 0, one = 0;
  std::string text = "no cache known";
};
LastLevelCache last_level_cache(const std::vector<threads::CacheLevel>& caches);

// `given` (--stream-size, 0: none) sets both sizes whatever the rule says.
StreamSizes stream_sizes(const threads::Topology& topo, double scale,
                         const base::MemoryBound& limit, std::uint64_t given = 0);

// "working set 4 GiB: 4.0x the last-level caches (L3 508 MiB x 2), as STREAM's rule asks (at
// least 4x)", or "... below STREAM's rule (at least 4x): it measures the caches in part".
std::string stream_rule_text(std::uint64_t working_set, std::uint64_t llc_total,
                             const std::string& llc_text);

}  // namespace compas::app
