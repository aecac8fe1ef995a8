// Process collectives over a group of the Comm's processes: the check of every process's member
// list at construction, and the group's hosts (collectives.hpp).
#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives_channel.hpp"
#include "compas/comm/bootstrap.hpp"
#include "internals.hpp"

namespace compas::comm {

namespace {

// "{0, 2, 4}" (the first 16 ranks, then "...").
std::string list_text(const std::vector<int>& v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size() && i < 16; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > 16) s += ", ... (" + std::to_string(v.size()) + " ranks)";
  return s + "}";
}

std::string as_bytes(const std::vector<int>& v) {
  std::string s(v.size() * sizeof(int), '\0');
  if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());
  return s;
}

std::vector<int> from_bytes(const std::string& s) {
  std::vector<int> v(s.size() / sizeof(int));
  if (!v.empty()) std::memcpy(v.data(), s.data(), v.size() * sizeof(int));
  return v;
}

// What is wrong with rank r's own list ("" when nothing): ranks of a Comm of p, distinct, r among
// them.
std::string own_problem(const std::vector<int>& list, int r, int p) {
  if (list.empty()) return "is empty";
  std::vector<char> seen(static_cast<std::size_t>(p), 0);
  for (int x : list) {
    if (x < 0 || x >= p)
      return "names rank " + std::to_string(x) + ", outside the job (ranks 0.." +
             std::to_string(p - 1) + ")";
    if (seen[static_cast<std::size_t>(x)]++) return "names rank " + std::to_string(x) + " twice";
  }
  if (!seen[static_cast<std::size_t>(r)])
    return "does not name rank " + std::to_string(r) + " itself";
  return "";
}

// The first problem of the job's lists, the same text wherever it is computed.
std::optional<std::string> verdict(const std::vector<std::vector<int>>& lists) {
  const int p = static_cast<int>(lists.size());
  for (int r = 0; r < p; ++r)
    if (std::string why = own_problem(lists[static_cast<std::size_t>(r)], r, p); !why.empty())
      return "rank " + std::to_string(r) + "'s group " +
             list_text(lists[static_cast<std::size_t>(r)]) + " " + why;
  for (int r = 0; r < p; ++r) {
    const auto& mine = lists[static_cast<std::size_t>(r)];
    for (int j : mine)
      if (lists[static_cast<std::size_t>(j)] != mine)
        return "rank " + std::to_string(r) + " has group " + list_text(mine) + " but rank " +
               std::to_string(j) + ", a member of it, has " +
               list_text(lists[static_cast<std::size_t>(j)]) +
               ": every member of a group passes the same members in the same order";
  }
  return std::nullopt;
}

}  // namespace

namespace detail {

void check_members(Comm& comm, const std::vector<int>& members) {
  std::vector<std::vector<int>> lists;
  if (comm.size() == 1) {
    lists.push_back(members);
  } else {
    for (const std::string& s : comm.bootstrap().allgather(as_bytes(members)))
      lists.push_back(from_bytes(s));
  }
  if (const auto why = verdict(lists))
    throw std::invalid_argument("collectives over a group: " + *why);
}

std::vector<std::vector<int>> group_hosts(const std::vector<std::vector<int>>& hosts,
                                          const std::vector<int>& members) {
  std::vector<std::vector<int>> out;
  for (const auto& host : hosts) {
    std::vector<int> here;
    for (std::size_t g = 0; g < members.size(); ++g)
      if (std::find(host.begin(), host.end(), members[g]) != host.end())
        here.push_back(static_cast<int>(g));
    if (!here.empty()) out.push_back(std::move(here));
  }
  return out;
}

}  // namespace detail

std::string CollectivesImpl::where() const {
  return whole ? std::string() : " in the group of ranks " + list_text(members);
}

}  // namespace compas::comm
