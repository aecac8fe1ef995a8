// Group (group.hpp): its members, its barrier, and how one is made from a member list.
#include "compas/runtime/group.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "group_impl.hpp"

namespace compas {

Group::Group(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Group::~Group() = default;
Group::Group(Group&&) noexcept = default;
Group& Group::operator=(Group&&) noexcept = default;

int Group::process() const {
  return impl_->rank;
}
int Group::processes() const {
  return static_cast<int>(impl_->members.size());
}
int Group::job_rank(int i) const {
  if (i < 0 || i >= processes())
    throw std::out_of_range("Group::job_rank: member " + std::to_string(i) +
                            " is outside the group (group ranks 0.." +
                            std::to_string(processes() - 1) + ")");
  return impl_->members[static_cast<std::size_t>(i)];
}
const std::vector<int>& Group::members() const {
  return impl_->members;
}
Runtime& Group::runtime() const {
  return *impl_->rt;
}
comm::ProcessCollectives& Group::collectives() {
  if (empty())
    throw std::logic_error(
        "compas::Group: this process is in no group (its colour was < 0, or its member list "
        "empty): it takes part in no collective of a group");
  return *impl_->coll;
}

namespace detail {

std::string list_text(const std::vector<int>& ranks) {
  std::string s = "{";
  for (std::size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s + "}";
}

Group make_group(Runtime& rt, std::vector<int> members, const char* call) {
  rt.check_funneled(call, kFunneled);
  auto impl = std::make_unique<GroupInternals::Impl>();
  impl->rt = &rt;
  const std::vector<int> channel = members.empty() ? std::vector<int>{rt.process()} : members;
  try {
    impl->coll = std::make_unique<comm::ProcessCollectives>(rt.comm(), channel);
  } catch (const std::invalid_argument& e) {
    throw CollectiveError(std::string(call) + ": " + e.what());
  }
  impl->members = std::move(members);
  if (!impl->members.empty()) impl->rank = impl->coll->rank();
  return GroupInternals::make(std::move(impl));
}

}  // namespace detail

Group group_of(Processes ps, std::vector<int> members) {
  detail::require_whole_job(ps, "compas::group_of", detail::kJobWideGroup);
  return detail::make_group(ps.runtime(), std::move(members), "compas::group_of");
}

}  // namespace compas
