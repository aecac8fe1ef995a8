// Processes (collectives.hpp): the whole job or a Group's members, as the collectives see them.
#include <stdexcept>
#include <string>

#include "compas/runtime/collectives.hpp"
#include "compas/runtime/group.hpp"
#include "group_impl.hpp"
#include "openmp.hpp"

namespace compas {

Processes::Processes(Group& g) : rt_(&g.runtime()), group_(&g) {
  if (g.empty())
    throw std::logic_error(
        "compas collectives on a Group: this process is in no group (its colour was < 0, or its "
        "member list empty)");
}

int Processes::process() const {
  return group_ ? group_->process() : rt_->process();
}
int Processes::processes() const {
  return group_ ? group_->processes() : rt_->processes();
}
int Processes::job_rank(int rank) const {
  return group_ ? group_->job_rank(rank) : rank;
}
comm::ProcessCollectives& Processes::collectives() const {
  return group_ ? group_->collectives() : rt_->collectives();
}
std::string Processes::name(int rank) const {
  if (!group_) return "process " + std::to_string(rank);
  return "group rank " + std::to_string(rank) + " (process " + std::to_string(job_rank(rank)) + ")";
}
std::string Processes::where() const {
  return group_ ? " on the group of processes " + detail::list_text(group_->members()) : "";
}

namespace detail {

void require_whole_job(const Processes& ps, const char* call, const char* why) {
  if (ps.whole_job()) return;
  throw std::logic_error(std::string(call) + " on a group" + ps.where() + ": " + why +
                         "; call it with the Runtime");
}

}  // namespace detail

double barrier(Processes ps) {
  ps.runtime().check_funneled("compas::barrier", detail::kFunneled);
  if (ps.processes() > 1) {
    if (ps.group_)
      ps.collectives().barrier();
    else
      ps.runtime().comm().barrier();
  }
  return detail::openmp_wtime();
}

}  // namespace compas
