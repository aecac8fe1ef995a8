// compas-run's job: the cores split into slices, the rendezvous socket, each rank's environment,
// the ranks started pinned to their slices (Job's launch phases), then supervised until the last
// one ends: failures, signals, the time limit, --tag-output and the clean-up (its loop phases).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "abort_notices.hpp"
#include "common.hpp"
#include "compas/base/children.hpp"
#include "compas/base/spawn.hpp"
#include "compas/base/stop_schedule.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/topology.hpp"
#include "guardian.hpp"
#include "job_shm.hpp"
#include "output.hpp"

extern char** environ;

namespace compas::run {

namespace {

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

// The child, between fork and exec: only system calls on data prepared before the fork.
[[noreturn]] void exec_child(const Options& o, int index, pid_t pgid, pid_t parent,
                             const sigset_t& old_mask, const cpu_set_t* cpus, std::size_t cpus_size,
                             int stdin_fd, int out_fd, int err_fd, int listen_fd, int abort_fd,
                             char* const* argv, char* const* envp) {
  // Its group, death with compas-run (even when compas-run is killed without a chance to stop
  // the job), its descriptors, the signal state compas-run started with.
  base::ChildSetup setup;
  setup.pgid = pgid;
  setup.parent = parent;
  setup.stdin_fd = stdin_fd;
  setup.stdout_fd = out_fd;
  setup.stderr_fd = err_fd;
  setup.mask = old_mask;
  if (!base::enter_child(setup)) ::_exit(127);
  if (listen_fd >= 0 && index == 0) ::fcntl(listen_fd, F_SETFD, 0);  // rank 0 inherits it
  if (abort_fd >= 0) ::fcntl(abort_fd, F_SETFD, 0);                  // every rank inherits it
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

class Job {
 public:
  explicit Job(const Options& o) : o_(o), P_(o.processes), ranks_(static_cast<std::size_t>(P_)) {}
  int run();

 private:
  enum class Stop { none, failure, signal, timeout };

  // Launch.
  void plan_slices();
  bool open_rendezvous();
  void build_environments();
  void build_argv();
  void make_cpu_sets();
  bool block_signals();
  void start_ranks();
  // Supervision.
  int running() const;
  std::set<pid_t> unreaped_ranks() const;
  std::set<pid_t> kept() const;
  void signal_job(int sig);
  void end_leftovers();
  void stop_job(Stop why);
  void reap();
  void name_the_failure();
  bool drained(Clock::time_point now);
  void check_limits(Clock::time_point now);
  void wait_for_events(Clock::time_point now);
  void take_signals();
  void read_streams();
  int finish();

  const Options& o_;
  const int P_;
  // The slices of cores (OS indices, sorted) and whether the job oversubscribes the machine.
  std::vector<std::vector<int>> slices_;
  bool oversubscribed_ = false;
  int max_cpu_ = 0;
  int listen_fd_ = -1, port_ = 0;
  std::string token_;
  Guardian guardian_;
  JobShm shm_;
  AbortNotices notices_;
  // Environments, argv and cpu sets, all built before the first fork.
  std::vector<std::vector<std::string>> env_s_;
  std::vector<std::vector<char*>> envp_;
  std::vector<std::string> argv_s_;
  std::vector<char*> argv_;
  std::size_t cpus_size_ = 0;
  std::vector<cpu_set_t*> cpu_sets_;
  sigset_t old_mask_{};
  int sig_fd_ = -1;
  std::vector<Stream> streams_;
  Outlet* outlets_[2] = {&stdout_outlet(), &stderr_outlet()};
  std::vector<Rank> ranks_;
  pid_t pgid_ = 0;
  int started_ = 0;
  // The supervision's state.
  Stop stop_ = Stop::none;
  int exit_code_ = 0;
  int forwarded_ = 0;
  int stop_signal_ = SIGTERM;
  // The time limit, the grace after a stop, SIGKILL.
  base::StopSchedule schedule_{std::chrono::duration_cast<std::chrono::milliseconds>(kGrace)};
  // Failures in the order they were seen. The first one is not reported at once: a rank that
  // loses a peer may exit with an error a moment before the peer's own death is reaped, so
  // compas-run waits kSettle for more and then names, of those, one killed by a signal first,
  // then a rank that told of its abort (name_the_failure).
  std::vector<int> failures_;
  std::size_t before_notice_ = 0;  // how many of them ended before any abort notice came
  Clock::time_point settle_until_ = Clock::time_point::max();
  Clock::time_point drain_until_ = Clock::time_point::max();
};

void Job::plan_slices() {
  const auto topo = threads::Topology::host();
  slices_.assign(static_cast<std::size_t>(P_), {});
  for (int i = 0; i < P_; ++i) {
    const auto set = threads::process_slice(topo, i, P_);
    auto& cpus = slices_[static_cast<std::size_t>(i)];
    for (int pu : set.pu_indices)
      cpus.push_back(topo.pu_list()[static_cast<std::size_t>(pu)].os_index);
    std::sort(cpus.begin(), cpus.end());
    max_cpu_ = std::max(max_cpu_, cpus.back());
    oversubscribed_ = oversubscribed_ || set.shared || o_.threads > static_cast<int>(cpus.size());
  }
  if (oversubscribed_ && !o_.oversubscribe)
    say(threads::oversubscription_note(std::vector<int>(static_cast<std::size_t>(P_), o_.threads),
                                       topo.cores(), topo.pus()));
}

// The rendezvous socket, handed to rank 0.
bool Job::open_rendezvous() {
  if (P_ <= 1) return true;
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = 0;
  socklen_t len = sizeof sa;
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      ::listen(listen_fd_, SOMAXCONN) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
    say(fmt::format("cannot open the rendezvous socket on 127.0.0.1: {}", std::strerror(errno)));
    return false;
  }
  port_ = ntohs(sa.sin_port);
  return true;
}

void Job::build_environments() {
  std::set<std::string> ours = {"COMPAS_RANK",           "COMPAS_SIZE",       "COMPAS_RENDEZVOUS",
                                "COMPAS_RENDEZVOUS_FD",  "COMPAS_JOB_TOKEN",  "COMPAS_THREADS",
                                "COMPAS_CPUS",           "COMPAS_LOCAL_RANK", "COMPAS_LOCAL_SIZE",
                                "COMPAS_OVERSUBSCRIBED", "COMPAS_ABORT_FD"};
  if (!o_.bind.empty()) ours.insert("COMPAS_BIND");
  std::vector<std::string> base_env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (!ours.count(entry.substr(0, entry.find('=')))) base_env.push_back(entry);
  }
  env_s_.assign(static_cast<std::size_t>(P_), base_env);
  envp_.assign(static_cast<std::size_t>(P_), {});
  for (int i = 0; i < P_; ++i) {
    auto& e = env_s_[static_cast<std::size_t>(i)];
    e.push_back(fmt::format("COMPAS_RANK={}", i));
    e.push_back(fmt::format("COMPAS_SIZE={}", P_));
    e.push_back(fmt::format("COMPAS_LOCAL_RANK={}", i));
    e.push_back(fmt::format("COMPAS_LOCAL_SIZE={}", P_));
    e.push_back("COMPAS_JOB_TOKEN=" + token_);
    e.push_back(fmt::format("COMPAS_THREADS={}", o_.threads));
    e.push_back("COMPAS_CPUS=" + threads::format_cpu_list(slices_[static_cast<std::size_t>(i)]));
    if (!o_.bind.empty()) e.push_back("COMPAS_BIND=" + o_.bind);
    if (oversubscribed_ || o_.oversubscribe) e.push_back("COMPAS_OVERSUBSCRIBED=1");
    if (P_ > 1) e.push_back(fmt::format("COMPAS_RENDEZVOUS=127.0.0.1:{}", port_));
    if (i == 0 && listen_fd_ >= 0) e.push_back(fmt::format("COMPAS_RENDEZVOUS_FD={}", listen_fd_));
    if (notices_.writing_end() >= 0)
      e.push_back(fmt::format("COMPAS_ABORT_FD={}", notices_.writing_end()));
    for (auto& s : e) envp_[static_cast<std::size_t>(i)].push_back(s.data());
    envp_[static_cast<std::size_t>(i)].push_back(nullptr);
  }
}

void Job::build_argv() {
  argv_s_ = {o_.program};
  argv_s_.insert(argv_s_.end(), o_.args.begin(), o_.args.end());
  for (auto& s : argv_s_) argv_.push_back(s.data());
  argv_.push_back(nullptr);
}

void Job::make_cpu_sets() {
  cpus_size_ = CPU_ALLOC_SIZE(max_cpu_ + 1);
  for (const auto& slice : slices_) {
    cpu_set_t* set = CPU_ALLOC(max_cpu_ + 1);
    CPU_ZERO_S(cpus_size_, set);
    for (int c : slice) CPU_SET_S(static_cast<std::size_t>(c), cpus_size_, set);
    cpu_sets_.push_back(set);
  }
}

// Signals arrive through a signalfd; the children get the old mask back before exec.
bool Job::block_signals() {
  sig_fd_ = base::signalfd_for({SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}, &old_mask_);
  ::signal(SIGPIPE, SIG_IGN);
  if (sig_fd_ < 0) {
    say(fmt::format("cannot create a signalfd: {}", std::strerror(errno)));
    return false;
  }
  return true;
}

void Job::start_ranks() {
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const bool stdin_is_tty = ::isatty(STDIN_FILENO);
  const pid_t parent = ::getpid();
  for (int i = 0; i < P_; ++i) {
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    if (o_.tag_output && (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0)) {
      say(fmt::format("cannot create pipes for rank {}: {}", i, std::strerror(errno)));
      break;
    }
    // Rank 0 reads our stdin unless it is a terminal (the job is not the terminal's foreground
    // process group); the others read nothing.
    const int stdin_fd = (i == 0 && !stdin_is_tty) ? -1 : devnull;
    const pid_t pid = ::fork();
    if (pid == 0)
      exec_child(o_, i, pgid_, parent, old_mask_, cpu_sets_[static_cast<std::size_t>(i)],
                 cpus_size_, stdin_fd, out_pipe[1], err_pipe[1], listen_fd_, notices_.writing_end(),
                 argv_.data(), envp_[static_cast<std::size_t>(i)].data());
    if (pid < 0) {
      say(fmt::format("cannot start rank {}: {}", i, std::strerror(errno)));
      break;
    }
    if (i == 0) pgid_ = pid;
    ::setpgid(pid, pgid_);  // also done by the child: whichever runs first
    ranks_[static_cast<std::size_t>(i)].pid = pid;
    ++started_;
    if (o_.tag_output) {
      ::close(out_pipe[1]);
      ::close(err_pipe[1]);
      const std::pair<int, Outlet*> fds[2] = {{out_pipe[0], outlets_[0]},
                                              {err_pipe[0], outlets_[1]}};
      for (const auto& [fd, target] : fds) {
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
        streams_.push_back({fd, target, fmt::format("[{}] ", i), {}});
      }
    }
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  notices_.close_writing_end();
  if (devnull >= 0) ::close(devnull);
  for (auto* set : cpu_sets_) CPU_FREE(set);
  cpu_sets_.clear();
}

int Job::running() const {
  int n = 0;
  for (int i = 0; i < started_; ++i) n += !ranks_[static_cast<std::size_t>(i)].done;
  return n;
}

// The ranks' pids that still name them: those not reaped yet (rank 0 is reaped last).
std::set<pid_t> Job::unreaped_ranks() const {
  std::set<pid_t> pids;
  for (int i = 0; i < started_; ++i) {
    const auto& r = ranks_[static_cast<std::size_t>(i)];
    if (!r.done || i == 0) pids.insert(r.pid);
  }
  return pids;
}

// The children compas-run's clean-up leaves alone: the ranks not reaped yet and the guardian.
std::set<pid_t> Job::kept() const {
  auto pids = unreaped_ranks();
  if (guardian_.pid() > 0) pids.insert(guardian_.pid());
  return pids;
}

// Signals every process of the job: the job's group (never our own group: pgid 0 would mean
// that), each rank still running (one may have left the group: setsid, setpgid), and what the
// ranks left behind and compas-run, their subreaper, has inherited.
void Job::signal_job(int sig) {
  if (pgid_ > 0) ::kill(-pgid_, sig);
  for (int i = 0; i < started_; ++i) {
    const auto& r = ranks_[static_cast<std::size_t>(i)];
    if (!r.done) ::kill(r.pid, sig);
  }
  base::signal_other_children(kept(), sig);
}

// Once every rank has ended: whatever is left of the job goes, in the ranks' group at once (as
// before the ranks' own end, nothing there may outlive them), elsewhere (a process started with
// setsid, a daemon) with SIGTERM and SIGKILL after the grace.
void Job::end_leftovers() {
  if (pgid_ > 0) ::kill(-pgid_, SIGKILL);
  const auto ended = base::end_other_children(
      kept(), std::chrono::duration_cast<std::chrono::milliseconds>(kGrace));
  if (!ended.empty())
    say(fmt::format("ended {} the job left running: {}",
                    plural(static_cast<int>(ended.size()), "process", "processes"),
                    fmt::join(ended, ", ")));
}

void Job::stop_job(Stop why) {
  stop_ = why;
  stop_signal_ = why == Stop::signal ? forwarded_ : SIGTERM;
  signal_job(stop_signal_);
  schedule_.stop(Clock::now());
}

// Reaps what has ended. Rank 0 leads the job's process group: it is only looked at (WNOWAIT)
// and reaped last, so the group id cannot be reused while compas-run may still signal it.
void Job::reap() {
  for (int i = 0; i < started_; ++i) {
    auto& r = ranks_[static_cast<std::size_t>(i)];
    if (r.done) continue;
    siginfo_t info{};
    const int flags = WEXITED | WNOHANG | (i == 0 ? WNOWAIT : 0);
    if (::waitid(P_PID, static_cast<id_t>(r.pid), &info, flags) != 0 || info.si_pid == 0) continue;
    r.done = true;
    if (info.si_code == CLD_EXITED)
      r.exit_code = info.si_status;
    else
      r.signal = info.si_status;
    if (r.failed()) {
      if (failures_.empty()) settle_until_ = Clock::now() + kSettle;
      failures_.push_back(i);
    }
  }
  // Read after the reaping: a failure reaped while no notice has come ended before any rank
  // aborted.
  if (!notices_.first(P_)) before_notice_ = failures_.size();
  base::other_children(kept());  // reaps what the job left behind and has ended
  name_the_failure();
}

// Once the failures have settled: the one that ends the job, said, and the others stopped. A rank
// killed by a signal first; else a rank that told of its abort, unless a rank had ended before
// its notice came (the notice is written before the aborting rank exits, so the peers that lose
// it end after it is in the pipe); else the first that ended.
void Job::name_the_failure() {
  if (failures_.empty() || stop_ != Stop::none) return;
  if (Clock::now() < settle_until_ && running() > 0) return;
  auto first = std::find_if(failures_.begin(), failures_.end(),
                            [&](int i) { return ranks_[static_cast<std::size_t>(i)].signal; });
  auto told = notices_.first(P_);
  if (first != failures_.end() || before_notice_ > 0) told.reset();
  const int culprit = told ? told->rank : first != failures_.end() ? *first : failures_.front();
  const auto& r = ranks_[static_cast<std::size_t>(culprit)];
  exit_code_ = told ? told->status : r.signal ? 128 + r.signal : r.exit_code;
  // A rank that told is at its exit: said as it will end, and not among those stopped.
  const std::string what = told ? fmt::format("rank {} exited with status {}", culprit, exit_code_)
                                : r.describe(culprit);
  const int others = running() - (told && !r.done ? 1 : 0);
  say(others
          ? fmt::format("{}; stopping the other {}", what, plural(others, "process", "processes"))
          : what);
  stop_job(Stop::failure);
}

// True when every rank has ended and their output is drained (or its time is up).
bool Job::drained(Clock::time_point now) {
  if (running() != 0) return false;
  if (drain_until_ == Clock::time_point::max()) {
    // Nothing of the job may outlive it.
    end_leftovers();
    drain_until_ = Clock::now() + kDrainAfterExit;
  }
  const bool open =
      std::any_of(streams_.begin(), streams_.end(), [](const Stream& s) { return s.fd >= 0; });
  const bool queued = !outlets_[0]->empty() || !outlets_[1]->empty();
  return (!open && !queued) || now >= drain_until_;
}

// The job's time limit, and SIGKILL once the grace after a stop is over.
void Job::check_limits(Clock::time_point now) {
  if (stop_ == Stop::none && schedule_.deadline_passed(now)) {
    say(fmt::format("timed out after {:g} s; stopping {}", o_.timeout_s,
                    plural(running(), "process", "processes")));
    exit_code_ = 124;
    stop_job(Stop::timeout);
  }
  if (schedule_.kill_due(now)) {
    const int left = running();
    if (left)
      say(fmt::format("{} still running {} s after {}; killing {}",
                      plural(left, "process", "processes"), kGrace.count(),
                      ::sigabbrev_np(stop_signal_)
                          ? std::string("SIG") + ::sigabbrev_np(stop_signal_)
                          : signal_text(stop_signal_),
                      left == 1 ? "it" : "them"));
    signal_job(SIGKILL);
  }
}

// Polls the signalfd, the ranks' pipes and the outlets with output queued, until the next
// deadline (at most a second), then handles what came.
void Job::wait_for_events(Clock::time_point now) {
  const auto wake = std::min({schedule_.next(), drain_until_,
                              stop_ == Stop::none ? settle_until_ : Clock::time_point::max(),
                              now + std::chrono::seconds(1)});
  std::vector<pollfd> pfds;
  pfds.push_back({sig_fd_, POLLIN, 0});
  for (const auto& s : streams_)
    if (s.fd >= 0 && !s.target->full()) pfds.push_back({s.fd, POLLIN, 0});
  for (const auto* out : outlets_)
    if (!out->empty() && !out->gone()) pfds.push_back({out->fd(), POLLOUT, 0});
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count() + 1;
  const int n =
      ::poll(pfds.data(), pfds.size(), static_cast<int>(std::clamp<long long>(ms, 0, 1000)));
  if (n <= 0) return;
  take_signals();
  read_streams();
  for (auto* out : outlets_) out->flush();
}

void Job::take_signals() {
  signalfd_siginfo si;
  while (::read(sig_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
    const int sig = static_cast<int>(si.ssi_signo);
    if (sig == SIGCHLD) continue;  // reaped at the top of the loop
    if (stop_ == Stop::none && running() > 0) {
      forwarded_ = sig;
      say(fmt::format("received {}; forwarding it to {}", signal_text(sig),
                      plural(running(), "process", "processes")));
      exit_code_ = 128 + sig;
      stop_job(Stop::signal);
    } else if (stop_ != Stop::none && running() > 0 && schedule_.kill_now()) {
      // A second request to stop: do it now.
      signal_job(SIGKILL);
    }
  }
}

void Job::read_streams() {
  static char buf[65536];
  for (auto& s : streams_) {
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
}

// After the loop: the last output, rank 0 reaped, and what killed ranks left in shared memory.
int Job::finish() {
  for (auto& s : streams_) s.finish();
  // What the readers have not taken by the end of the drain is dropped, said in one line.
  const auto until = std::min(drain_until_, Clock::now() + kDrainAfterExit);
  for (auto* out : outlets_) out->flush_until(until);
  const std::size_t lost = outlets_[0]->pending() + outlets_[1]->pending();
  if (lost) say(fmt::format("{} bytes of output were not taken by the reader", lost));
  if (started_ > 0) {
    int status = 0;
    ::waitpid(ranks_[0].pid, &status, 0);  // rank 0, kept as a zombie until now
  }
  guardian_.dismiss();  // what the job left was ended in drained()
  ::close(sig_fd_);
  if (exit_code_ != 0) {
    std::vector<pid_t> pids;
    for (int i = 0; i < started_; ++i) pids.push_back(ranks_[static_cast<std::size_t>(i)].pid);
    const auto removed = shm_.clean_up(pids);
    if (!removed.empty())
      say(fmt::format("removed {} the killed ranks left: {}",
                      plural(static_cast<int>(removed.size()), "piece of shared memory",
                             "pieces of shared memory"),
                      fmt::join(removed, ", ")));
  }
  outlets_[1]->flush_until(until);  // what was said since, as far as the reader takes it now
  return exit_code_;
}

int Job::run() {
  // What a rank leaves behind (a process that left the job's group, or whose parent ended) becomes
  // compas-run's child instead of init's, so that it can be found and ended with the job.
  if (!base::set_subreaper(true))
    say(
        fmt::format("cannot become the subreaper of the job ({}): processes that leave the "
                    "job's process group may outlive it",
                    std::strerror(errno)));
  // Forked first, while compas-run is one thread and holds nothing of the job.
  token_ = random_token();
  guardian_.start("COMPAS_JOB_TOKEN=" + token_);
  plan_slices();
  if (!open_rendezvous()) return 1;
  if (!notices_.open())
    say(fmt::format("cannot open the pipe of abort notices: {}", std::strerror(errno)));
  build_environments();
  build_argv();
  make_cpu_sets();
  if (!block_signals()) return 1;
  start_ranks();
  schedule_.set_time_limit(Clock::now(), o_.timeout_s);
  if (started_ < P_) {  // a failure to start is a failure of the job
    exit_code_ = 1;
    stop_ = Stop::failure;
    if (started_ > 0) stop_job(Stop::failure);
  }
  for (;;) {
    reap();
    const auto now = Clock::now();
    if (drained(now)) break;
    check_limits(now);
    wait_for_events(now);
  }
  return finish();
}

}  // namespace

int run_job(const Options& o) {
  return Job(o).run();
}

}  // namespace compas::run
