// Before a window is mapped, the processes agree that their hosts can give it: every process
// publishes what it asks (its whole registered size) and what its host can give
// (base::memory_limit for the mapping it makes), and every process checks every host the same way,
// so a refused window throws the same CommError on every process, before any of them mapped or
// touched anything.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "compas/base/memory.hpp"
#include "compas/base/size.hpp"
#include "compas/comm/ucx.hpp"
#include "window_impl.hpp"

namespace compas::comm::detail {

namespace {

struct Ask {
  std::uint64_t bytes = 0;
  base::MemoryBound limit;
};

std::string encode(std::uint64_t bytes, const base::MemoryBound& limit) {
  std::string s(2 * sizeof(std::uint64_t), '\0');
  const std::uint64_t words[2] = {bytes, limit.bytes};
  std::memcpy(s.data(), words, sizeof words);
  return s + limit.what;
}

Ask decode(const std::string& s, int rank) {
  std::uint64_t words[2] = {};
  if (s.size() < sizeof words)
    throw CommError("rank " + std::to_string(rank) + " sent a malformed window size", rank);
  std::memcpy(words, s.data(), sizeof words);
  return {words[0], {words[1], s.substr(sizeof words)}};
}

// "rank 3", "ranks 0 and 1", "ranks 0, 1 and 2".
std::string ranks_text(const std::vector<int>& ranks) {
  std::string t = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) t += i + 1 == ranks.size() ? " and " : ", ";
    t += std::to_string(ranks[i]);
  }
  return t;
}

// The refusal for one host's processes, or "" when their host can give what they ask together.
std::string host_refusal(const std::vector<int>& ranks, const std::vector<Ask>& asks) {
  std::uint64_t total = 0;
  const base::MemoryBound* limit = nullptr;
  for (int r : ranks) {
    const Ask& a = asks[static_cast<std::size_t>(r)];
    total = a.bytes > UINT64_MAX - total ? UINT64_MAX : total + a.bytes;
    if (!limit || a.limit.bytes < limit->bytes) limit = &a.limit;
  }
  if (!limit || total <= limit->bytes) return "";
  if (ranks.size() == 1)
    return base::memory_refusal("window of " + ranks_text(ranks) + " needs", total, *limit);
  std::string each;
  for (int r : ranks) {
    const std::string b = base::format_size(asks[static_cast<std::size_t>(r)].bytes);
    each += (each.empty() ? "" : ", ") + b;
  }
  const std::string who =
      "windows of " + ranks_text(ranks) + " on one host (" + each + ") need together";
  return base::memory_refusal(who, total, *limit);
}

}  // namespace

void agree_window_memory(Comm& comm, std::size_t total, base::Mapping mapping) {
  const std::vector<std::string> all =
      comm.bootstrap().allgather(encode(total, base::memory_limit(mapping)));
  std::vector<Ask> asks;
  for (std::size_t r = 0; r < all.size(); ++r) asks.push_back(decode(all[r], static_cast<int>(r)));
  for (const auto& ranks : comm.hosts())
    if (std::string why = host_refusal(ranks, asks); !why.empty()) throw CommError(why);
}

}  // namespace compas::comm::detail
