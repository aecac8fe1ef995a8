// agree_on_members, members_text (dist_members3.hpp).
#include "dist_members3.hpp"

#include <algorithm>
#include <cstring>

namespace compas::detail {

namespace {

std::string encode(const std::vector<int>& v) {
  std::string s(v.size() * sizeof(int), '\0');
  if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());
  return s;
}

std::vector<int> decode(const std::string& s) {
  std::vector<int> v(s.size() / sizeof(int));
  if (!v.empty()) std::memcpy(v.data(), s.data(), v.size() * sizeof(int));
  return v;
}

bool holds(const std::vector<int>& list, int rank) {
  return std::find(list.begin(), list.end(), rank) != list.end();
}

}  // namespace

std::string members_text(const std::vector<int>& members) {
  std::string t = "{";
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i) t += ", ";
    t += std::to_string(members[i]);
  }
  t += "}";
  return t;
}

std::vector<int> agree_on_members(Runtime& rt, const std::vector<int>& mine) {
  std::vector<std::vector<int>> all;
  if (rt.processes() == 1) {
    all.push_back(mine);
  } else {
    for (const std::string& s : rt.bootstrap().allgather(encode(mine))) all.push_back(decode(s));
  }
  const auto first = std::find_if(all.begin(), all.end(), [](auto& l) { return !l.empty(); });
  const std::string what = "DistArray<T, 3> on a group: ";
  if (first == all.end())
    throw CollectiveError(what +
                          "every process passes an empty group: the members pass their "
                          "group, every other process an empty one");
  const std::vector<int>& members = *first;
  const int r0 = static_cast<int>(first - all.begin());
  for (std::size_t r = 0; r < all.size(); ++r) {
    const bool member = holds(members, static_cast<int>(r));
    if (member ? all[r] == members : all[r].empty()) continue;
    throw CollectiveError(what + "process " + std::to_string(r0) + " passes the group " +
                          members_text(members) + ", process " + std::to_string(r) + " " +
                          (all[r].empty() ? "an empty one" : "the group " + members_text(all[r])) +
                          ": the members pass one group, every other process an empty one (a "
                          "process in no group)");
  }
  return members;
}

}  // namespace compas::detail
