// The tcp bootstrap across real processes started by hand with the COMPAS_* variables a launcher
// would set (to start only some ranks, add intruders, or break the environment): dead, late,
// hung and missing ranks are named by the others.

#include "launch_test.hpp"

namespace {

using namespace launch_test;

// ---- ranks started by hand ---------------------------------------------------------------------

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

// Reads from `fd` until EOF or `seconds`; returns what came.
std::string read_until_closed(int fd, double seconds) {
  std::string got;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return got;
    got.append(buf, static_cast<std::size_t>(n));
  }
  got += "<still open>";
  return got;
}

TEST(TcpRanks, DeadRankIsReportedToEveryRankPromptly) {
  ProbeJob job(3, {{"COMPAS_TIMEOUT", "10"}});
  const ShmSnapshot shm;
  std::vector<std::unique_ptr<Proc>> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(job.start(r, {"die-at-barrier", "2"}));
  for (auto& p : ranks) ASSERT_TRUE(p->wait(15)) << p->describe();
  EXPECT_EQ(ranks[2]->term_signal, SIGKILL) << ranks[2]->describe();
  for (int r : {0, 1}) {
    const auto& p = *ranks[static_cast<std::size_t>(r)];
    EXPECT_EQ(p.exit_code, 1) << p.describe();
    EXPECT_TRUE(contains(p.err, "bootstrap: rank 2 disconnected (process died?)")) << p.describe();
    EXPECT_LT(p.seconds, 6.0) << "told by rank 0, not by the 10 s timeout\n" << p.describe();
  }
  EXPECT_EQ(shm.leftovers(pids_of(ranks)), "") << "shared memory left by the job";
}

// No launcher to stop the others: each must find out by itself (the dead rank's process is gone,
// or its UCX endpoint fails) and say which rank died, long before the 20 s timeout.
void expect_comm_death_named(int P, int killed, const Env& env) {
  SCOPED_TRACE("P = " + std::to_string(P) + ", rank " + std::to_string(killed) + " killed");
  Env all = {{"COMPAS_TIMEOUT", "20"}};
  all.insert(all.end(), env.begin(), env.end());
  ProbeJob job(P, all);
  const ShmSnapshot shm;
  std::vector<std::unique_ptr<Proc>> ranks;
  for (int r = 0; r < P; ++r)
    ranks.push_back(job.start(r, {"comm-die-at-barrier", std::to_string(killed)}));
  for (auto& p : ranks) ASSERT_TRUE(p->wait(30)) << p->describe();
  EXPECT_EQ(ranks[static_cast<std::size_t>(killed)]->term_signal, SIGKILL)
      << ranks[static_cast<std::size_t>(killed)]->describe();
  std::vector<std::string> errs;
  std::string all_output;
  for (int r = 0; r < P; ++r) {
    const auto& p = *ranks[static_cast<std::size_t>(r)];
    errs.push_back(p.err);
    all_output += "==== rank " + std::to_string(r) + ": " + p.describe();
    if (r == killed) continue;
    EXPECT_EQ(p.exit_code, 1) << p.describe();
    EXPECT_LT(p.seconds, 15.0) << "noticed, not timed out\n" << p.describe();
  }
  EXPECT_EQ(check_dead_rank_named(errs, P, killed, /*launched=*/false), "") << all_output;
  EXPECT_EQ(shm.leftovers(pids_of(ranks)), "") << "shared memory left by the job\n" << all_output;
}

TEST(TcpRanks, RankKilledInACommBarrierIsNamedByTheOthers) {
  for (int P : {2, 3})
    for (int killed : {0, 1}) expect_comm_death_named(P, killed, {});
}

// Both process barrier algorithms forced (auto picks by oversubscription): in the two-level one the
// others wait on their host leader's words, also when the leader is the one killed.
TEST(TcpRanks, RankKilledInATwoLevelCommBarrierIsNamedByTheOthers) {
  for (int killed : {0, 2})
    expect_comm_death_named(3, killed, {{"COMPAS_PROCESS_BARRIER", "host"}});
}

TEST(TcpRanks, RankKilledInADisseminationCommBarrierIsNamedByTheOthers) {
  expect_comm_death_named(3, 1, {{"COMPAS_PROCESS_BARRIER", "dissemination"}});
}

TEST(TcpRanks, RankKilledInACommBarrierOverUcxTcpIsNamedByTheOthers) {
  for (int P : {2, 3})
    for (int killed : {0, 1}) expect_comm_death_named(P, killed, {{"UCX_TLS", "tcp,self"}});
}

// A rank whose program throws while the others wait for it in a Comm barrier: its Comm is
// destroyed during the unwinding and must not wait for them in its teardown (they wait for it),
// so it leaves, and they name it.
TEST(TcpRanks, RankThrowingOutOfItsCommIsNamedByTheOthers) {
  for (int P : {2, 3}) {
    SCOPED_TRACE("P = " + std::to_string(P));
    ProbeJob job(P, {{"COMPAS_TIMEOUT", "20"}});
    std::vector<std::unique_ptr<Proc>> ranks;
    for (int r = 0; r < P; ++r) ranks.push_back(job.start(r, {"comm-throw-at-barrier", "1"}));
    for (auto& p : ranks) ASSERT_TRUE(p->wait(30)) << p->describe();
    const auto& thrower = *ranks[1];
    EXPECT_EQ(thrower.exit_code, 1) << thrower.describe();
    EXPECT_TRUE(contains(thrower.err, "bootstrap_probe: failed: rank 1 gives up"))
        << thrower.describe();
    EXPECT_LT(thrower.seconds, 15.0) << "its teardown waited\n" << thrower.describe();
    std::vector<std::string> errs;
    std::string all_output;
    for (int r = 0; r < P; ++r) {
      const auto& p = *ranks[static_cast<std::size_t>(r)];
      errs.push_back(p.err);
      all_output += "==== rank " + std::to_string(r) + ": " + p.describe();
      if (r == 1) continue;
      EXPECT_EQ(p.exit_code, 1) << p.describe();
      EXPECT_LT(p.seconds, 15.0) << "noticed, not timed out\n" << p.describe();
    }
    // Each names the thrower, or a rank that left because of it before this one noticed.
    EXPECT_EQ(check_dead_rank_named(errs, P, 1, /*launched=*/false), "") << all_output;
  }
}

TEST(TcpRanks, DeadRankZeroIsNamed) {
  ProbeJob job(3, {{"COMPAS_TIMEOUT", "10"}});
  const ShmSnapshot shm;
  std::vector<std::unique_ptr<Proc>> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(job.start(r, {"die-at-barrier", "0"}));
  for (auto& p : ranks) ASSERT_TRUE(p->wait(15)) << p->describe();
  for (int r : {1, 2}) {
    const auto& p = *ranks[static_cast<std::size_t>(r)];
    EXPECT_EQ(p.exit_code, 1) << p.describe();
    EXPECT_TRUE(contains(p.err, "bootstrap: rank 0 disconnected (process died?)")) << p.describe();
    EXPECT_LT(p.seconds, 6.0) << p.describe();
  }
  EXPECT_EQ(shm.leftovers(pids_of(ranks)), "") << "shared memory left by the job";
}

TEST(TcpRanks, RankThatNeverStartsTimesOutNamingIt) {
  ProbeJob job(3, {{"COMPAS_TIMEOUT", "2"}});
  auto r0 = job.start(0);
  auto r1 = job.start(1);
  ASSERT_TRUE(r0->wait(10)) << r0->describe();
  ASSERT_TRUE(r1->wait(10)) << r1->describe();
  const std::string expect =
      "bootstrap: timed out after 2 s: rank 2 never connected to " + job.rendezvous();
  for (const auto* p : {r0.get(), r1.get()}) {
    EXPECT_EQ(p->exit_code, 1) << p->describe();
    EXPECT_TRUE(contains(p->err, expect)) << p->describe();
    EXPECT_LT(p->seconds, 6.0) << p->describe();
  }
}

TEST(TcpRanks, RankZeroThatNeverStartsIsNamed) {
  ProbeJob job(2, {{"COMPAS_TIMEOUT", "1"}}, /*own_port=*/true);
  auto r1 = job.start(1);
  ASSERT_TRUE(r1->wait(10)) << r1->describe();
  EXPECT_EQ(r1->exit_code, 1) << r1->describe();
  EXPECT_TRUE(contains(
      r1->err, "timed out after 1 s: rank 1 could not connect to rank 0 at " + job.rendezvous()))
      << r1->describe();
}

TEST(TcpRanks, HungRankTimesOutTheBarrierNamingIt) {
  ProbeJob job(3, {{"COMPAS_TIMEOUT", "2"}});
  std::vector<std::unique_ptr<Proc>> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(job.start(r, {"sleep-forever", "1"}));
  const std::string expect =
      "timed out after 2 s in barrier (collective #2): rank 1 did not enter it";
  for (int r : {0, 2}) {
    auto& p = *ranks[static_cast<std::size_t>(r)];
    ASSERT_TRUE(p.wait(10)) << p.describe();
    EXPECT_EQ(p.exit_code, 1) << p.describe();
    EXPECT_TRUE(contains(p.err, expect)) << p.describe();
  }
}

TEST(TcpRanks, ClientStartedBeforeRankZeroRetries) {
  ProbeJob job(2, {{"COMPAS_TIMEOUT", "20"}}, /*own_port=*/true);
  auto r1 = job.start(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto r0 = job.start(0);
  for (auto* p : {r0.get(), r1.get()}) {
    ASSERT_TRUE(p->wait(20)) << p->describe();
    EXPECT_EQ(p->exit_code, 0) << p->describe();
  }
  EXPECT_TRUE(contains(r0->out, "ok rank 0 of 2 (tcp)"));
  EXPECT_TRUE(contains(r1->out, "ok rank 1 of 2 (tcp)"));
}

TEST(TcpRanks, IntrudersAreRejectedAndDoNotDisturbTheJob) {
  ProbeJob job(2, {{"COMPAS_TIMEOUT", "20"}});
  auto r0 = job.start(0);
  // Wait until rank 0 accepts connections (it adopts the listener at once).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  // 1. A HELLO claiming rank 1 from a connection without the token: rank 0's CHALLENGE (which
  // tells nothing about the job), a PROOF that is wrong, then a REJECT and the connection closes.
  const int bad = connect_to(job.port());
  ASSERT_GE(bad, 0);
  const auto hello = wire::encode(wire::FrameType::hello, 0,
                                  wire::encode_hello({1, 2, std::string(wire::kNonceBytes, 'n')}));
  ASSERT_EQ(::write(bad, hello.data(), hello.size()), static_cast<ssize_t>(hello.size()));
  const auto proof = wire::encode(wire::FrameType::proof, 0, std::string(wire::kProofBytes, 'p'));
  ASSERT_EQ(::write(bad, proof.data(), proof.size()), static_cast<ssize_t>(proof.size()));
  std::string reply = read_until_closed(bad, 5);
  ::close(bad);
  const auto challenge = wire::parse_frame(reply);
  ASSERT_EQ(challenge.status, wire::ParseStatus::ok) << reply;
  EXPECT_EQ(challenge.frame.type, wire::FrameType::challenge);
  const auto verdict = wire::decode_frame(reply.substr(challenge.consumed));
  ASSERT_EQ(verdict.status, wire::ParseStatus::ok) << reply;
  EXPECT_EQ(verdict.frame.type, wire::FrameType::reject);
  EXPECT_TRUE(contains(verdict.frame.payload, "wrong job token")) << verdict.frame.payload;

  // 2. Garbage: the connection is closed (with a REJECT naming the bad frame).
  const int garbage = connect_to(job.port());
  const std::string junk = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  ASSERT_EQ(::write(garbage, junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
  EXPECT_FALSE(contains(read_until_closed(garbage, 5), "<still open>"));
  ::close(garbage);

  // 3. 100 connections that say nothing, kept open while the job forms.
  std::vector<int> silent;
  for (int i = 0; i < 100; ++i) silent.push_back(connect_to(job.port()));

  // 4. A real process with the wrong token stops with a clear message: rank 0 cannot prove it
  // knows that token.
  auto impostor = job.start(1, {}, {{"COMPAS_JOB_TOKEN", "not-the-job-token"}});
  ASSERT_TRUE(impostor->wait(10)) << impostor->describe();
  EXPECT_EQ(impostor->exit_code, 1) << impostor->describe();
  EXPECT_TRUE(contains(impostor->err, "COMPAS_JOB_TOKEN differs from rank 0's"))
      << impostor->describe();

  // The real rank 1 still forms the job with rank 0, without waiting for the silent ones.
  const auto start = Clock::now();
  auto r1 = job.start(1);
  for (auto* p : {r0.get(), r1.get()}) {
    ASSERT_TRUE(p->wait(20)) << p->describe();
    EXPECT_EQ(p->exit_code, 0) << p->describe();
  }
  EXPECT_LT(since(start), 4.0) << "silent connections must not hold up the job";
  EXPECT_TRUE(contains(r0->out, "ok rank 0 of 2 (tcp)")) << r0->describe();
  EXPECT_TRUE(contains(r1->out, "ok rank 1 of 2 (tcp)")) << r1->describe();
  for (int fd : silent)
    if (fd >= 0) ::close(fd);
}

TEST(TcpRanks, BadEnvironmentExitsTwoNamingTheVariable) {
  struct Case {
    Env env;
    std::string expect;
  };
  const Env base = {{"COMPAS_SIZE", "2"},
                    {"COMPAS_RENDEZVOUS", "127.0.0.1:4000"},
                    {"COMPAS_JOB_TOKEN", "0123456789abcdef0123456789abcdef"}};
  auto with = [&](Env more) {
    Env e = base;
    for (auto& kv : more) {
      std::erase_if(e, [&](const auto& b) { return b.first == kv.first; });
      e.push_back(kv);
    }
    return e;
  };
  const std::vector<Case> cases = {
      {with({{"COMPAS_RANK", "abc"}}), "COMPAS_RANK='abc'"},
      {with({{"COMPAS_RANK", "2"}}), "COMPAS_RANK='2'"},
      {with({{"COMPAS_RANK", "1"}, {"COMPAS_SIZE", "0"}}), "COMPAS_SIZE='0'"},
      {with({{"COMPAS_RANK", "1"}, {"COMPAS_SIZE", "many"}}), "COMPAS_SIZE='many'"},
      {{{"COMPAS_RANK", "1"}}, "COMPAS_SIZE is not set"},
      {with({{"COMPAS_RANK", "1"}, {"COMPAS_RENDEZVOUS", "localhost"}}),
       "COMPAS_RENDEZVOUS='localhost'"},
      {with({{"COMPAS_RANK", "1"}, {"COMPAS_RENDEZVOUS", "127.0.0.1:0"}}),
       "COMPAS_RENDEZVOUS='127.0.0.1:0'"},
      {{{"COMPAS_RANK", "1"}, {"COMPAS_SIZE", "2"}, {"COMPAS_JOB_TOKEN", "t"}},
       "COMPAS_RENDEZVOUS is not set"},
      {with({{"COMPAS_RANK", "1"}, {"COMPAS_TIMEOUT", "abc"}}), "COMPAS_TIMEOUT='abc'"},
      {with({{"COMPAS_RANK", "1"}, {"COMPAS_TIMEOUT", "-5"}}), "COMPAS_TIMEOUT='-5'"},
      {{{"COMPAS_RANK", "1"}, {"COMPAS_SIZE", "2"}, {"COMPAS_RENDEZVOUS", ":4000"}},
       "COMPAS_JOB_TOKEN is not set"},
      {with({{"COMPAS_RANK", "0"}, {"COMPAS_RENDEZVOUS_FD", "77"}}), "COMPAS_RENDEZVOUS_FD='77'"},
      {with({{"COMPAS_RANK", "1"}, {"COMPAS_JOB_TOKEN", "secret"}}),
       "COMPAS_JOB_TOKEN is 6 bytes long: at least 16"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {kProbe};
    Proc p(argv, c.env);
    ASSERT_TRUE(p.wait(10)) << p.describe();
    std::string env;
    for (const auto& [k, v] : c.env) env += " " + k + "=" + v;
    EXPECT_EQ(p.exit_code, 2) << env << "\n" << p.describe();
    EXPECT_TRUE(contains(p.err, c.expect)) << env << ": expected '" << c.expect << "'\n"
                                           << p.describe();
  }
}

}  // namespace
