// The pingpong measurement between ranks 0 and 1 (compas/probes/pingpong.hpp). CTest starts this
// program through compas-run -n 2; both ranks run every test in the same order, as every call is
// collective.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/comm/comm.hpp"
#include "compas/probes/pingpong.hpp"

namespace {

namespace probes = compas::probes;

std::unique_ptr<compas::comm::Bootstrap> g_boot;
std::unique_ptr<compas::comm::Comm> g_comm;

TEST(PingpongIterations, ByVolumeWithinBoundsUnlessForced) {
  EXPECT_EQ(probes::pingpong_iterations(8, 0), 20000);
  EXPECT_EQ(probes::pingpong_iterations(0, 0), 20000);
  EXPECT_EQ(probes::pingpong_iterations(std::size_t{1} << 20, 0), 64);
  EXPECT_EQ(probes::pingpong_iterations(std::size_t{1} << 24, 0), 20);
  EXPECT_EQ(probes::pingpong_iterations(std::size_t{1} << 24, 7), 7);
}

// What each op's time is, in words that hold wherever the peer is: a get and a put_flush to a
// peer on this host are a copy by load/store (no message, so no round trip), across hosts a
// request and its reply.
TEST(PingpongMeasure, SaysWhatIsTimedOnTheSameHostAndAcrossHosts) {
  for (const char* op : {"get", "put_flush"}) {
    const std::string text = probes::pingpong_measure(op).text;
    EXPECT_NE(text.find("same host: a copy"), std::string::npos) << op << ": " << text;
    EXPECT_NE(text.find("across hosts: a round trip"), std::string::npos) << op << ": " << text;
  }
  EXPECT_EQ(std::string(probes::pingpong_measure("get").key), "round_trip");
  EXPECT_EQ(std::string(probes::pingpong_measure("put_flush").key), "remote_completion");
  EXPECT_EQ(std::string(probes::pingpong_measure("put").text),
            "one way (half a ping-pong round trip)");
}

TEST(PingpongPoint, WarmUpDroppedMedianOfTheRest) {
  std::vector<double> given = {100, 3, 1, 2};  // the first is the warm-up
  std::size_t next = 0;
  int calls = 0;
  const auto p = probes::measure_pingpong_point(
      "x", 1000, 5, 3, [&](const std::string& op, std::size_t n, int iters) {
        EXPECT_EQ(op, "x");
        EXPECT_EQ(n, 1000u);
        EXPECT_EQ(iters, 5);
        ++calls;
        return given.at(next++);
      });
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(p.seconds, (std::vector<double>{3, 1, 2}));
  EXPECT_EQ(p.median_s, 2);
  EXPECT_EQ(p.min_s, 1);
  EXPECT_EQ(p.max_s, 3);
  EXPECT_EQ(p.latency_us(), 2e6);
  EXPECT_EQ(p.bandwidth_mbs(), 1000 / 2.0 / 1e6);
}

TEST(Pingpong, OnePointPerOpAndSizeWithPositiveTimesOnRankZero) {
  probes::Pingpong pp(*g_comm, 4096);
  probes::PingpongOptions o;
  o.sizes = {8, 4096};
  o.ops = probes::pingpong_ops();
  o.iters = 30;
  o.repeats = 2;
  int seen = 0;
  o.on_point = [&](const probes::PingpongPoint&) { ++seen; };
  const auto points = probes::measure_pingpong(pp, o);
  ASSERT_EQ(points.size(), o.ops.size() * o.sizes.size());
  EXPECT_EQ(seen, static_cast<int>(points.size()));
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    const std::string where = p.op + " " + std::to_string(p.bytes);
    EXPECT_EQ(p.op, o.ops[i / o.sizes.size()]) << where;
    EXPECT_EQ(p.bytes, o.sizes[i % o.sizes.size()]) << where;
    EXPECT_EQ(p.iterations, 30) << where;
    ASSERT_EQ(p.seconds.size(), 2u) << where;
    if (g_comm->rank() == 0) {
      EXPECT_GT(p.median_s, 0) << where;
      EXPECT_GE(p.median_s, p.min_s) << where;
      EXPECT_LE(p.median_s, p.max_s) << where;
      EXPECT_GT(p.bandwidth_mbs(), 0) << where;
    }
  }
}

TEST(Pingpong, SkippedOpsAndOthersOps) {
  probes::Pingpong pp(*g_comm, 64);
  probes::PingpongOptions o;
  o.sizes = {64};
  o.ops = {"skip_me", "put", "baseline"};
  o.repeats = 1;
  o.iters = 10;
  o.start_op = [](const std::string& op) { return op != "skip_me"; };
  o.other = [](const std::string& op, std::size_t, int) {
    EXPECT_EQ(op, "baseline");
    return 1e-6;
  };
  const auto points = probes::measure_pingpong(pp, o);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].op, "put");
  EXPECT_EQ(points[1].op, "baseline");
  EXPECT_EQ(points[1].median_s, 1e-6);

  o.other = nullptr;  // refused before anything is measured, on every rank alike
  o.ops = {"baseline", "put"};
  EXPECT_THROW(probes::measure_pingpong(pp, o), std::invalid_argument);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  try {
    g_boot = compas::comm::Bootstrap::from_environment();
    g_comm = std::make_unique<compas::comm::Comm>(*g_boot);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_pingpong: cannot form the job: %s\n", e.what());
    return 1;
  }
  if (g_comm->size() < 2) {
    std::fprintf(stderr, "test_pingpong: needs 2 processes (compas-run -n 2)\n");
    return 1;
  }
  const int rc = RUN_ALL_TESTS();
  g_comm.reset();
  g_boot.reset();
  return rc;
}
