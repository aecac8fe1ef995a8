// tcp jobs whose ranks are threads of this test (the bootstrap is thread-safe and does not care):
// junk connections and floods, slow clients, impostors, wrong tokens, duplicate ranks,
// collective mismatches and timeouts.

#include <fstream>
#include <sstream>

#include "bootstrap_test.hpp"

namespace {

using namespace bootstrap_test;

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

// Connections to 127.0.0.1:`port` that this machine's clients hold established (/proc/net/tcp:
// state 01, the remote port `port`).
int clients_connected(int port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // the header
  int n = 0;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string slot, local, remote, state;
    f >> slot >> local >> remote >> state;
    const auto colon = remote.find(':');
    if (state == "01" && colon != std::string::npos &&
        std::stoi(remote.substr(colon + 1), nullptr, 16) == port)
      ++n;
  }
  return n;
}

TEST(TcpJob, DuplicateRankWhileJoining) {
  Listener l;
  std::vector<std::string> errors(4);
  std::atomic<int> failed{0};
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
        failed.fetch_add(1);
      }
    });
  };
  start(0, 0);
  start(1, 1);
  start(2, 1);
  // Both rank 1s are connected (or one was already turned away) before rank 2 comes.
  const auto until = Clock::now() + std::chrono::seconds(10);
  while (clients_connected(l.port) < 2 && failed.load() == 0 && Clock::now() < until)
    std::this_thread::yield();
  start(3, 2);
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[3], "");
  const bool first_rejected = errors[1].find("already connected") != std::string::npos;
  const bool second_rejected = errors[2].find("already connected") != std::string::npos;
  EXPECT_NE(first_rejected, second_rejected) << errors[1] << " | " << errors[2];
  EXPECT_TRUE(errors[1].empty() || errors[2].empty()) << errors[1] << " | " << errors[2];
}

// A connection rank 0 has accepted but not admitted when the job forms (here a silent one made
// before any rank existed; a second process with some rank's COMPAS_RANK in a real job) gets a
// REJECT saying why, not a connection closed without a word ("rank 0 disconnected").
TEST(TcpJob, ConnectionWaitingWhenTheJobFormsIsToldWhy) {
  int waiting = -1;
  const auto errors = run_job(
      3, [](Bootstrap& bs) { bs.barrier(); }, 10, [&](int port) { waiting = connect_to(port); });
  for (const auto& e : errors) EXPECT_EQ(e, "");
  ASSERT_GE(waiting, 0);
  std::string in;
  const auto until = Clock::now() + std::chrono::seconds(10);
  for (char buf[512]; Clock::now() < until;) {
    pollfd p{waiting, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::read(waiting, buf, sizeof buf);
    if (n <= 0) break;
    in.append(buf, static_cast<std::size_t>(n));
  }
  ::close(waiting);
  const auto res = wire::parse_frame(in, wire::kMaxHelloPayloadBytes);
  ASSERT_EQ(res.status, wire::ParseStatus::ok) << "no whole frame, " << in.size() << " bytes";
  EXPECT_EQ(res.frame.type, wire::FrameType::reject);
  EXPECT_NE(res.frame.payload.find("already connected"), std::string::npos) << res.frame.payload;
  EXPECT_NE(res.frame.payload.find("1..2"), std::string::npos) << res.frame.payload;
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
  std::atomic<int> timed_out{0};  // rank 2 arrives once ranks 0 and 1 have given up on it
  const auto errors = run_job(
      3,
      [&](Bootstrap& bs) {
        if (bs.rank() == 2) {
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
          while (timed_out.load() < 2 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        try {
          bs.barrier();
        } catch (...) {
          timed_out.fetch_add(1);
          throw;
        }
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
