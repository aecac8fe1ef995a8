// What a job's killed ranks leave of their shared memory, and its removal when the job is over.
//
// UCX (1.13) shares memory between the processes of a host with SysV segments (created, attached,
// then marked for removal) and with files of its posix transport (created, filled, then unlinked;
// the creator keeps them open, and peers open them through /proc/PID/fd). A rank killed between
// the first and the last of those steps, which includes filling a 4 MiB file, leaves a segment or
// a file that nothing removes. After a job that did not end cleanly compas-run removes:
//  - segments of key IPC_PRIVATE that one of its ranks created and no process has attached;
//  - files ucx_shm_posix_* in UCX_POSIX_DIR (default /dev/shm) of this user, changed since the
//    job started, that no process holds open or mapped (a live one always is: its creator holds
//    it open until it is unlinked).
#pragma once

#include <sys/types.h>

#include <ctime>
#include <set>
#include <string>
#include <vector>

namespace compas::run {

class JobShm {
 public:
  JobShm();  // the job starts now
  // Once no rank runs any more. Returns what it removed, one line each.
  std::vector<std::string> clean_up(const std::vector<pid_t>& ranks) const;

 private:
  std::string dir_;
  timespec start_{};
};

// The SysV shared-memory segments of key IPC_PRIVATE with no process attached that one of `pids`
// created, from the text of /proc/sysvipc/shm.
std::vector<int> orphaned_segments(const std::string& sysvipc_shm, const std::vector<pid_t>& pids);

// Of `paths`, those a live process holds open or maps (from /proc/*/fd and /proc/*/maps).
std::set<std::string> held_by_a_process(const std::set<std::string>& paths);

}  // namespace compas::run
