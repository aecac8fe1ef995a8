// The job's guardian: a process compas-run forks before any rank, so that nothing of the job
// outlives a compas-run that dies without stopping it (SIGKILL, the OOM killer). The ranks die
// with compas-run (PDEATHSIG), but what they detached (setsid and a double fork, SIGHUP ignored)
// would be re-parented to init and live on. Every process of the job inherits COMPAS_JOB_TOKEN:
// the guardian waits on a pipe whose only writer is compas-run; end of file without a word means
// compas-run is gone, and the guardian then ends this user's processes whose environment holds
// COMPAS_JOB_TOKEN=<the job's token> whole (SIGTERM, SIGKILL after kGrace;
// base::end_processes_carrying), names them on stderr and exits. It is in a process group of its
// own and ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT, so that signals meant for the job do not end
// it; compas-run leaves it out of what it signals. At a job's end compas-run dismisses it.
#pragma once

#include <sys/types.h>

#include <string>

namespace compas::run {

class Guardian {
 public:
  Guardian() = default;
  Guardian(const Guardian&) = delete;
  Guardian& operator=(const Guardian&) = delete;
  // Not dismissed (compas-run is failing): the guardian ends the job now, and is waited for.
  ~Guardian();

  // Forks the guardian of the job whose processes carry `entry` ("COMPAS_JOB_TOKEN=..."). When it
  // cannot be started, says so on stderr; the job runs unguarded.
  void start(const std::string& entry);
  // Its pid, -1 when it has not been started.
  pid_t pid() const { return pid_; }
  // The job is over and what it left has been ended: the guardian exits without looking further,
  // and is waited for.
  void dismiss();

 private:
  void stop(bool dismissed);

  pid_t pid_ = -1;
  int fd_ = -1;  // the pipe's writing end
};

}  // namespace compas::run
