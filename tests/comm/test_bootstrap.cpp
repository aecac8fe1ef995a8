// Tests of the bootstrap inside one process: which kind the environment selects, validation of
// the COMPAS_* variables, and tcp jobs whose ranks are threads of this test (the bootstrap is
// thread-safe and does not care), including junk connections, wrong tokens, duplicate ranks,
// collective mismatches and timeouts. Multi-process behaviour is in test_launch.cpp.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

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
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 512) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
    port = ntohs(sa.sin_port);
  }
};

TcpOptions options(int rank, int size, int port, double timeout_s = 10,
                   const std::string& token = "t0k3n") {
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
                     {"COMPAS_JOB_TOKEN", "abc"},
                     {"COMPAS_TIMEOUT", "2.5"},
                     {"COMPAS_BOOTSTRAP_MAX_FRAME", "65536"}});
  const auto o = TcpOptions::from_environment();
  EXPECT_EQ(o.rank, 2);
  EXPECT_EQ(o.size, 4);
  EXPECT_EQ(o.host, "localhost");
  EXPECT_EQ(o.port, 4567);
  EXPECT_EQ(o.token, "abc");
  EXPECT_DOUBLE_EQ(o.timeout_s, 2.5);
  EXPECT_EQ(o.max_frame_bytes, 65536u);
  EXPECT_EQ(o.listen_fd, -1);
}

TEST(TcpEnvironment, DefaultsAndLoopbackShorthand) {
  ScopedEnv env(Vars{{"COMPAS_RANK", "1"},
                     {"COMPAS_SIZE", "2"},
                     {"COMPAS_RENDEZVOUS", ":4567"},
                     {"COMPAS_JOB_TOKEN", "abc"}});
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
                                                   {"COMPAS_JOB_TOKEN", "abc"}};
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
      {"COMPAS_JOB_TOKEN", "abc"}};
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
        // 100 silent connections, garbage, a HELLO with a wrong token claiming rank 1, a rank out
        // of range: all made before any real rank exists.
        for (int i = 0; i < 100; ++i) junk.push_back(connect_to(port));
        int g = connect_to(port);
        const std::string garbage = "GET / HTTP/1.0\r\n\r\n";
        (void)!::write(g, garbage.data(), garbage.size());
        junk.push_back(g);
        int w = connect_to(port);
        const auto hello =
            wire::encode(wire::FrameType::hello, 0, wire::encode_hello({1, 3, "wrong"}));
        (void)!::write(w, hello.data(), hello.size());
        junk.push_back(w);
      });
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  EXPECT_LT(seconds, 3.0) << "the hello timeout is 5 s: junk must not be waited for";
  for (int fd : junk)
    if (fd >= 0) ::close(fd);
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
  auto verdict_for = [&](const wire::Hello& hello) {
    const int fd = connect_to(l.port);
    const auto bytes = wire::encode(wire::FrameType::hello, 0, wire::encode_hello(hello));
    EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    const auto [reply, closed] = read_until_closed(fd, 3);
    ::close(fd);
    EXPECT_TRUE(closed);
    const auto r = wire::decode_frame(reply);
    EXPECT_EQ(r.status, wire::ParseStatus::ok) << r.error;
    EXPECT_EQ(r.frame.type, wire::FrameType::reject);
    return r.frame.payload;
  };
  EXPECT_NE(verdict_for({7, 3, "t0k3n"}).find("rank 7 is out of range 1..2"), std::string::npos);
  EXPECT_NE(verdict_for({0, 3, "t0k3n"}).find("out of range"), std::string::npos);
  EXPECT_NE(verdict_for({1, 4, "t0k3n"}).find("job size mismatch"), std::string::npos);
  // The token is checked first: a wrong one learns nothing about ranks or size.
  EXPECT_NE(verdict_for({7, 4, "t0k3"}).find("wrong job token"), std::string::npos);

  // A connection that never says HELLO is closed after hello_timeout_s.
  const int silent = connect_to(l.port);
  const auto start = Clock::now();
  const auto [nothing, closed] = read_until_closed(silent, 3);
  const double waited = std::chrono::duration<double>(Clock::now() - start).count();
  ::close(silent);
  EXPECT_TRUE(closed);
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
    Bootstrap::tcp(options(1, 2, l.port, 10, "not-the-token"));
  } catch (const BootstrapError& e) {
    intruder_error = e.what();
  }
  EXPECT_NE(intruder_error.find("rejected rank 1: wrong job token"), std::string::npos)
      << intruder_error;
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
