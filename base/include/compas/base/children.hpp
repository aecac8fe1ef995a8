// The children of this process, and the end of those a job left behind. A launcher that is the
// subreaper of its descendants (set_subreaper) becomes the parent of every process they leave
// behind when their own parent ends (a daemon, `setsid cmd &`, a rank that left its process
// group): it finds them among its children and can end them, wherever their session or group.
// Once the launcher itself is gone (killed with SIGKILL) they are re-parented to init: what the
// launcher marked in their environment (an entry every process of the job inherits) still finds
// them (processes_carrying), and ends them (end_processes_carrying).
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

// The processes of this user, other than this one, whose environment as they were started
// (/proc/PID/environ) holds `entry` ("NAME=VALUE") as one whole entry: "NAME=VALUEx" or
// "XNAME=VALUE" do not count. Zombies carry nothing.
std::vector<pid_t> processes_carrying(const std::string& entry);

// Ends processes_carrying(entry), and those that carry it while this runs, as end_other_children
// does: SIGTERM, then SIGKILL after `grace`, until none is left (or `grace` plus 5 s have passed).
// Each signal goes through a pidfd opened before the entry is checked, so that a process that
// ended and left its pid to another one in between is never signalled. Returns "PID (NAME)" each.
std::vector<std::string> end_processes_carrying(const std::string& entry,
                                                std::chrono::milliseconds grace);

}  // namespace compas::base
