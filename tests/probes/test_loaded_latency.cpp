// Loaded latency (`compas membw --loaded-latency`): the traffic loop's injection delay, the knee
// finder on synthetic curves, the chase's single cycle, placement on synthetic machines, the
// parsers, and the command's answer to bad input (run as a subprocess: exit 2 naming the value,
// nothing written). Only the delay test looks at measured rates, loosely and on an in-cache
// buffer; nothing else passes or fails on timing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/proc.hpp"
#include "compas/probes/loaded_latency.hpp"
#include "compas/threads/topology.hpp"

#ifndef COMPAS_EXE
#error "COMPAS_EXE must name the compas executable"
#endif

namespace compas::probes {
namespace {

std::string thrown_by(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

// ---- the injection delay ------------------------------------------------------------------------

// Best of three: a try during which this thread lost its cpu reads low, never high.
double best_traffic_gbs(TrafficMix mix, std::uint64_t delay_ns) {
  double best = 0;
  for (int i = 0; i < 3; ++i)
    best = std::max(
        best, loaded_latency::traffic_alone_gbs(mix, delay_ns, 96 << 10, 15, best_membw_isa()));
  return best;
}

TEST(LoadedLatencyTraffic, LargerDelaysGiveLowerBandwidth) {
  // A 4 KiB chunk takes well under 1 us from the L2 (streaming stores: from memory), so each step
  // of 10x in delay from 1 us up should cut the rate several times; 1.25x between neighbours and
  // 4x end to end leave room for noise.
  const std::vector<std::uint64_t> delays = {0, 1000, 10000, 100000};
  for (auto mix : {TrafficMix::read, TrafficMix::rw, TrafficMix::stream}) {
    std::vector<double> gbs;
    for (auto d : delays) gbs.push_back(best_traffic_gbs(mix, d));
    for (std::size_t i = 0; i + 1 < gbs.size(); ++i)
      EXPECT_LT(gbs[i + 1], gbs[i] * 1.25)
          << to_string(mix) << ": " << delays[i + 1] << " ns gave " << gbs[i + 1] << " GB/s, "
          << delays[i] << " ns " << gbs[i];
    EXPECT_LT(gbs.back() * 4, gbs.front())
        << to_string(mix) << ": " << gbs.back() << " GB/s at 100 us vs " << gbs.front() << " at 0";
    EXPECT_GT(gbs.back(), 0) << to_string(mix);
  }
}

// ---- the knee finder ----------------------------------------------------------------------------

LatencyPoint pt(double gbs, double ns, double spread = 4) {
  return {gbs, ns, ns - spread / 2, ns + spread / 2};
}

const LatencyPoint kIdle = pt(0, 100);

TEST(LoadedLatencyKnee, FlatCurveHasNone) {
  std::vector<LatencyPoint> curve;
  for (int i = 1; i <= 10; ++i) curve.push_back(pt(i, 100 + (i % 3)));
  const auto k = find_latency_knee(kIdle, curve);
  EXPECT_FALSE(k.reached);
  EXPECT_FALSE(k.within_noise);
  EXPECT_DOUBLE_EQ(k.threshold_ns, 200);
  EXPECT_DOUBLE_EQ(k.max_bandwidth_gbs, 10);
  EXPECT_DOUBLE_EQ(k.max_latency_ns, 102);
}

TEST(LoadedLatencyKnee, HockeyStickHasItWhereItIs) {
  // Flat at 100 ns up to 6 GB/s, then 150 ns more per GB/s: 2x idle (200 ns) at 6 + 2/3 GB/s.
  std::vector<LatencyPoint> curve;
  for (int i = 1; i <= 10; ++i) curve.push_back(pt(i, i <= 6 ? 100 : 100 + 150.0 * (i - 6)));
  const auto k = find_latency_knee(kIdle, curve);
  ASSERT_TRUE(k.reached);
  EXPECT_NEAR(k.bandwidth_gbs, 6 + 2.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(k.max_bandwidth_gbs, 10);
}

TEST(LoadedLatencyKnee, FirstPointAboveInterpolatesFromIdle) {
  const auto k = find_latency_knee(kIdle, {pt(4, 300), pt(5, 400)});
  ASSERT_TRUE(k.reached);
  EXPECT_NEAR(k.bandwidth_gbs, 2, 1e-9);  // 100 ns at 0 GB/s, 300 ns at 4 GB/s: 200 ns at 2
}

TEST(LoadedLatencyKnee, BandwidthFallingAtTheTopKeepsTheKneeOnTheWayUp) {
  // Past saturation more offered load brings less bandwidth and more latency.
  const auto k = find_latency_knee(kIdle, {pt(2, 100), pt(4, 150), pt(6, 250), pt(5.5, 400)});
  ASSERT_TRUE(k.reached);
  EXPECT_NEAR(k.bandwidth_gbs, 5, 1e-9);
  EXPECT_DOUBLE_EQ(k.max_bandwidth_gbs, 6);
  EXPECT_DOUBLE_EQ(k.latency_at_max_ns, 250);
}

TEST(LoadedLatencyKnee, NoiseWithinTheSpreadIsNoKnee) {
  // Medians scatter past 2x idle, but every point's repeats reach down to idle's.
  const LatencyPoint idle = {0, 100, 80, 130};
  std::vector<LatencyPoint> curve;
  const double medians[] = {110, 210, 95, 230, 120, 205, 240, 220};
  for (int i = 0; i < 8; ++i) curve.push_back({i + 1.0, medians[i], 90, 400});
  const auto k = find_latency_knee(idle, curve);
  EXPECT_FALSE(k.reached);
  EXPECT_TRUE(k.within_noise);
  EXPECT_DOUBLE_EQ(k.max_bandwidth_gbs, 8);
}

TEST(LoadedLatencyKnee, ARiseSmallerThanTheSpreadsIsNoKnee) {
  // Every repeat slower than idle's slowest, but a rise of 110-115 ns against 60 ns of idle spread
  // plus 65-70 ns of the points' own.
  const LatencyPoint idle = {0, 100, 70, 130};
  const auto k = find_latency_knee(idle, {{1, 210, 140, 210}, {2, 215, 150, 215}});
  EXPECT_FALSE(k.reached);
  EXPECT_TRUE(k.within_noise);
  // The same medians with tight repeats are a knee.
  EXPECT_TRUE(find_latency_knee(idle, {{1, 210, 205, 212}, {2, 215, 212, 218}}).reached);
}

TEST(LoadedLatencyKnee, OneStrayPointIsNoKnee) {
  std::vector<LatencyPoint> curve = {pt(1, 100), pt(2, 101), pt(3, 260), pt(4, 102), pt(5, 104)};
  const auto k = find_latency_knee(kIdle, curve);
  EXPECT_FALSE(k.reached);
  EXPECT_TRUE(k.within_noise);
  // The same rise at the last point is a knee: nothing after it says otherwise.
  curve = {pt(1, 100), pt(2, 101), pt(3, 102), pt(4, 104), pt(5, 260)};
  EXPECT_TRUE(find_latency_knee(kIdle, curve).reached);
}

TEST(LoadedLatencyKnee, RefusesMalformedPoints) {
  EXPECT_THROW(find_latency_knee(kIdle, {}, 1.0), std::invalid_argument);
  EXPECT_THROW(find_latency_knee({0, 100, 110, 120}, {}), std::invalid_argument);  // min > median
  EXPECT_THROW(find_latency_knee(kIdle, {{1, 100, 0, 120}}), std::invalid_argument);
  EXPECT_THROW(find_latency_knee(kIdle, {{-1, 100, 90, 120}}), std::invalid_argument);
  EXPECT_THROW(find_latency_knee(kIdle, {{1, 1.0 / 0.0, 90, 1.0 / 0.0}}), std::invalid_argument);
  EXPECT_FALSE(find_latency_knee(kIdle, {}).reached);
}

// ---- the chase ----------------------------------------------------------------------------------

TEST(LoadedLatencyChase, IsOneCycleOverEveryLine) {
  for (std::size_t lines : {2u, 3u, 17u, 4099u, 1u << 16}) {
    std::vector<std::uint64_t> storage(lines * 8 + 8);
    const auto addr = reinterpret_cast<std::uintptr_t>(storage.data());
    auto* base = reinterpret_cast<char*>((addr + 63) / 64 * 64);
    loaded_latency::link_chase(base, lines, 7 + lines);
    std::vector<bool> seen(lines);
    const char* at = base;
    std::size_t steps = 0;
    do {
      const auto offset = static_cast<std::size_t>(at - base);
      ASSERT_EQ(offset % 64, 0u) << "lines " << lines;
      ASSERT_LT(offset / 64, lines) << "pointer leaves the buffer, lines " << lines;
      ASSERT_FALSE(seen[offset / 64]) << "line " << offset / 64 << " visited twice";
      seen[offset / 64] = true;
      at = reinterpret_cast<const char*>(*reinterpret_cast<const std::uint64_t*>(at));
      ++steps;
    } while (at != base && steps <= lines);
    EXPECT_EQ(steps, lines) << "the cycle from line 0 misses lines";
  }
}

// ---- placement ----------------------------------------------------------------------------------

std::vector<int> first_pu_per_core(const threads::Topology& t, auto&& keep) {
  std::vector<int> cores, out;
  for (const auto& p : t.pu_list())
    if (keep(p) && std::find(cores.begin(), cores.end(), p.core) == cores.end()) {
      cores.push_back(p.core);
      out.push_back(p.os_index);
    }
  return out;
}

TEST(LoadedLatencyPlacement, SameAndOtherSocket) {
  const auto t = threads::Topology::synthetic("pack:2 core:4 pu:2");
  const int chaser = t.pu_list().front().os_index;
  const auto socket0 = first_pu_per_core(t, [](const threads::Pu& p) { return p.socket == 0; });
  const auto socket1 = first_pu_per_core(t, [](const threads::Pu& p) { return p.socket == 1; });
  EXPECT_EQ(loaded_latency_cpus(t, TrafficOn::same, 0), socket0);  // chaser's core first
  std::vector<int> other = {chaser};
  other.insert(other.end(), socket1.begin(), socket1.end());
  EXPECT_EQ(loaded_latency_cpus(t, TrafficOn::other, 0), other);
  EXPECT_EQ(loaded_latency_cpus(t, TrafficOn::other, 2).size(), 3u);
  EXPECT_NE(thrown_by([&] { loaded_latency_cpus(t, TrafficOn::same, 4); }).find("--threads 5"),
            std::string::npos);
}

TEST(LoadedLatencyPlacement, OtherNumaNodeOnOneSocket) {
  const auto t = threads::Topology::synthetic("pack:1 numa:2 core:2 pu:1");
  const auto cpus = loaded_latency_cpus(t, TrafficOn::other, 0);
  ASSERT_EQ(cpus.size(), 3u);
  for (std::size_t i = 1; i < cpus.size(); ++i)
    EXPECT_EQ(t.pu_list()[static_cast<std::size_t>(t.find_pu(cpus[i]))].numa, 1);
}

TEST(LoadedLatencyPlacement, OtherRefusedWithOneNode) {
  const auto t = threads::Topology::synthetic("pack:1 core:2 pu:1");
  EXPECT_EQ(loaded_latency_cpus(t, TrafficOn::same, 0).size(), 2u);
  const auto msg = thrown_by([&] { loaded_latency_cpus(t, TrafficOn::other, 0); });
  EXPECT_NE(msg.find("--traffic-on other"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--traffic-on same"), std::string::npos) << msg;
  const auto one = threads::Topology::synthetic("pack:1 core:1 pu:2");
  EXPECT_THROW(loaded_latency_cpus(one, TrafficOn::same, 0), std::invalid_argument);  // SMT only
}

// ---- parsers ------------------------------------------------------------------------------------

TEST(LoadedLatencyParse, Mixes) {
  EXPECT_EQ(parse_traffic_mixes("stream,read,stream"),
            (std::vector<TrafficMix>{TrafficMix::stream, TrafficMix::read}));
  for (const std::string bad : {"", "read,,rw", "read,", "read,foo", "READ", "load"}) {
    const auto msg = thrown_by([&] { parse_traffic_mixes(bad); });
    EXPECT_NE(msg.find("--mix '" + bad + "'"), std::string::npos) << bad << ": " << msg;
  }
  EXPECT_NE(thrown_by([] { parse_traffic_mixes("read,foo"); }).find("'foo'"), std::string::npos);
}

TEST(LoadedLatencyParse, Delays) {
  EXPECT_EQ(parse_delays("auto"), default_delays());
  EXPECT_EQ(parse_delays("0,100,20,100"), (std::vector<std::uint64_t>{100, 20, 0}));
  EXPECT_EQ(parse_delays("1000000"), (std::vector<std::uint64_t>{1000000}));
  const auto d = default_delays();
  EXPECT_TRUE(std::is_sorted(d.rbegin(), d.rend()));
  EXPECT_EQ(d.back(), 0u);
  for (const std::string bad :
       {"", "10,,20", "-5", "1.5", "abc", "1000001", "99999999999999999999", " 5", "0x10", ","}) {
    const auto msg = thrown_by([&] { parse_delays(bad); });
    EXPECT_NE(msg.find("--delays '" + bad + "'"), std::string::npos) << bad << ": " << msg;
  }
  EXPECT_NE(thrown_by([] { parse_delays("10,-5"); }).find("'-5' is negative"), std::string::npos);
}

TEST(LoadedLatencyParse, TrafficOn) {
  EXPECT_EQ(parse_traffic_on("same"), TrafficOn::same);
  EXPECT_EQ(parse_traffic_on("other"), TrafficOn::other);
  EXPECT_NE(thrown_by([] { parse_traffic_on("remote"); }).find("'remote'"), std::string::npos);
}

// ---- the command --------------------------------------------------------------------------------

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

CliRun compas(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {COMPAS_EXE, "membw"};
  argv.insert(argv.end(), args.begin(), args.end());
  testing::Proc p(argv, {});
  if (!p.wait(120)) ADD_FAILURE() << "compas membw did not finish";
  return {p.exit_code, p.out, p.err};
}

class LoadedLatencyCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("compas-ll-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string json_path() const { return (dir_ / "out.json").string(); }
  std::filesystem::path dir_;
};

TEST_F(LoadedLatencyCli, BadInputExits2NamingTheValue) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--delays", "10,-5"}, "'-5'"},
      {{"--delays", "10,,20"}, "'10,,20'"},
      {{"--delays", "1e3"}, "'1e3'"},
      {{"--delays", ""}, "--delays"},
      {{"--mix", "read,foo"}, "'foo'"},
      {{"--mix", ""}, "--mix"},
      {{"--traffic-on", "remote"}, "'remote'"},
      {{"--size", "0"}, "'0'"},
      {{"--size", "12parsecs"}, "'12parsecs'"},
      {{"--size", "16KiB"}, "16 KiB"},
      {{"--size", ""}, "--size"},
      {{"--threads", "1"}, "--threads '1'"},
      {{"--threads", "2,3"}, "--threads '2,3'"},
      {{"--threads", "4096"}, "--threads 4096"},
      {{"--kernels", "copy"}, "--kernels"},
      {{"--isa", "neon9"}, "'neon9'"},
  };
  const bool one_core = threads::Topology::host().cores() < 2;  // no traffic thread fits at all
  for (const auto& [extra, named] : cases) {
    if (one_core && extra[0] == "--threads" && extra[1] == "4096") continue;
    std::vector<std::string> args = {"--loaded-latency", "--json", json_path()};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliRun r = compas(args);
    EXPECT_EQ(r.exit_code, 2) << extra[0] << " " << extra[1] << "\n" << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos)
        << extra[0] << " '" << extra[1] << "': stderr does not name " << named << ":\n"
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(json_path())) << "wrote a report for bad input";
    std::filesystem::remove(json_path());  // so that one failure does not spill into the next
  }
}

TEST_F(LoadedLatencyCli, LatencyFlagsNeedLoadedLatency) {
  for (const auto& flag : {"--mix", "--delays", "--traffic-on"}) {
    const CliRun r = compas(
        {flag, std::string(flag) == "--mix" ? "read" : "same", "--json", json_path(), "--quiet"});
    EXPECT_EQ(r.exit_code, 2) << flag << "\n" << r.err;
    EXPECT_NE(r.err.find(std::string(flag) + " applies only with --loaded-latency"),
              std::string::npos)
        << r.err;
  }
}

TEST_F(LoadedLatencyCli, TrafficOnOtherNeedsAnotherNode) {
  const auto host = threads::Topology::host();
  if (host.sockets() > 1 || host.numa_nodes() > 1) GTEST_SKIP() << "this host has another node";
  const CliRun r = compas({"--loaded-latency", "--traffic-on", "other", "--json", json_path()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--traffic-on other"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(json_path()));
}

TEST_F(LoadedLatencyCli, TinyRunWritesOneRecordPerPoint) {
  if (threads::Topology::host().cores() < 2) GTEST_SKIP() << "needs two cores";
  const CliRun r =
      compas({"--loaded-latency", "--size", "1MiB", "--mix", "read,stream", "--delays", "0,1000",
              "--repeats", "2", "--min-repeat-ms", "1", "--json", json_path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(json_path());
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["command"], "loaded-latency");
  const auto& res = doc["results"];
  ASSERT_EQ(res.size(), 6u);  // per mix: idle, 1000, 0
  for (const auto& rec : res) {
    for (const char* f : {"mix", "delay_ns", "bandwidth_gbs", "latency_ns", "latency_min_ns",
                          "latency_max_ns", "traffic_threads"})
      EXPECT_TRUE(rec.contains(f)) << f << " missing in " << rec.dump();
    EXPECT_LE(rec["latency_min_ns"].get<double>(), rec["latency_ns"].get<double>());
    EXPECT_LE(rec["latency_ns"].get<double>(), rec["latency_max_ns"].get<double>());
    EXPECT_GT(rec["latency_min_ns"].get<double>(), 0);
  }
  EXPECT_EQ(res[0]["mix"], "read");
  EXPECT_TRUE(res[0]["delay_ns"].is_null());
  EXPECT_EQ(res[0]["bandwidth_gbs"], 0.0);
  EXPECT_EQ(res[1]["delay_ns"], 1000);
  EXPECT_EQ(res[2]["delay_ns"], 0);
  EXPECT_EQ(res[3]["mix"], "stream");
  const auto& params = doc["params"];
  EXPECT_GT(params["idle_latency_ns"].get<double>(), 0);
  for (const char* mix : {"read", "stream"}) {
    ASSERT_TRUE(params["knees"].contains(mix)) << params.dump();
    EXPECT_TRUE(params["knees"][mix]["reached"].is_boolean());
  }
  EXPECT_NE(r.out.find("idle latency"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace compas::probes
