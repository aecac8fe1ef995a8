// What a Group holds (group.hpp), for the sources that make and use one.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compas/comm/collectives.hpp"
#include "compas/runtime/group.hpp"

namespace compas {

struct Group::Impl {
  Runtime* rt = nullptr;
  std::vector<int> members;  // job ranks in group order; empty: in no group
  int rank = -1;
  // Over `members` (over this process alone when in no group: its window is still part of the
  // job-wide creation).
  std::unique_ptr<comm::ProcessCollectives> coll;
};

namespace detail {
// Group's implementation and constructor, private to it, for the runtime's sources.
struct GroupInternals {
  using Impl = Group::Impl;
  static Group make(std::unique_ptr<Impl> impl) { return Group(std::move(impl)); }
};

// The Group of `members` (empty: in no group), checked and made collectively; `call` names the
// public call in errors ("compas::split").
Group make_group(Runtime& rt, std::vector<int> members, const char* call);
// Why a Group is made from the whole job only (require_whole_job's reason).
inline const char* const kJobWideGroup =
    "making a group is collective over the whole job (each group's scratch window is a job-wide "
    "allocation)";
// "{0, 2, 4}".
std::string list_text(const std::vector<int>& ranks);
}  // namespace detail

}  // namespace compas
