// Starting and supervising child processes, the pieces compas-run and the study share: the path
// execve needs for a program (PATH looked up as execvp would, with the reason a candidate could
// not run), what a child does between fork and exec (its process group, death with its parent, its
// descriptors, a clean signal state), the signals a supervisor reads through a signalfd, and a
// signal to a child's whole group.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <initializer_list>
#include <string>

namespace compas::base {

// Where execve finds `name`: itself when it holds a slash, else the first executable regular file
// `DIR/name` of PATH (an empty entry is "."; /usr/local/bin:/usr/bin:/bin without PATH). `path`
// is "" when there is none; `problem` then says why: "not found", or the first candidate that
// exists but cannot run ("'DIR/name' is a directory", "... is not executable").
struct ProgramPath {
  std::string path;
  std::string problem;
};
ProgramPath find_program(const std::string& name);

// What a child does between fork and exec, made before the fork: enter_child only makes
// async-signal-safe calls on it.
struct ChildSetup {
  pid_t pgid = 0;    // the process group to join; 0: one of its own, led by the child
  pid_t parent = 0;  // the parent's pid (getpid() before the fork)
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;  // dup2'ed onto 0, 1, 2; -1: kept
  sigset_t mask{};  // the signal mask the program starts with (a supervisor's old mask)
};

// In the child after fork: joins its group, dies with its parent (PR_SET_PDEATHSIG, SIGKILL),
// takes its descriptors, and sets every signal's action back to the default and the mask to
// s.mask. False when the parent had already ended (the caller then _exits): a death signal set
// after the parent's end would never come.
bool enter_child(const ChildSetup& s);

// Blocks `signals` for this thread (and the threads it starts) and returns a signalfd that reads
// them (non-blocking, close-on-exec); *old receives the mask before, which children get back
// (ChildSetup::mask). -1 with errno when the kernel refuses (the mask is then restored).
int signalfd_for(std::initializer_list<int> signals, sigset_t* old);

// Sends `sig` to the process group `leader` leads, and to `leader` itself when it is not in that
// group any more (setsid, setpgid) or the group is gone. False when neither could be signalled.
bool signal_group(pid_t leader, int sig);

}  // namespace compas::base
