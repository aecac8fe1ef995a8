// Runtime::job_samples gathers every process's region samples as bytes (runtime/src/sample_wire):
// the encoding round-trips every field, a damaged one is refused naming what is wrong, and on a
// real job every thread of every process is there once with what it recorded.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../../runtime/src/sample_wire.hpp"
#include "../common/job_main.hpp"
#include "compas/compas.hpp"

namespace {

using compas::perf::RegionSample;

std::vector<RegionSample> odd_samples() {
  RegionSample a;
  a.process = 3;
  a.thread = 17;
  a.region = "sweep";
  a.calls = std::numeric_limits<std::uint64_t>::max();
  a.seconds = -0.0;
  a.events = {"PAPI_TOT_CYC", "", "ipc,with comma"};
  a.counts = {-1, std::numeric_limits<long long>::min(), 42};
  RegionSample b;
  b.region = std::string("nul\0inside", 10);
  b.seconds = std::numeric_limits<double>::quiet_NaN();
  RegionSample c;
  c.process = -1;  // not a rank, but carried as it is
  c.seconds = 1e-300;
  return {a, b, c};
}

void expect_same(const RegionSample& x, const RegionSample& y) {
  EXPECT_EQ(x.process, y.process);
  EXPECT_EQ(x.thread, y.thread);
  EXPECT_EQ(x.region, y.region);
  EXPECT_EQ(x.calls, y.calls);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(x.seconds), std::bit_cast<std::uint64_t>(y.seconds));
  EXPECT_EQ(x.events, y.events);
  EXPECT_EQ(x.counts, y.counts);
}

TEST(SampleWire, EveryFieldRoundTripsBitForBit) {
  const auto in = odd_samples();
  const auto out = compas::detail::decode_samples(compas::detail::encode_samples(in));
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) expect_same(out[i], in[i]);
  EXPECT_TRUE(compas::detail::decode_samples(compas::detail::encode_samples({})).empty());
}

TEST(SampleWire, AnEncodingCutShortOrWithBytesLeftOverIsRefused) {
  const std::string whole = compas::detail::encode_samples(odd_samples());
  for (std::size_t n = 0; n < whole.size(); ++n)
    EXPECT_THROW(compas::detail::decode_samples(std::string_view(whole).substr(0, n)),
                 std::invalid_argument)
        << "cut at " << n << " of " << whole.size();
  try {
    compas::detail::decode_samples(whole + "x");
    ADD_FAILURE() << "a byte left over was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("1 bytes left over"), std::string::npos) << e.what();
  }
}

TEST(SampleWire, ACountBeyondTheBytesIsRefusedBeforeAnythingIsMade) {
  std::string huge(8, '\xff');  // 2^64 - 1 samples in 8 bytes
  try {
    compas::detail::decode_samples(huge);
    ADD_FAILURE() << "a count of 2^64 - 1 was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("samples count"), std::string::npos) << e.what();
  }
}

// Thread t of every process enters the region t + 1 times: the job's samples hold each
// (process, thread) once, with its own count.
TEST(SampleWire, JobSamplesHoldEveryThreadOfEveryProcessOnce) {
  compas::Runtime& rt = *g_rt;
  rt.profile().reset();
  rt.run([&](compas::ThreadCtx& t) {
    for (int k = 0; k <= t.thread(); ++k) {
      COMPAS_REGION(t, "sample_wire_test");
    }
  });
  std::set<std::pair<int, int>> seen;
  for (const auto& s : rt.job_samples()) {
    if (s.region != "sample_wire_test") continue;
    EXPECT_TRUE(seen.insert({s.process, s.thread}).second)
        << "process " << s.process << " thread " << s.thread << " twice";
    EXPECT_EQ(s.calls, static_cast<std::uint64_t>(s.thread + 1)) << "thread " << s.thread;
    EXPECT_GE(s.seconds, 0.0);
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(rt.processes() * rt.threads()));
  for (int q = 0; q < rt.processes(); ++q)
    for (int t = 0; t < rt.threads(); ++t)
      EXPECT_TRUE(seen.count({q, t})) << "process " << q << " thread " << t << " missing";
}

}  // namespace
