// The children of this process, and the end of those a job left behind. A launcher that is the
// subreaper of its descendants (set_subreaper) becomes the parent of every process they leave
// behind when their own parent ends (a daemon, `setsid cmd &`, a rank that left its process
// group): it finds them among its children and can end them, wherever their session or group.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

namespace compas::base {

// Turns PR_SET_CHILD_SUBREAPER on or off for this process. False when the kernel refuses.
bool set_subreaper(bool on);
// Whether this process is a subreaper now.
bool is_subreaper();

// This process's children (every thread's) other than those in `keep`. Those that have ended are
// reaped on the way and not returned; `keep` are never waited for.
std::vector<pid_t> other_children(const std::set<pid_t>& keep);

// Sends `sig` to each of other_children(keep). Returns how many it signalled.
int signal_other_children(const std::set<pid_t>& keep, int sig);

// Ends other_children(keep), and those that become children while it runs (the children of one
// that ends): SIGTERM, then SIGKILL to what is still there after `grace`, until none is left
// (or `grace` plus 5 s have passed). Returns what it ended, "PID (NAME)" each.
std::vector<std::string> end_other_children(const std::set<pid_t>& keep,
                                            std::chrono::milliseconds grace);

}  // namespace compas::base
