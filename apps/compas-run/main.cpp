// compas-run: starts the P processes of a job on this host, T threads each, with the cores split
// between them (DESIGN.md, "Command line"; threads::process_slice). Each process is pinned to
// its slice before exec and finds the others through the tcp bootstrap, configured by COMPAS_*
// variables. The first process to fail ends the job: the others get SIGTERM, then SIGKILL after
// a grace period, and compas-run exits with the failing rank's status. Bad input exits 2.
//
// The rendezvous port: compas-run itself binds 127.0.0.1:0 and listens, and hands the listening
// socket to rank 0 (COMPAS_RENDEZVOUS_FD) along with its port (COMPAS_RENDEZVOUS). No other
// process can take the port between choosing it and rank 0 listening, so no retry is needed; a
// retry would mean restarting every rank of a job that may already have had side effects.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/threads/placement.hpp"
#include "compas/threads/topology.hpp"
#include "job_shm.hpp"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxProcesses = 4096;
constexpr int kMaxThreads = 4096;
// Time the processes get to exit after SIGTERM before SIGKILL.
constexpr auto kGrace = std::chrono::seconds(2);
// How long compas-run collects failures before naming the one that ended the job.
constexpr auto kSettle = std::chrono::milliseconds(100);
// How long output pipes are still read once every rank has exited.
constexpr auto kDrainAfterExit = std::chrono::seconds(1);
constexpr std::size_t kMaxLineBytes = 64 * 1024;

int parse_count(const char* flag, const std::string& text, int max, const char* what) {
  bool digits = !text.empty() && text.size() <= 9;
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  const long v = digits ? std::strtol(text.c_str(), nullptr, 10) : -1;
  if (v < 1 || v > max)
    throw std::invalid_argument(
        fmt::format("{} '{}' is not {}: expected an integer 1..{}", flag, text, what, max));
  return static_cast<int>(v);
}

double parse_seconds(const char* flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  const bool plain =
      !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.');
  if (!plain || errno || *end || !std::isfinite(v) || v < 0 || v > 1e7)
    throw std::invalid_argument(fmt::format(
        "{} '{}' is not a time limit: expected a number of seconds, 0 for none", flag, text));
  return v;
}

// The program as a path execve() can run: searched in PATH when it has no slash.
std::string find_program(const std::string& prog) {
  auto usable = [](const std::string& path, std::string* why) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      *why = "not found";
      return false;
    }
    if (S_ISDIR(st.st_mode)) {
      *why = "is a directory";
      return false;
    }
    if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) {
      *why = "is not executable";
      return false;
    }
    return true;
  };
  std::string why;
  if (prog.find('/') != std::string::npos) {
    if (!usable(prog, &why)) throw std::invalid_argument(fmt::format("program '{}' {}", prog, why));
    return prog;
  }
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::string first_problem;
  std::size_t start = 0;
  for (;;) {
    const auto colon = path.find(':', start);
    std::string dir = path.substr(start, colon == std::string::npos ? colon : colon - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + prog;
    if (usable(candidate, &why)) return candidate;
    if (why != "not found" && first_problem.empty())
      first_problem = fmt::format(" ('{}' {})", candidate, why);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  throw std::invalid_argument(fmt::format("program '{}' not found in PATH{}", prog, first_problem));
}

std::string random_token() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("cannot read random bytes for the job token");
    got += static_cast<std::size_t>(n);
  }
  std::string hex;
  for (unsigned char b : bytes) hex += fmt::format("{:02x}", b);
  return hex;
}

std::string signal_text(int sig) {
  const char* name = ::strsignal(sig);
  return fmt::format("signal {} ({})", sig, name ? name : "unknown");
}

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
    } else {
      return;  // our own output is gone (EPIPE, ...): drop it, keep the job going
    }
  }
}

void say(const std::string& line) {
  write_all(STDERR_FILENO, "compas-run: " + line + "\n");
}

// Output waiting for compas-run's stdout or stderr (--tag-output). Written only as far as the
// reader takes it without blocking, so a reader that stops reading (`| sleep 30`) never stalls the
// supervision loop (timeouts, signals, the first failure); above kMaxPendingBytes the ranks' pipes
// are not read until it drains, so the ranks wait on their own writes instead.
constexpr std::size_t kMaxPendingBytes = 4 << 20;
struct Outlet {
  int fd = STDOUT_FILENO;
  std::string pending;
  bool gone = false;  // the reader went away (EPIPE, ...): output is dropped

  // Writes what the reader takes now, PIPE_BUF bytes at a time (a pipe that polls writable
  // takes that many without blocking).
  void flush() {
    std::size_t done = 0;
    while (done < pending.size() && !gone) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 0) <= 0 || !(p.revents & POLLOUT)) break;
      const std::size_t chunk = std::min<std::size_t>(pending.size() - done, PIPE_BUF);
      const ssize_t n = ::write(fd, pending.data() + done, chunk);
      if (n > 0)
        done += static_cast<std::size_t>(n);
      else if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      else
        gone = true;
    }
    pending.erase(0, done);
    if (gone) pending.clear();
  }
  bool full() const { return pending.size() >= kMaxPendingBytes; }
};

// One output pipe of one rank, for --tag-output: complete lines are queued with the prefix.
struct Stream {
  int fd = -1;
  Outlet* target = nullptr;
  std::string prefix;
  std::string partial;

  void take(const char* data, std::size_t n) {
    std::string out;
    std::size_t start = 0;
    while (start < n) {
      const void* nl = std::memchr(data + start, '\n', n - start);
      if (!nl) break;
      const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(nl) - data);
      out += prefix;
      out += partial;
      partial.clear();
      out.append(data + start, end - start + 1);
      start = end + 1;
    }
    partial.append(data + start, n - start);
    if (partial.size() > kMaxLineBytes) {  // a line without end: pass it on in pieces
      out += prefix + partial + "\n";
      partial.clear();
    }
    if (!out.empty() && !target->gone) target->pending += out;
  }
  // At the end of the stream, the last line even if it has no newline.
  void finish() {
    if (!partial.empty() && !target->gone) target->pending += prefix + partial + "\n";
    partial.clear();
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct Rank {
  pid_t pid = -1;
  bool done = false;
  int exit_code = 0;  // when it exited
  int signal = 0;     // when it was killed
  bool failed() const { return signal != 0 || exit_code != 0; }
  std::string describe(int r) const {
    return signal ? fmt::format("rank {} was killed by {}", r, signal_text(signal))
                  : fmt::format("rank {} exited with status {}", r, exit_code);
  }
};

std::string plural(int n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

struct Options {
  int processes = 0;
  int threads = 1;
  std::string bind;
  bool tag_output = false;
  double timeout_s = 0;
  bool oversubscribe = false;
  std::string program;  // as given
  std::string path;     // as found
  std::vector<std::string> args;
};

// The child, between fork and exec: only system calls on data prepared before the fork.
[[noreturn]] void exec_child(const Options& o, int index, pid_t pgid, pid_t parent,
                             const sigset_t& old_mask, const cpu_set_t* cpus, std::size_t cpus_size,
                             int stdin_fd, int out_fd, int err_fd, int listen_fd, char* const* argv,
                             char* const* envp) {
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  ::setpgid(0, pgid);
  // Die with compas-run, even when it is killed without a chance to stop the job.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  if (stdin_fd >= 0) ::dup2(stdin_fd, STDIN_FILENO);
  if (out_fd >= 0) ::dup2(out_fd, STDOUT_FILENO);
  if (err_fd >= 0) ::dup2(err_fd, STDERR_FILENO);
  if (listen_fd >= 0 && index == 0) ::fcntl(listen_fd, F_SETFD, 0);  // rank 0 inherits it
  if (::sched_setaffinity(0, cpus_size, cpus) != 0) {
    const std::string msg = fmt::format("compas-run: rank {}: cannot bind to its cores: {}\n",
                                        index, std::strerror(errno));
    [[maybe_unused]] auto n = ::write(STDERR_FILENO, msg.data(), msg.size());
    ::_exit(127);
  }
  ::execve(o.path.c_str(), argv, envp);
  const std::string msg = fmt::format("compas-run: rank {}: cannot execute '{}': {}\n", index,
                                      o.path, std::strerror(errno));
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, msg.data(), msg.size());
  ::_exit(127);
}

int run_job(const Options& o) {
  using compas::threads::format_cpu_list;
  const int P = o.processes;
  const auto topo = compas::threads::Topology::host();

  // Slices and whether the job oversubscribes the machine.
  std::vector<std::vector<int>> slices(static_cast<std::size_t>(P));
  bool oversubscribed = false;
  int max_cpu = 0;
  for (int i = 0; i < P; ++i) {
    const auto set = compas::threads::process_slice(topo, i, P);
    auto& cpus = slices[static_cast<std::size_t>(i)];
    for (int pu : set.pu_indices)
      cpus.push_back(topo.pu_list()[static_cast<std::size_t>(pu)].os_index);
    std::sort(cpus.begin(), cpus.end());
    max_cpu = std::max(max_cpu, cpus.back());
    oversubscribed = oversubscribed || set.shared || o.threads > static_cast<int>(cpus.size());
  }
  if (oversubscribed && !o.oversubscribe)
    say(compas::threads::oversubscription_note(
        std::vector<int>(static_cast<std::size_t>(P), o.threads), topo.cores(), topo.pus()));

  // The rendezvous socket, handed to rank 0.
  int listen_fd = -1;
  int port = 0;
  if (P > 1) {
    listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = 0;
    socklen_t len = sizeof sa;
    if (listen_fd < 0 || ::bind(listen_fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
        ::listen(listen_fd, SOMAXCONN) != 0 ||
        ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
      say(fmt::format("cannot open the rendezvous socket on 127.0.0.1: {}", std::strerror(errno)));
      return 1;
    }
    port = ntohs(sa.sin_port);
  }
  const std::string token = random_token();
  compas::run::JobShm shm;

  // Environments and argv, all built before the first fork.
  std::set<std::string> ours = {"COMPAS_RANK",          "COMPAS_SIZE",       "COMPAS_RENDEZVOUS",
                                "COMPAS_RENDEZVOUS_FD", "COMPAS_JOB_TOKEN",  "COMPAS_THREADS",
                                "COMPAS_CPUS",          "COMPAS_LOCAL_RANK", "COMPAS_LOCAL_SIZE",
                                "COMPAS_OVERSUBSCRIBED"};
  if (!o.bind.empty()) ours.insert("COMPAS_BIND");
  std::vector<std::string> base_env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (!ours.count(entry.substr(0, entry.find('=')))) base_env.push_back(entry);
  }
  std::vector<std::vector<std::string>> env_s(static_cast<std::size_t>(P), base_env);
  std::vector<std::vector<char*>> envp(static_cast<std::size_t>(P));
  for (int i = 0; i < P; ++i) {
    auto& e = env_s[static_cast<std::size_t>(i)];
    e.push_back(fmt::format("COMPAS_RANK={}", i));
    e.push_back(fmt::format("COMPAS_SIZE={}", P));
    e.push_back(fmt::format("COMPAS_LOCAL_RANK={}", i));
    e.push_back(fmt::format("COMPAS_LOCAL_SIZE={}", P));
    e.push_back("COMPAS_JOB_TOKEN=" + token);
    e.push_back(fmt::format("COMPAS_THREADS={}", o.threads));
    e.push_back("COMPAS_CPUS=" + format_cpu_list(slices[static_cast<std::size_t>(i)]));
    if (!o.bind.empty()) e.push_back("COMPAS_BIND=" + o.bind);
    if (oversubscribed || o.oversubscribe) e.push_back("COMPAS_OVERSUBSCRIBED=1");
    if (P > 1) e.push_back(fmt::format("COMPAS_RENDEZVOUS=127.0.0.1:{}", port));
    if (i == 0 && listen_fd >= 0) e.push_back(fmt::format("COMPAS_RENDEZVOUS_FD={}", listen_fd));
    for (auto& s : e) envp[static_cast<std::size_t>(i)].push_back(s.data());
    envp[static_cast<std::size_t>(i)].push_back(nullptr);
  }
  std::vector<std::string> argv_s = {o.program};
  argv_s.insert(argv_s.end(), o.args.begin(), o.args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);

  const std::size_t cpus_size = CPU_ALLOC_SIZE(max_cpu + 1);
  std::vector<cpu_set_t*> cpu_sets;
  for (const auto& slice : slices) {
    cpu_set_t* set = CPU_ALLOC(max_cpu + 1);
    CPU_ZERO_S(cpus_size, set);
    for (int c : slice) CPU_SET_S(static_cast<std::size_t>(c), cpus_size, set);
    cpu_sets.push_back(set);
  }

  // Signals arrive through a signalfd; the children get the old mask back before exec.
  sigset_t mask, old_mask;
  sigemptyset(&mask);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&mask, s);
  ::sigprocmask(SIG_BLOCK, &mask, &old_mask);
  const int sig_fd = ::signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  ::signal(SIGPIPE, SIG_IGN);
  if (sig_fd < 0) {
    say(fmt::format("cannot create a signalfd: {}", std::strerror(errno)));
    return 1;
  }

  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const bool stdin_is_tty = ::isatty(STDIN_FILENO);
  std::vector<Stream> streams;
  Outlet outlets[2] = {{STDOUT_FILENO, {}, false}, {STDERR_FILENO, {}, false}};
  std::vector<Rank> ranks(static_cast<std::size_t>(P));
  const pid_t parent = ::getpid();
  pid_t pgid = 0;
  int started = 0;
  for (int i = 0; i < P; ++i) {
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    if (o.tag_output && (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0)) {
      say(fmt::format("cannot create pipes for rank {}: {}", i, std::strerror(errno)));
      break;
    }
    // Rank 0 reads our stdin unless it is a terminal (the job is not the terminal's foreground
    // process group); the others read nothing.
    const int stdin_fd = (i == 0 && !stdin_is_tty) ? -1 : devnull;
    const pid_t pid = ::fork();
    if (pid == 0)
      exec_child(o, i, pgid, parent, old_mask, cpu_sets[static_cast<std::size_t>(i)], cpus_size,
                 stdin_fd, out_pipe[1], err_pipe[1], listen_fd, argv.data(),
                 envp[static_cast<std::size_t>(i)].data());
    if (pid < 0) {
      say(fmt::format("cannot start rank {}: {}", i, std::strerror(errno)));
      break;
    }
    if (i == 0) pgid = pid;
    ::setpgid(pid, pgid);  // also done by the child: whichever runs first
    ranks[static_cast<std::size_t>(i)].pid = pid;
    ++started;
    if (o.tag_output) {
      ::close(out_pipe[1]);
      ::close(err_pipe[1]);
      const std::pair<int, Outlet*> fds[2] = {{out_pipe[0], &outlets[0]},
                                              {err_pipe[0], &outlets[1]}};
      for (const auto& [fd, target] : fds) {
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
        streams.push_back({fd, target, fmt::format("[{}] ", i), {}});
      }
    }
  }
  if (listen_fd >= 0) ::close(listen_fd);
  if (devnull >= 0) ::close(devnull);
  for (auto* set : cpu_sets) CPU_FREE(set);

  enum class Stop { none, failure, signal, timeout } stop = Stop::none;
  int exit_code = 0;
  int forwarded = 0;
  Clock::time_point kill_at = Clock::time_point::max();
  bool killed = false;
  const auto job_deadline = o.timeout_s > 0
                                ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                     std::chrono::duration<double>(o.timeout_s))
                                : Clock::time_point::max();
  auto running = [&] {
    int n = 0;
    for (int i = 0; i < started; ++i) n += !ranks[static_cast<std::size_t>(i)].done;
    return n;
  };
  // Signals every process of the job's group (never our own group: pgid 0 would mean that).
  auto signal_job = [&](int sig) {
    if (pgid > 0) ::kill(-pgid, sig);
  };
  int stop_signal = SIGTERM;
  auto stop_job = [&](Stop why) {
    stop = why;
    stop_signal = why == Stop::signal ? forwarded : SIGTERM;
    signal_job(stop_signal);
    kill_at = Clock::now() + kGrace;
  };
  if (started < P) {  // a failure to start is a failure of the job
    exit_code = 1;
    stop = Stop::failure;
    if (started > 0) stop_job(Stop::failure);
  }

  // Failures in the order they were seen. The first one is not reported at once: a rank that
  // loses a peer may exit with an error a moment before the peer's own death is reaped, so
  // compas-run waits kSettle for more and then names, of those, one killed by a signal first.
  std::vector<int> failures;
  Clock::time_point settle_until = Clock::time_point::max();
  // Reaps what has ended. Rank 0 leads the job's process group: it is only looked at (WNOWAIT)
  // and reaped last, so the group id cannot be reused while compas-run may still signal it.
  auto reap = [&] {
    for (int i = 0; i < started; ++i) {
      auto& r = ranks[static_cast<std::size_t>(i)];
      if (r.done) continue;
      siginfo_t info{};
      const int flags = WEXITED | WNOHANG | (i == 0 ? WNOWAIT : 0);
      if (::waitid(P_PID, static_cast<id_t>(r.pid), &info, flags) != 0 || info.si_pid == 0)
        continue;
      r.done = true;
      if (info.si_code == CLD_EXITED)
        r.exit_code = info.si_status;
      else
        r.signal = info.si_status;
      if (r.failed()) {
        if (failures.empty()) settle_until = Clock::now() + kSettle;
        failures.push_back(i);
      }
    }
    if (failures.empty() || stop != Stop::none) return;
    if (Clock::now() < settle_until && running() > 0) return;
    auto first = std::find_if(failures.begin(), failures.end(),
                              [&](int i) { return ranks[static_cast<std::size_t>(i)].signal; });
    const int culprit = first != failures.end() ? *first : failures.front();
    const auto& r = ranks[static_cast<std::size_t>(culprit)];
    exit_code = r.signal ? 128 + r.signal : r.exit_code;
    const int others = running();
    say(others ? fmt::format("{}; stopping the other {}", r.describe(culprit),
                             plural(others, "process", "processes"))
               : r.describe(culprit));
    stop_job(Stop::failure);
  };

  Clock::time_point drain_until = Clock::time_point::max();
  std::vector<pollfd> pfds;
  char buf[65536];
  for (;;) {
    reap();
    const auto now = Clock::now();
    if (running() == 0) {
      if (drain_until == Clock::time_point::max()) {
        // Nothing of the job may outlive it: whatever the ranks left in their group goes now.
        signal_job(SIGKILL);
        drain_until = now + kDrainAfterExit;
      }
      const bool open =
          std::any_of(streams.begin(), streams.end(), [](const Stream& s) { return s.fd >= 0; });
      const bool queued = !outlets[0].pending.empty() || !outlets[1].pending.empty();
      if ((!open && !queued) || now >= drain_until) break;
    }
    if (stop == Stop::none && now >= job_deadline) {
      say(fmt::format("timed out after {:g} s; stopping {}", o.timeout_s,
                      plural(running(), "process", "processes")));
      exit_code = 124;
      stop_job(Stop::timeout);
    }
    if (!killed && now >= kill_at) {
      const int left = running();
      if (left)
        say(fmt::format("{} still running {} s after {}; killing {}",
                        plural(left, "process", "processes"), kGrace.count(),
                        ::sigabbrev_np(stop_signal)
                            ? std::string("SIG") + ::sigabbrev_np(stop_signal)
                            : signal_text(stop_signal),
                        left == 1 ? "it" : "them"));
      signal_job(SIGKILL);
      killed = true;
    }

    auto wake = std::min({job_deadline, killed ? Clock::time_point::max() : kill_at, drain_until,
                          stop == Stop::none ? settle_until : Clock::time_point::max(),
                          now + std::chrono::seconds(1)});
    pfds.clear();
    pfds.push_back({sig_fd, POLLIN, 0});
    for (const auto& s : streams)
      if (s.fd >= 0 && !s.target->full()) pfds.push_back({s.fd, POLLIN, 0});
    for (const auto& out : outlets)
      if (!out.pending.empty()) pfds.push_back({out.fd, POLLOUT, 0});
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count() + 1;
    const int n =
        ::poll(pfds.data(), pfds.size(), static_cast<int>(std::clamp<long long>(ms, 0, 1000)));
    if (n <= 0) continue;

    signalfd_siginfo si;
    while (::read(sig_fd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
      const int sig = static_cast<int>(si.ssi_signo);
      if (sig == SIGCHLD) continue;  // reaped at the top of the loop
      if (stop == Stop::none && running() > 0) {
        forwarded = sig;
        say(fmt::format("received {}; forwarding it to {}", signal_text(sig),
                        plural(running(), "process", "processes")));
        exit_code = 128 + sig;
        stop_job(Stop::signal);
      } else if (stop != Stop::none && running() > 0 && !killed) {
        // A second request to stop: do it now.
        signal_job(SIGKILL);
        killed = true;
      }
    }
    for (auto& s : streams) {
      if (s.fd < 0 || s.target->full()) continue;
      for (;;) {
        const ssize_t got = ::read(s.fd, buf, sizeof buf);
        if (got > 0) {
          s.take(buf, static_cast<std::size_t>(got));
          if (static_cast<std::size_t>(got) < sizeof buf || s.target->full()) break;
          continue;
        }
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && errno == EAGAIN) break;
        s.finish();  // EOF or error
        break;
      }
    }
    for (auto& out : outlets) out.flush();
  }
  for (auto& s : streams) s.finish();
  // What the readers did not take by now is dropped, said in one line (bounded, like the drain).
  for (auto& out : outlets) out.flush();
  const std::size_t lost = outlets[0].pending.size() + outlets[1].pending.size();
  if (lost) say(fmt::format("{} bytes of the job's output were not taken by the reader", lost));
  if (started > 0) {
    int status = 0;
    ::waitpid(ranks[0].pid, &status, 0);  // rank 0, kept as a zombie until now
  }
  ::close(sig_fd);
  // What killed ranks left of their shared memory (none of them runs any more).
  if (exit_code != 0) {
    std::vector<pid_t> pids;
    for (int i = 0; i < started; ++i) pids.push_back(ranks[static_cast<std::size_t>(i)].pid);
    const auto removed = shm.clean_up(pids);
    if (!removed.empty())
      say(fmt::format("removed {} the killed ranks left: {}",
                      plural(static_cast<int>(removed.size()), "piece of shared memory",
                             "pieces of shared memory"),
                      fmt::join(removed, ", ")));
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "compas-run: start P processes of T threads each on this host, cores split "
      "between them",
      "compas-run"};
  std::string n_text, t_text = "1", timeout_text = "0";
  Options o;
  app.add_option("-n,--processes", n_text, "number of processes P, 1..4096")
      ->required()
      ->type_name("P");
  app.add_option("-t,--threads", t_text, "threads per process T (default 1), as COMPAS_THREADS")
      ->type_name("T");
  app.add_option("--bind", o.bind,
                 "thread placement in each process, as COMPAS_BIND: compact, scatter, sockets "
                 "(or a cpu list when P is 1)")
      ->type_name("POLICY");
  app.add_flag("--tag-output", o.tag_output, "prefix each output line of rank r with \"[r] \"");
  app.add_option("--timeout", timeout_text, "stop the job after S seconds (default 0: never)")
      ->type_name("S");
  app.add_flag("--oversubscribe", o.oversubscribe,
               "declare the job oversubscribed even when it fits the cores "
               "(COMPAS_OVERSUBSCRIBED=1, waits back off), and do not print the note");
  app.set_version_flag("--version", COMPAS_RUN_VERSION);
  app.prefix_command();
  app.footer(
      "Usage: compas-run -n P [-t T] [--bind POLICY] [--tag-output] [--timeout S] "
      "[--oversubscribe] PROG ARGS...\n"
      "PROG and ARGS are passed untouched. Each process runs pinned to its slice of the cores "
      "and gets COMPAS_RANK, COMPAS_SIZE, COMPAS_LOCAL_RANK, COMPAS_LOCAL_SIZE, COMPAS_THREADS, "
      "COMPAS_CPUS, COMPAS_RENDEZVOUS, COMPAS_JOB_TOKEN, COMPAS_BIND (with --bind) and "
      "COMPAS_OVERSUBSCRIBED=1 when P x T exceeds the PUs or processes share cores. The first "
      "process to fail stops the others; the exit status is its own (128+N for signal N), 124 "
      "after --timeout.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "compas-run: %s (see compas-run --help)\n", e.what());
    return 2;
  }
  try {
    o.processes = parse_count("-n", n_text, kMaxProcesses, "a process count");
    o.threads = parse_count("-t", t_text, kMaxThreads, "a thread count");
    o.timeout_s = parse_seconds("--timeout", timeout_text);
    if (app.count("--bind") && o.bind.empty())
      throw std::invalid_argument(
          "--bind '': an empty value is not allowed: compact, scatter, sockets or a cpu list");
    if (!o.bind.empty()) {
      compas::threads::BindSpec spec;
      try {
        spec = compas::threads::BindSpec::parse(o.bind);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("--bind: ") + e.what());
      }
      if (spec.policy == compas::threads::BindPolicy::list && o.processes > 1)
        throw std::invalid_argument(fmt::format(
            "--bind '{}': a cpu list places the threads of one process; with -n {} use compact, "
            "scatter or sockets (each process gets its own slice of the cores)",
            o.bind, o.processes));
    }
    auto rest = app.remaining();
    if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());
    if (rest.empty())
      throw std::invalid_argument("no program given: usage: compas-run -n P [-t T] PROG ARGS...");
    if (rest.front().size() > 1 && rest.front()[0] == '-')
      throw std::invalid_argument(fmt::format(
          "unknown option '{}' (options go before PROG; see compas-run --help)", rest.front()));
    o.program = rest.front();
    o.args.assign(rest.begin() + 1, rest.end());
    o.path = find_program(o.program);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "compas-run: %s\n", e.what());
    return 2;
  }
  try {
    return run_job(o);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "compas-run: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compas-run: failed: %s\n", e.what());
    return 1;
  }
}
