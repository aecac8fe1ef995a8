// Tests of the bootstrap inside one process: which kind the environment selects, validation of
// the COMPAS_* variables, the handshake's proofs and the transports UCX may use. The tcp jobs
// whose ranks are threads are in test_tcp_job.cpp; multi-process behaviour in test_launch.cpp.

#include "bootstrap_test.hpp"

namespace {

using namespace bootstrap_test;

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

TEST(CommEnvironment, ReadsTheProcessBarrierAndRejectsBadValuesNamingThem) {
  using compas::comm::CommOptions;
  using compas::comm::ProcessBarrier;
  EXPECT_EQ(CommOptions{}.process_barrier, ProcessBarrier::automatic);
  for (const auto& [value, want] :
       std::map<std::string, ProcessBarrier>{{"dissemination", ProcessBarrier::dissemination},
                                             {"host", ProcessBarrier::host},
                                             {"auto", ProcessBarrier::automatic}}) {
    ScopedEnv env(Vars{{"COMPAS_PROCESS_BARRIER", value}});
    EXPECT_EQ(CommOptions::from_environment().process_barrier, want) << value;
  }
  // The former name is still read, when the new one is not set.
  {
    ScopedEnv env(Vars{{"COMPAS_NODE_BARRIER", "host"}});
    EXPECT_EQ(CommOptions::from_environment().process_barrier, ProcessBarrier::host);
  }
  {
    ScopedEnv env(Vars{{"COMPAS_NODE_BARRIER", "host"}, {"COMPAS_PROCESS_BARRIER", "auto"}});
    EXPECT_EQ(CommOptions::from_environment().process_barrier, ProcessBarrier::automatic);
  }
  for (const auto& [var, value] :
       std::map<std::string, std::string>{{"COMPAS_PROCESS_BARRIER", "tree"},
                                          {"COMPAS_NODE_BARRIER", "tree"},
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

}  // namespace
