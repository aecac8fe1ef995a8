// The ranks' notices that they end the job (base/abort_notice.hpp): one pipe, whose writing end
// every rank inherits as COMPAS_ABORT_FD. A rank that aborts (Runtime::abort, compas_abort) writes
// {rank, status} there before it exits, so its notice is in the pipe before any peer can see it
// gone: when compas-run names the failure, a notice read then wins over the peers that ended
// (status 1) because they lost that rank, however their ends and its own were reaped.
#pragma once

#include <optional>

#include "compas/base/abort_notice.hpp"

namespace compas::run {

class AbortNotices {
 public:
  AbortNotices() = default;
  AbortNotices(const AbortNotices&) = delete;
  AbortNotices& operator=(const AbortNotices&) = delete;
  ~AbortNotices();

  // The pipe (close-on-exec both ends; the child clears it on writing_end()). False when it
  // cannot be made: the job then runs without notices.
  bool open();
  int writing_end() const { return write_fd_; }
  // Once every rank started: compas-run keeps only the reading end.
  void close_writing_end();
  // The first valid notice of the job (rank in 0..ranks-1, status 1..255), reading what has come
  // without waiting; nullopt when none came.
  std::optional<base::AbortNotice> first(int ranks);

 private:
  int read_fd_ = -1, write_fd_ = -1;
  std::optional<base::AbortNotice> first_;
};

}  // namespace compas::run
