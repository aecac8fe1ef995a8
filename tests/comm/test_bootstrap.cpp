// Tests of the bootstrap inside one process: which kind the environment selects, validation of
// the COMPAS_* variables, and tcp jobs whose ranks are threads of this test (the bootstrap is
// thread-safe and does not care), including junk connections, wrong tokens, duplicate ranks,
// collective mismatches and timeouts. Multi-process behaviour is in test_launch.cpp.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "compas/comm/bootstrap.hpp"
#include "compas/comm/comm.hpp"
#include "handshake.hpp"
#include "ucx_tls.hpp"

namespace {

using compas::comm::Bootstrap;
using compas::comm::BootstrapError;
using compas::comm::TcpOptions;
namespace wire = compas::comm::wire;
using Clock = std::chrono::steady_clock;

// Clears every variable the bootstrap looks at, sets the given ones, and restores all on exit.
using Vars = std::map<std::string, std::string>;

class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::string>& set = {}) {
    for (const char* v :
         {"COMPAS_RANK", "COMPAS_SIZE", "COMPAS_RENDEZVOUS", "COMPAS_JOB_TOKEN", "COMPAS_TIMEOUT",
          "COMPAS_RENDEZVOUS_FD", "COMPAS_BOOTSTRAP_MAX_FRAME", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
          "PMIX_RANK", "SLURM_NTASKS", "SLURM_PROCID"}) {
      if (const char* old = std::getenv(v))
        saved_[v] = old;
      else
        saved_[v] = std::nullopt;
      ::unsetenv(v);
    }
    for (const auto& [k, v] : set) {
      if (!saved_.count(k)) {
        const char* old = std::getenv(k.c_str());
        saved_[k] = old ? std::optional<std::string>(old) : std::nullopt;
      }
      ::setenv(k.c_str(), v.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [k, v] : saved_) {
      if (v)
        ::setenv(k.c_str(), v->c_str(), 1);
      else
        ::unsetenv(k.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

// A socket listening on 127.0.0.1 at a port the kernel chose.
struct Listener {
  int fd = -1;
  int port = 0;
  explicit Listener(int backlog = 512) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
        ::listen(fd, backlog) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
    port = ntohs(sa.sin_port);
  }
};

// A job token of the length the bootstrap asks for (compas-run makes 32 random hex digits).
const std::string kToken = "0123456789abcdef-test-token";

TcpOptions options(int rank, int size, int port, double timeout_s = 10,
                   const std::string& token = kToken) {
  TcpOptions o;
  o.rank = rank;
  o.size = size;
  o.port = port;
  o.token = token;
  o.timeout_s = timeout_s;
  return o;
}

// Runs `body` on `size` ranks, one thread each; rank 0 adopts a fresh listener. Returns each
// rank's exception message ("" when it succeeded).
std::vector<std::string> run_job(int size, const std::function<void(Bootstrap&)>& body,
                                 double timeout_s = 10, std::function<void(int port)> before = {}) {
  Listener l;
  if (before) before(l.port);
  std::vector<std::string> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      try {
        auto o = options(r, size, l.port, timeout_s);
        if (r == 0) o.listen_fd = l.fd;
        auto bs = Bootstrap::tcp(o);
        body(*bs);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads from `fd` until the peer closes or `seconds` pass; returns what came, and whether it
// closed.
std::pair<std::string, bool> read_until_closed(int fd, double seconds) {
  std::string got;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return {got, true};
    got.append(buf, static_cast<std::size_t>(n));
  }
  return {got, false};
}

// ---- choosing a bootstrap ----------------------------------------------------------------------

TEST(BootstrapChoice, SingleWithoutLauncher) {
  ScopedEnv env;
  EXPECT_EQ(compas::comm::choose_bootstrap().kind, "single");
  auto bs = Bootstrap::from_environment();
  EXPECT_EQ(bs->kind(), "single");
  EXPECT_EQ(bs->rank(), 0);
  EXPECT_EQ(bs->size(), 1);
  EXPECT_EQ(bs->allgather("me"), std::vector<std::string>{"me"});
  bs->barrier();
}

TEST(BootstrapChoice, LauncherVariables) {
  {
    ScopedEnv env(Vars{{"OMPI_COMM_WORLD_SIZE", "2"}});
    EXPECT_EQ(compas::comm::choose_bootstrap().kind, "mpi");
    EXPECT_EQ(compas::comm::choose_bootstrap().reason, "OMPI_COMM_WORLD_SIZE");
  }
  for (const char* v : {"PMI_SIZE", "PMIX_RANK"}) {
    ScopedEnv env(Vars{{v, "0"}});
    EXPECT_EQ(compas::comm::choose_bootstrap().kind, "mpi") << v;
  }
  {
    ScopedEnv env(Vars{{"SLURM_NTASKS", "4"}});  // an allocation, but not a task of srun
    EXPECT_EQ(compas::comm::choose_bootstrap().kind, "single");
  }
  {
    ScopedEnv env(Vars{{"SLURM_NTASKS", "4"}, {"SLURM_PROCID", "1"}});
    EXPECT_EQ(compas::comm::choose_bootstrap().kind, "mpi");
  }
  {
    // compas-run inside an MPI allocation: its variables win.
    ScopedEnv env(Vars{{"OMPI_COMM_WORLD_SIZE", "2"}, {"COMPAS_RANK", "0"}, {"COMPAS_SIZE", "1"}});
    EXPECT_EQ(compas::comm::choose_bootstrap().kind, "tcp");
    EXPECT_EQ(Bootstrap::from_environment()->kind(), "tcp");
  }
}

TEST(BootstrapChoice, MpiLauncherWithoutMpiSupportIsAClearError) {
  if (Bootstrap::mpi_supported()) GTEST_SKIP() << "built with MPI";
  ScopedEnv env(Vars{{"OMPI_COMM_WORLD_SIZE", "2"}});
  try {
    Bootstrap::from_environment();
    FAIL() << "expected an error";
  } catch (const BootstrapError& e) {
    EXPECT_NE(std::string(e.what()).find("without MPI support"), std::string::npos) << e.what();
  }
}

TEST(BootstrapChoice, HostIdIsStable) {
  EXPECT_FALSE(compas::comm::host_id().empty());
  EXPECT_EQ(compas::comm::host_id(), compas::comm::host_id());
}

// ---- environment validation --------------------------------------------------------------------

TEST(CommEnvironment, ReadsTheNodeBarrierAndRejectsBadValuesNamingThem) {
  using compas::comm::CommOptions;
  using compas::comm::NodeBarrier;
  EXPECT_EQ(CommOptions{}.node_barrier, NodeBarrier::automatic);
  for (const auto& [value, want] :
       std::map<std::string, NodeBarrier>{{"dissemination", NodeBarrier::dissemination},
                                          {"host", NodeBarrier::host},
                                          {"auto", NodeBarrier::automatic}}) {
    ScopedEnv env(Vars{{"COMPAS_NODE_BARRIER", value}});
    EXPECT_EQ(CommOptions::from_environment().node_barrier, want) << value;
  }
  for (const auto& [var, value] :
       std::map<std::string, std::string>{{"COMPAS_NODE_BARRIER", "tree"},
                                          {"COMPAS_PROGRESS", "never"},
                                          {"COMPAS_DIRECT", "yes"},
                                          {"COMPAS_TIMEOUT", "-1"}}) {
    ScopedEnv env(Vars{{var, value}});
    try {
      CommOptions::from_environment();
      ADD_FAILURE() << var << "=" << value << " was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(var), std::string::npos) << what;
      EXPECT_NE(what.find("'" + value + "'"), std::string::npos) << what;
    }
  }
}

TEST(TcpEnvironment, ReadsWhatCompasRunSets) {
  ScopedEnv env(Vars{{"COMPAS_RANK", "2"},
                     {"COMPAS_SIZE", "4"},
                     {"COMPAS_RENDEZVOUS", "localhost:4567"},
                     {"COMPAS_JOB_TOKEN", kToken},
                     {"COMPAS_TIMEOUT", "2.5"},
                     {"COMPAS_BOOTSTRAP_MAX_FRAME", "65536"}});
  const auto o = TcpOptions::from_environment();
  EXPECT_EQ(o.rank, 2);
  EXPECT_EQ(o.size, 4);
  EXPECT_EQ(o.host, "localhost");
  EXPECT_EQ(o.port, 4567);
  EXPECT_EQ(o.token, kToken);
  EXPECT_DOUBLE_EQ(o.timeout_s, 2.5);
  EXPECT_EQ(o.max_frame_bytes, 65536u);
  EXPECT_EQ(o.listen_fd, -1);
}

TEST(TcpEnvironment, DefaultsAndLoopbackShorthand) {
  ScopedEnv env(Vars{{"COMPAS_RANK", "1"},
                     {"COMPAS_SIZE", "2"},
                     {"COMPAS_RENDEZVOUS", ":4567"},
                     {"COMPAS_JOB_TOKEN", kToken}});
  const auto o = TcpOptions::from_environment();
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.port, 4567);
  EXPECT_DOUBLE_EQ(o.timeout_s, 60);
  EXPECT_EQ(o.max_frame_bytes, wire::kDefaultMaxPayloadBytes);
}

TEST(TcpEnvironment, BadValuesNameTheVariable) {
  const std::map<std::string, std::string> good = {{"COMPAS_RANK", "1"},
                                                   {"COMPAS_SIZE", "2"},
                                                   {"COMPAS_RENDEZVOUS", "127.0.0.1:4567"},
                                                   {"COMPAS_JOB_TOKEN", kToken}};
  struct Case {
    std::string var, value, expect;
  };
  const std::vector<Case> cases = {
      {"COMPAS_RANK", "abc", "COMPAS_RANK='abc'"},
      {"COMPAS_RANK", "-1", "COMPAS_RANK='-1'"},
      {"COMPAS_RANK", "2", "0..1"},
      {"COMPAS_RANK", "", "COMPAS_RANK=''"},
      {"COMPAS_SIZE", "0", "COMPAS_SIZE='0'"},
      {"COMPAS_SIZE", "x", "1..65536"},
      {"COMPAS_SIZE", "99999999", "COMPAS_SIZE"},
      {"COMPAS_RENDEZVOUS", "nohost", "COMPAS_RENDEZVOUS='nohost'"},
      {"COMPAS_RENDEZVOUS", "127.0.0.1:99999", "port 1..65535"},
      {"COMPAS_RENDEZVOUS", "127.0.0.1:", "COMPAS_RENDEZVOUS"},
      {"COMPAS_RENDEZVOUS", "::1:80", "COMPAS_RENDEZVOUS"},
      {"COMPAS_RENDEZVOUS", "no-such-host.invalid:80", "IPv4"},
      {"COMPAS_TIMEOUT", "abc", "COMPAS_TIMEOUT='abc'"},
      {"COMPAS_TIMEOUT", "0", "positive number of seconds"},
      {"COMPAS_TIMEOUT", "-1", "COMPAS_TIMEOUT='-1'"},
      {"COMPAS_TIMEOUT", "inf", "COMPAS_TIMEOUT"},
      {"COMPAS_TIMEOUT", "10s", "COMPAS_TIMEOUT"},
      {"COMPAS_BOOTSTRAP_MAX_FRAME", "10", "4096.."},
      {"COMPAS_JOB_TOKEN", "", "COMPAS_JOB_TOKEN is not set"},
      {"COMPAS_JOB_TOKEN", std::string(300, 'x'), "at most 256"},
      {"COMPAS_JOB_TOKEN", "short", "at least 16"},
      {"COMPAS_JOB_TOKEN", std::string(15, 'x'), "COMPAS_JOB_TOKEN is 15 bytes"},
  };
  for (const auto& c : cases) {
    auto vars = good;
    vars[c.var] = c.value;
    ScopedEnv env(vars);
    try {
      TcpOptions::from_environment();
      ADD_FAILURE() << c.var << "=" << c.value << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos)
          << c.var << "=" << c.value << ": " << e.what();
    }
  }
}

TEST(TcpEnvironment, MissingVariablesAreNamed) {
  auto message = [](const std::map<std::string, std::string>& vars) {
    ScopedEnv env(vars);
    try {
      TcpOptions::from_environment();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({{"COMPAS_RANK", "0"}}).find("COMPAS_SIZE is not"), std::string::npos);
  EXPECT_NE(message({{"COMPAS_SIZE", "2"}}).find("COMPAS_RANK is not"), std::string::npos);
  EXPECT_NE(message({{"COMPAS_RANK", "0"}, {"COMPAS_SIZE", "2"}, {"COMPAS_JOB_TOKEN", "x"}})
                .find("COMPAS_RENDEZVOUS is not set"),
            std::string::npos);
  EXPECT_NE(message({{"COMPAS_RANK", "0"}, {"COMPAS_SIZE", "2"}, {"COMPAS_RENDEZVOUS", ":80"}})
                .find("COMPAS_JOB_TOKEN is not set"),
            std::string::npos);
  // Alone, a rank needs neither rendezvous nor token.
  EXPECT_EQ(message({{"COMPAS_RANK", "0"}, {"COMPAS_SIZE", "1"}}), "accepted");
}

TEST(TcpEnvironment, RendezvousFdMustListenOnThePort) {
  Listener l;
  const std::map<std::string, std::string> base = {
      {"COMPAS_RANK", "0"},
      {"COMPAS_SIZE", "2"},
      {"COMPAS_RENDEZVOUS", "127.0.0.1:" + std::to_string(l.port)},
      {"COMPAS_JOB_TOKEN", kToken}};
  {
    auto vars = base;
    vars["COMPAS_RENDEZVOUS_FD"] = std::to_string(l.fd);
    ScopedEnv env(vars);
    EXPECT_EQ(TcpOptions::from_environment().listen_fd, l.fd);
  }
  for (const std::string bad : {"0", "999", "x"}) {
    auto vars = base;
    vars["COMPAS_RENDEZVOUS_FD"] = bad;
    ScopedEnv env(vars);
    EXPECT_THROW(TcpOptions::from_environment(), std::invalid_argument) << bad;
  }
  {
    auto vars = base;  // the right socket, the wrong port
    vars["COMPAS_RENDEZVOUS"] = "127.0.0.1:" + std::to_string(l.port == 65535 ? 1 : l.port + 1);
    vars["COMPAS_RENDEZVOUS_FD"] = std::to_string(l.fd);
    ScopedEnv env(vars);
    EXPECT_THROW(TcpOptions::from_environment(), std::invalid_argument);
  }
  ::close(l.fd);
}

// ---- tcp jobs with threads as ranks ------------------------------------------------------------

TEST(TcpJob, AllgatherAndBarriers) {
  for (int size : {1, 2, 5}) {
    const auto errors = run_job(size, [&](Bootstrap& bs) {
      EXPECT_EQ(bs.kind(), "tcp");
      EXPECT_EQ(bs.size(), size);
      for (int round = 0; round < 20; ++round) {
        const std::string mine(static_cast<std::size_t>(bs.rank() * 1000 + round),
                               static_cast<char>('a' + bs.rank()));
        const auto all = bs.allgather(mine);
        ASSERT_EQ(static_cast<int>(all.size()), size);
        for (int r = 0; r < size; ++r)
          EXPECT_EQ(
              all[static_cast<std::size_t>(r)],
              std::string(static_cast<std::size_t>(r * 1000 + round), static_cast<char>('a' + r)));
        bs.barrier();
      }
    });
    for (int r = 0; r < size; ++r) EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << r;
  }
}

TEST(TcpJob, LargeBlobsAndTheFrameLimit) {
  const auto errors = run_job(3, [](Bootstrap& bs) {
    const std::string mine(3u << 20, static_cast<char>('0' + bs.rank()));
    const auto all = bs.allgather(mine);
    for (int r = 0; r < 3; ++r)
      EXPECT_EQ(all[static_cast<std::size_t>(r)],
                std::string(3u << 20, static_cast<char>('0' + r)));
  });
  for (const auto& e : errors) EXPECT_EQ(e, "");

  Listener l;
  auto o = options(0, 1, l.port);
  o.max_frame_bytes = 4096;
  auto bs = Bootstrap::tcp(o);
  EXPECT_THROW(bs->allgather(std::string(5000, 'x')), std::invalid_argument);
  ::close(l.fd);
}

TEST(TcpJob, JunkConnectionsDoNotDelayTheJob) {
  std::vector<int> junk;
  const auto start = Clock::now();
  const auto errors = run_job(
      3, [](Bootstrap& bs) { bs.barrier(); }, 10,
      [&](int port) {
        // 100 silent connections, garbage, a HELLO claiming rank 1 that never proves the token:
        // all made before any real rank exists.
        for (int i = 0; i < 100; ++i) junk.push_back(connect_to(port));
        int g = connect_to(port);
        const std::string garbage = "GET / HTTP/1.0\r\n\r\n";
        (void)!::write(g, garbage.data(), garbage.size());
        junk.push_back(g);
        int w = connect_to(port);
        const auto hello = wire::encode(wire::FrameType::hello, 0,
                                        wire::encode_hello({1, 3, std::string(16, 'n')}));
        (void)!::write(w, hello.data(), hello.size());
        junk.push_back(w);
      });
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  EXPECT_LT(seconds, 3.0) << "the hello timeout is 5 s: junk must not be waited for";
  for (int fd : junk)
    if (fd >= 0) ::close(fd);
}

// A connection made without blocking (the kernel's backlog may be full during a flood); -1 when
// no socket could be made.
int connect_nonblocking(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  (void)::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  return fd;
}

// Connections waiting in `listener`'s accept queue (for a listening socket Linux reports the
// queue's length as tcpi_unacked).
int accept_queue_length(int listener) {
  tcp_info ti{};
  socklen_t len = sizeof ti;
  if (::getsockopt(listener, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return -1;
  return static_cast<int>(ti.tcpi_unacked);
}

bool wait_for_queue(int listener, int n, double seconds = 10) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  while (accept_queue_length(listener) < n)
    if (Clock::now() > deadline) return false;
  return true;
}

// A tcp job whose ranks are threads: join(r) starts rank r; finish() waits for all and returns
// each rank's exception message ("" when it succeeded). Every rank enters one barrier.
struct ThreadJob {
  ThreadJob(Listener& listener, int ranks, double timeout)
      : l(listener), size(ranks), timeout_s(timeout), errors(static_cast<std::size_t>(ranks)) {}
  Listener& l;
  int size;
  double timeout_s;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  void join(int r) {
    threads.emplace_back([this, r] {
      try {
        auto o = options(r, size, l.port, timeout_s);
        if (r == 0) o.listen_fd = l.fd;
        Bootstrap::tcp(o)->barrier();
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  std::vector<std::string> finish() {
    for (auto& t : threads) t.join();
    return errors;
  }
};

// A local user floods the rendezvous port with 2000 connections that never speak while the job
// starts, more than the 256 rank 0 keeps waiting for a HELLO. The ranks connect between the
// first and the second thousand, and rank 0 comes last, so it finds them all queued at once.
TEST(TcpJob, ConnectionFloodDuringStartUpDoesNotEndTheJob) {
  Listener l(4096);
  std::vector<int> junk;
  auto flood = [&](int n) {
    for (int i = 0; i < n; ++i) junk.push_back(connect_nonblocking(l.port));
  };
  ThreadJob job(l, 4, 30);
  flood(1000);
  for (int r = 1; r < 4; ++r) job.join(r);
  ASSERT_TRUE(wait_for_queue(l.fd, 1003));
  flood(1000);
  ASSERT_TRUE(wait_for_queue(l.fd, 2003));
  job.join(0);
  const auto errors = job.finish();
  for (std::size_t r = 0; r < errors.size(); ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
  for (int fd : junk)
    if (fd >= 0) ::close(fd);
}

// Slow clients that dribble a HELLO a byte at a time hold a pending slot each until their hello
// timeout; 300 of them, more than rank 0 keeps, must not keep the real ranks out.
TEST(TcpJob, SlowClientsDoNotKeepTheRanksOut) {
  Listener l(4096);
  std::vector<int> slow;
  for (int i = 0; i < 300; ++i) slow.push_back(connect_nonblocking(l.port));
  std::atomic<bool> stop{false};
  std::atomic<int> rounds{0};
  std::thread dribble([&] {
    const std::string hello = wire::encode(wire::FrameType::hello, 0, std::string(24, 'h'));
    for (std::size_t at = 0; !stop.load() && at < hello.size(); ++at) {
      for (int fd : slow) (void)!::send(fd, hello.data() + at, 1, MSG_NOSIGNAL);
      rounds.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  ThreadJob job(l, 3, 30);
  job.join(0);
  while (rounds.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  job.join(1);
  job.join(2);
  const auto errors = job.finish();
  stop.store(true);
  dribble.join();
  for (std::size_t r = 0; r < errors.size(); ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
  for (int fd : slow) ::close(fd);
}

// Whatever listens on the rendezvous port first (a fixed port in a manual launch) must neither
// learn the job token from a joining rank nor be believed when it answers as rank 0 would.
TEST(TcpJob, AnImpostorAtTheRendezvousLearnsNoTokenAndIsNotBelieved) {
  Listener l;
  std::vector<std::string> heard;
  std::thread impostor([&] {
    // First caller: told at once that the job is complete. Second: a made-up challenge first.
    for (int k = 0; k < 2; ++k) {
      const int c = ::accept(l.fd, nullptr, nullptr);
      heard.push_back(read_until_closed(c, 0.5).first);
      std::string reply;
      if (k == 1) reply += wire::encode(static_cast<wire::FrameType>(10), 0, std::string(48, 'c'));
      reply += wire::encode(wire::FrameType::welcome, 0, {});
      (void)!::write(c, reply.data(), reply.size());
      read_until_closed(c, 3);
      ::close(c);
    }
  });
  std::vector<std::string> errors;
  for (int k = 0; k < 2; ++k) {
    try {
      Bootstrap::tcp(options(1, 2, l.port, 3));
      errors.push_back("joined");
    } catch (const BootstrapError& e) {
      errors.push_back(e.what());
    }
  }
  impostor.join();
  ASSERT_EQ(heard.size(), 2u);
  for (int k = 0; k < 2; ++k) {
    EXPECT_FALSE(heard[static_cast<std::size_t>(k)].empty());
    EXPECT_EQ(heard[static_cast<std::size_t>(k)].find(kToken), std::string::npos)
        << "the job token went over the wire";
    EXPECT_NE(errors[static_cast<std::size_t>(k)].find("did not prove it knows the job token"),
              std::string::npos)
        << errors[static_cast<std::size_t>(k)];
  }
}

// The proofs are HMAC-SHA256 (RFC 4231, test case 2) and change with every input they bind.
TEST(Handshake, ProofsAreHmacSha256OverEverythingTheyBind) {
  namespace hs = compas::comm::handshake;
  std::string hex;
  for (unsigned char c : hs::hmac_sha256("Jefe", "what do ya want for nothing?")) {
    const char* digits = "0123456789abcdef";
    hex += digits[c >> 4];
    hex += digits[c & 15];
  }
  EXPECT_EQ(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  const std::string a = hs::fresh_nonce(), b = hs::fresh_nonce();
  EXPECT_EQ(a.size(), hs::kNonceBytes);
  EXPECT_NE(a, b);
  const auto p = hs::joiner_proof(kToken, a, b, 1, 4);
  EXPECT_EQ(p.size(), hs::kProofBytes);
  EXPECT_TRUE(hs::proofs_equal(p, hs::joiner_proof(kToken, a, b, 1, 4)));
  for (const auto& other :
       {hs::joiner_proof(kToken + "x", a, b, 1, 4), hs::joiner_proof(kToken, b, a, 1, 4),
        hs::joiner_proof(kToken, a, b, 2, 4), hs::joiner_proof(kToken, a, b, 1, 5),
        hs::rank0_proof(kToken, b, a)})
    EXPECT_FALSE(hs::proofs_equal(p, other));
  EXPECT_FALSE(hs::proofs_equal(p, p.substr(1)));
}

// Same-host endpoints get UCX error handling (and can be closed when an operation times out)
// only where UCX_TLS leaves no shared memory.
TEST(UcxTls, SharedMemoryAllowedFollowsUcxTls) {
  using compas::comm::detail::shared_memory_allowed;
  for (const char* yes : {static_cast<const char*>(nullptr), "", "all", "sm", "shm", "posix,tcp",
                          "tcp,cma", "sysv", "^tcp", "^posix", "self,mm"})
    EXPECT_TRUE(shared_memory_allowed(yes)) << (yes ? yes : "(unset)");
  for (const char* no : {"tcp", "tcp,self", "rc,ud", "self", "^sm", "^shm,tcp", "tcp,smx"})
    EXPECT_FALSE(shared_memory_allowed(no)) << no;
}

TEST(TcpJob, ShortOrEmptyTokensAreRefused) {
  for (const std::string& token : {std::string(), std::string("abc"), std::string(15, 'x')}) {
    try {
      Bootstrap::tcp(options(1, 2, 1, 1, token));
      ADD_FAILURE() << "token '" << token << "' accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("at least 16"), std::string::npos) << e.what();
    }
  }
}

// Joins by hand as rank `rank` of a job of `size` with `token`: HELLO, rank 0's CHALLENGE
// (whose proof is checked), PROOF; returns rank 0's last frame before it closed (REJECT), or
// a WELCOME-less ok frame when it stayed silent for `seconds`.
wire::Frame join_by_hand(int port, std::uint32_t rank, std::uint32_t size, const std::string& token,
                         double seconds = 3) {
  namespace hs = compas::comm::handshake;
  const int fd = connect_to(port);
  const std::string nonce = hs::fresh_nonce();
  auto send = [&](const std::string& bytes) {
    EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  };
  send(wire::encode(wire::FrameType::hello, 0, wire::encode_hello({rank, size, nonce})));
  std::string in;
  wire::ParseResult r;
  while ((r = wire::parse_frame(in)).status == wire::ParseStatus::need_more) {
    char buf[256];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    in.append(buf, static_cast<std::size_t>(n));
  }
  EXPECT_EQ(r.status, wire::ParseStatus::ok) << r.error;
  EXPECT_EQ(r.frame.type, wire::FrameType::challenge);
  const auto c = wire::decode_challenge(r.frame.payload);
  EXPECT_TRUE(c && hs::proofs_equal(hs::rank0_proof(kToken, nonce, c->nonce), c->proof))
      << "rank 0's proof of the token";
  if (c)
    send(wire::encode(wire::FrameType::proof, 0,
                      hs::joiner_proof(token, c->nonce, nonce, rank, size)));
  const auto [reply, closed] = read_until_closed(fd, seconds);
  ::close(fd);
  EXPECT_TRUE(closed);
  const auto verdict = wire::decode_frame(reply);
  EXPECT_EQ(verdict.status, wire::ParseStatus::ok) << verdict.error;
  return verdict.frame;
}

TEST(TcpJob, BadHellosAreRejectedAndSilenceIsDropped) {
  Listener l;
  std::thread root([&] {
    auto o = options(0, 3, l.port);
    o.listen_fd = l.fd;
    o.hello_timeout_s = 0.3;
    try {
      Bootstrap::tcp(o)->barrier();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank 0: " << e.what();
    }
  });
  auto verdict_for = [&](std::uint32_t rank, std::uint32_t size, const std::string& token) {
    const auto f = join_by_hand(l.port, rank, size, token);
    EXPECT_EQ(f.type, wire::FrameType::reject);
    return f.payload;
  };
  EXPECT_NE(verdict_for(7, 3, kToken).find("rank 7 is out of range 1..2"), std::string::npos);
  EXPECT_NE(verdict_for(0, 3, kToken).find("out of range"), std::string::npos);
  EXPECT_NE(verdict_for(1, 4, kToken).find("job size mismatch"), std::string::npos);
  // The token is checked first: a wrong one learns nothing about ranks or size.
  EXPECT_NE(verdict_for(7, 4, kToken + "x").find("wrong job token"), std::string::npos);
  // A frame out of turn, and a HELLO of the wrong shape.
  for (const auto& bad : {wire::encode(wire::FrameType::proof, 0, std::string(32, 'p')),
                          wire::encode(wire::FrameType::hello, 0, "rank 1 please")}) {
    const int fd = connect_to(l.port);
    EXPECT_EQ(::write(fd, bad.data(), bad.size()), static_cast<ssize_t>(bad.size()));
    const auto [reply, closed] = read_until_closed(fd, 3);
    ::close(fd);
    EXPECT_TRUE(closed);
    EXPECT_EQ(wire::decode_frame(reply).frame.type, wire::FrameType::reject);
  }

  // A connection that never says HELLO is closed after hello_timeout_s, with BUSY.
  const int silent = connect_to(l.port);
  const auto start = Clock::now();
  const auto [said, closed] = read_until_closed(silent, 3);
  const double waited = std::chrono::duration<double>(Clock::now() - start).count();
  ::close(silent);
  EXPECT_TRUE(closed);
  EXPECT_EQ(wire::decode_frame(said).frame.type, wire::FrameType::busy);
  EXPECT_GT(waited, 0.2);
  EXPECT_LT(waited, 2.0);

  std::vector<std::thread> others;
  for (int r : {1, 2})
    others.emplace_back([&, r] { Bootstrap::tcp(options(r, 3, l.port))->barrier(); });
  for (auto& t : others) t.join();
  root.join();
}

TEST(TcpJob, WrongTokenAndDuplicateRankAreRejected) {
  Listener l;
  std::string rank1_error, intruder_error, duplicate_error;
  std::thread root([&] {
    auto o = options(0, 2, l.port);
    o.listen_fd = l.fd;
    try {
      auto bs = Bootstrap::tcp(o);
      bs->barrier();
      bs->barrier();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank 0: " << e.what();
    }
  });
  try {
    Bootstrap::tcp(options(1, 2, l.port, 10, "not-the-job-token-at-all"));
  } catch (const BootstrapError& e) {
    intruder_error = e.what();
  }
  // Rank 0 proves the token first: a rank with another one stops there, naming the token.
  EXPECT_NE(intruder_error.find("did not prove it knows the job token"), std::string::npos)
      << intruder_error;
  EXPECT_NE(intruder_error.find("COMPAS_JOB_TOKEN differs"), std::string::npos) << intruder_error;
  auto bs = Bootstrap::tcp(options(1, 2, l.port));  // the real rank 1 is still admitted
  bs->barrier();
  // The job is formed and the listener closed: nobody else gets in.
  try {
    Bootstrap::tcp(options(1, 2, l.port, 0.5));
  } catch (const BootstrapError& e) {
    duplicate_error = e.what();
  }
  EXPECT_NE(duplicate_error.find("could not connect"), std::string::npos) << duplicate_error;
  bs->barrier();
  root.join();
}

TEST(TcpJob, DuplicateRankWhileJoining) {
  Listener l;
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  // Ranks 0 and 1 and a second rank 1; rank 2 comes last, so both rank 1s are in before the job
  // forms and exactly one of them must be turned away.
  auto start = [&](int slot, int rank) {
    threads.emplace_back([&, slot, rank] {
      try {
        auto o = options(rank, 3, l.port, 10);
        if (rank == 0) o.listen_fd = l.fd;
        auto bs = Bootstrap::tcp(o);
        bs->barrier();
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(slot)] = e.what();
      }
    });
  };
  start(0, 0);
  start(1, 1);
  start(2, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  start(3, 2);
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[3], "");
  const bool first_rejected = errors[1].find("already connected") != std::string::npos;
  const bool second_rejected = errors[2].find("already connected") != std::string::npos;
  EXPECT_NE(first_rejected, second_rejected) << errors[1] << " | " << errors[2];
  EXPECT_TRUE(errors[1].empty() || errors[2].empty()) << errors[1] << " | " << errors[2];
}

TEST(TcpJob, MissingRankTimesOutNamingIt) {
  Listener l;
  std::string e0, e1;
  const auto start = Clock::now();
  std::thread root([&] {
    auto o = options(0, 4, l.port, 0.5);
    o.listen_fd = l.fd;
    try {
      Bootstrap::tcp(o);
    } catch (const BootstrapError& e) {
      e0 = e.what();
      EXPECT_EQ(e.rank(), 2);
    }
  });
  try {
    Bootstrap::tcp(options(1, 4, l.port, 0.5));
  } catch (const BootstrapError& e) {
    e1 = e.what();
  }
  root.join();
  const std::string expect =
      "bootstrap: timed out after 0.5 s: ranks 2, 3 never connected to "
      "127.0.0.1:" +
      std::to_string(l.port);
  EXPECT_EQ(e0, expect);
  EXPECT_EQ(e1, expect);  // relayed by rank 0
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 3.0);
}

TEST(TcpJob, CollectiveMismatchIsAnError) {
  const auto errors = run_job(3, [](Bootstrap& bs) {
    if (bs.rank() == 1)
      bs.allgather("x");
    else
      bs.barrier();
  });
  for (const auto& e : errors)
    EXPECT_NE(e.find("collective mismatch: rank 1 called allgather while rank 0 called barrier"),
              std::string::npos)
        << e;
}

TEST(TcpJob, RankLeavingEarlyIsNamed) {
  const auto errors = run_job(3, [](Bootstrap& bs) {
    bs.barrier();
    if (bs.rank() == 2) return;  // closes its bootstrap: BYE
    bs.barrier();
  });
  EXPECT_EQ(errors[2], "");
  for (int r : {0, 1})
    EXPECT_NE(errors[static_cast<std::size_t>(r)].find("rank 2 closed its bootstrap"),
              std::string::npos)
        << errors[static_cast<std::size_t>(r)];
}

TEST(TcpJob, CollectiveTimeoutNamesTheLateRank) {
  const auto errors = run_job(
      3,
      [](Bootstrap& bs) {
        if (bs.rank() == 2) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        bs.barrier();
      },
      0.5);
  EXPECT_NE(
      errors[0].find("timed out after 0.5 s in barrier (collective #1): rank 2 did not enter it"),
      std::string::npos)
      << errors[0];
  EXPECT_EQ(errors[1], errors[0]);
  EXPECT_FALSE(errors[2].empty());  // rank 0 is gone by the time it arrives
}

TEST(TcpJob, FailedBootstrapKeepsFailing) {
  const auto errors = run_job(2, [](Bootstrap& bs) {
    if (bs.rank() == 1) return;
    EXPECT_THROW(bs.barrier(), BootstrapError);
    try {
      bs.barrier();
      ADD_FAILURE() << "a failed bootstrap must keep failing";
    } catch (const BootstrapError& e) {
      EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
      EXPECT_EQ(e.rank(), 1);
    }
  });
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
}

}  // namespace
