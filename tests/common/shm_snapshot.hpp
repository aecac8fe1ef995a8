// Shared memory a job leaves behind: SysV segments and /dev/shm files (ShmSnapshot).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <ctime>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace compas::testing {

// One SysV shared-memory segment, as /proc/sysvipc/shm lists it.
struct SysvSegment {
  long long key = 0;
  int shmid = -1;
  unsigned perms = 0;  // with SHM_DEST (01000) once marked for removal (IPC_RMID)
  unsigned long long size = 0;
  pid_t cpid = 0, lpid = 0;  // creator, last to attach or detach
  unsigned long long nattch = 0;

  std::string describe() const;
};

std::vector<SysvSegment> sysv_segments();

// Paths among `paths` that a live process holds open or mapped (/proc/*/fd, /proc/*/maps).
std::set<std::string> in_use(const std::set<std::string>& paths);

// The shared memory there is now, to tell afterwards what a job left behind:
//  - SysV segments not there before and created by one of the job's processes (their cpid);
//  - files in /dev/shm not there before, created (ctime) between the snapshot and the check, owned
//    by this user, and that no live process holds open or mapped.
// UCX (1.13 here) shares memory between the processes of a host through its sysv transport
// (segments of key IPC_PRIVATE, marked for removal right after they are attached, so they go with
// the last process that maps them) and its posix transport (/dev/shm/ucx_shm_posix_<hex>,
// unlinked right after it is created; the peers open it through /proc/PID/fd): a job that is
// killed leaves nothing unless a process dies between creating one and marking or unlinking it.
// /dev/shm names carry no pid: under ctest -j, a file another test's job left in the same window
// would be counted too (segments cannot be mistaken: they are told apart by their creator).
class ShmSnapshot {
 public:
  explicit ShmSnapshot(std::string dir = "/dev/shm");

  // What the job of processes `pids` left, one line each naming it; empty when nothing. Waits up
  // to `seconds` for the leftovers to go: a segment goes at its last detach, once every process
  // of the job has exited, which may come a moment after the launcher's end.
  std::string leftovers(const std::set<pid_t>& pids, double seconds = 5) const;

 private:
  std::vector<std::pair<std::string, struct stat>> files() const;
  std::string find(const std::set<pid_t>& pids, const timespec& end) const;

  std::string dir_;
  std::set<int> shmids_;
  std::set<std::pair<std::string, ino_t>> files_;
  timespec start_{};
};

}  // namespace compas::testing
