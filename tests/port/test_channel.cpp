// compas::Channel: ordered point-to-point messages between processes. Every rank of a compas-run
// job (P = 1..4, oversubscribed) runs these cases; values carry their sender and sequence, so a
// message lost, repeated, reordered or overwritten before it was taken is seen.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../common/job_main.hpp"
#include "compas/port/channel.hpp"
#include "compas/runtime/group.hpp"

namespace {

std::int64_t code(int sender, int n) {
  return std::int64_t{sender} * 1000003 + n;
}

// Each process sends 300 values to the next (a ring) through 4 slots, 75 times round them; the
// receiver sees every value once, in order.
TEST(Channel, RingKeepsOrderThroughFewSlots) {
  const int p = rt().processes(), me = rt().process();
  compas::Channel<std::int64_t> ch(rt(), 4);
  const int to = (me + 1) % p, from = (me + p - 1) % p;
  constexpr int kMessages = 300;
  if (p == 1) {  // to itself: never more in flight than the slots
    for (int n = 0; n < kMessages; n += 4) {
      for (int k = 0; k < 4; ++k) ch.send(to, code(me, n + k));
      for (int k = 0; k < 4; ++k) ASSERT_EQ(ch.recv(from), code(from, n + k));
    }
    return;
  }
  // Even ranks send first; odd ones receive first (a ring of blocking sends would wait for ever
  // once every sender is 4 ahead). With P odd the last rank pairs like an odd one.
  const bool send_first = me % 2 == 0 && !(p % 2 == 1 && me == p - 1);
  for (int n = 0; n < kMessages; ++n) {
    if (send_first) ch.send(to, code(me, n));
    ASSERT_EQ(ch.recv(from), code(from, n)) << "message " << n;
    if (!send_first) ch.send(to, code(me, n));
  }
}

// Process 0 sends 300 values to process 1 without waiting for anything but credits, while
// process 1 takes them slowly: a slot is never overwritten before it was taken.
TEST(Channel, AFastSenderWaitsForCreditsAndOverwritesNothing) {
  const int p = rt().processes(), me = rt().process();
  if (p == 1) GTEST_SKIP() << "needs two processes";
  compas::Channel<std::int64_t> ch(rt(), 2);
  constexpr int kMessages = 300;
  if (me == 0)
    for (int n = 0; n < kMessages; ++n) ch.send(1, code(0, n));
  if (me == 1)
    for (int n = 0; n < kMessages; ++n) {
      if (n % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ASSERT_EQ(ch.recv(0), code(0, n)) << "message " << n;
    }
}

// Messages of 0..max_count values: each arrives whole, with its length.
TEST(Channel, SpansArriveWithTheirLength) {
  const int p = rt().processes(), me = rt().process();
  compas::Channel<double> ch(rt(), 3, 5);
  const int to = (me + 1) % p, from = (me + p - 1) % p;
  for (int len = 0; len <= 5; ++len) {
    std::vector<double> out(5, -1.0), in(static_cast<std::size_t>(len));
    for (int k = 0; k < len; ++k) in[static_cast<std::size_t>(k)] = me * 100 + len * 10 + k;
    ch.send(to, std::span<const double>(in));
    ASSERT_EQ(ch.recv(from, std::span<double>(out)), static_cast<std::size_t>(len));
    for (int k = 0; k < len; ++k)
      EXPECT_EQ(out[static_cast<std::size_t>(k)], from * 100 + len * 10 + k);
    if (len < 5) {
      EXPECT_EQ(out[static_cast<std::size_t>(len)], -1.0) << "written past the message";
    }
  }
}

// A wavefront over a grid cut into column blocks, one per process (PRK's synch_p2p): each row
// waits for the left neighbour's last value of that row. The corner value matches the serial
// recurrence a(i, j) = a(i-1, j) + a(i, j-1) - a(i-1, j-1) with a(0, j) = j, a(i, 0) = i.
TEST(Channel, WavefrontMatchesTheSerialRecurrence) {
  const int p = rt().processes(), me = rt().process();
  constexpr long kRows = 200, kCols = 64;
  const compas::Range cols = compas::block_of({1, kCols}, p, me);
  compas::Channel<double> ch(rt());
  std::vector<double> prev(static_cast<std::size_t>(kCols)), cur(prev.size());
  for (long j = 0; j < kCols; ++j) prev[static_cast<std::size_t>(j)] = static_cast<double>(j);
  for (long i = 1; i < kRows; ++i) {
    cur[static_cast<std::size_t>(cols.lo - 1)] = me == 0 ? static_cast<double>(i) : ch.recv(me - 1);
    for (long j = cols.lo; j < cols.hi; ++j) {
      const auto u = static_cast<std::size_t>(j);
      cur[u] = prev[u] + cur[u - 1] - prev[u - 1];
    }
    if (me + 1 < p) ch.send(me + 1, cur[static_cast<std::size_t>(cols.hi - 1)]);
    std::swap(prev, cur);
  }
  // a(i, j) = i + j solves the recurrence with those boundaries.
  if (me == p - 1) {
    EXPECT_EQ(prev[static_cast<std::size_t>(kCols - 1)], (kRows - 1) + (kCols - 1));
  }
}

TEST(Channel, BadRanksAndLengthsAreNamed) {
  const int p = rt().processes(), me = rt().process();
  compas::Channel<int> ch(rt(), 2, 2);
  try {
    ch.send(p, 1);
    FAIL() << "a send to rank P was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("destination " + std::to_string(p) +
                                         " is not a process: 0.." + std::to_string(p - 1)),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ch.recv(-1), std::invalid_argument);
  const std::vector<int> three = {1, 2, 3};
  try {
    ch.send(me, std::span<const int>(three));
    FAIL() << "3 values went into a channel of max_count 2";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("3 values in one message; this channel takes at most 2"),
              std::string::npos)
        << e.what();
  }
  // A message longer than the span stays; a span with room takes it.
  ch.send(me, std::span<const int>(three.data(), 2));
  int one = 0;
  EXPECT_THROW(ch.recv(me, std::span<int>(&one, 1)), std::invalid_argument);
  int two[2] = {0, 0};
  EXPECT_EQ(ch.recv(me, std::span<int>(two)), 2u);
  EXPECT_EQ(two[1], 2);
  EXPECT_THROW(compas::Channel<int>(rt(), 0), std::invalid_argument);
  // Slots whose bytes do not fit a size_t: refused before anything is allocated, on every process.
  EXPECT_THROW((compas::Channel<std::array<char, 1 << 20>>(rt(), 1 << 30, 1 << 30)),
               std::length_error);
}

// Made differently on one process: every process throws, naming process 0's and that one's.
// A Channel's window is made over the whole job: on a Group the constructor is refused with an
// error naming the group and why, before anything collective; a channel of the job still works.
TEST(Channel, OnAGroupIsRefusedNamingWhy) {
  const int me = rt().process();
  compas::Group g = compas::split(rt(), 0, me);  // every process, one group
  std::string list = "{";
  for (int i = 0; i < g.processes(); ++i) list += (i ? ", " : "") + std::to_string(i);
  try {
    compas::Channel<double> ch(g, 4);
    ADD_FAILURE() << "a Channel on a group was made";
  } catch (const std::logic_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "compas::Channel on a group on the group of processes " + list +
                  "}: its window is made collectively over the whole job; call it with the "
                  "Runtime");
  }
  compas::Channel<std::int64_t> ch(rt(), 2);
  const int p = rt().processes();
  ch.send((me + 1) % p, code(me, 1));
  EXPECT_EQ(ch.recv((me + p - 1) % p), code((me + p - 1) % p, 1));
}

TEST(Channel, ShapesThatDifferBetweenProcessesAreNamedOnEvery) {
  const int p = rt().processes(), me = rt().process();
  if (p == 1) GTEST_SKIP() << "needs two processes";
  try {
    compas::Channel<double> ch(rt(), me == p - 1 ? 8 : 16);
    FAIL() << "the channel was made";
  } catch (const std::invalid_argument& e) {
    const std::string want =
        "process 0 made it with capacity 16, max_count 1, 8-byte elements of type double, "
        "process " +
        std::to_string(p - 1) + " with capacity 8";
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
  // Elements of one size and another type: a CollectiveError too, naming both types.
  try {
    if (me == p - 1)
      compas::Channel<long>(rt(), 4);
    else
      compas::Channel<double>(rt(), 4);
    FAIL() << "the channel was made";
  } catch (const compas::CollectiveError& e) {
    EXPECT_NE(std::string(e.what()).find("of type double, process " + std::to_string(p - 1) +
                                         " with capacity 4, max_count 1, 8-byte elements of "
                                         "type long"),
              std::string::npos)
        << e.what();
  }
}

// A pipeline's two ends on one process: one thread only sends (to the next process) while another
// only receives (from the previous one), at the same time, on one Channel of 2 slots; a ring of
// 2000 messages each way, so both ends wait on each other's credits many times. Every value
// arrives once, in order. (With one process the ring is this process to itself.)
TEST(Channel, OneThreadSendsWhileAnotherReceives) {
  const int p = rt().processes(), me = rt().process();
  compas::Channel<std::int64_t> ch(rt(), 2);
  const int to = (me + 1) % p, from = (me + p - 1) % p;
  constexpr int kMessages = 2000;
  int wrong = -1;
  std::thread receiver([&] {
    for (int n = 0; n < kMessages && wrong < 0; ++n)
      if (ch.recv(from) != code(from, n)) wrong = n;
  });
  for (int n = 0; n < kMessages; ++n) ch.send(to, code(me, n));
  receiver.join();
  EXPECT_EQ(wrong, -1) << "message " << wrong << " from process " << from;
}

// From inside run(), making one (a collective) is refused; using one from thread 0 works.
TEST(Channel, MadeFunneledUsedFromOneThreadOfTheTeam) {
  const int p = rt().processes(), me = rt().process();
  bool refused = false;
  compas::Channel<int> ch(rt());
  rt().run([&](compas::ThreadCtx& t) {
    if (!t.is_leader()) return;
    try {
      compas::Channel<int> inner(rt());
    } catch (const std::logic_error&) {
      refused = true;
    }
    ch.send((me + 1) % p, me);
    EXPECT_EQ(ch.recv((me + p - 1) % p), (me + p - 1) % p);
  });
  EXPECT_TRUE(refused);
}

}  // namespace
