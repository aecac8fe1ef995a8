// Memory-bandwidth probe: size parsing, the kernels' results for every instruction set this CPU
// runs, run_membw's records and verification, and the saturation point on synthetic series.
// Nothing here passes or fails on timing.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/cpu_events.hpp"
#include "compas/probes/membw.hpp"
#include "compas/threads/topology.hpp"

namespace {

using MembwIsa = compas::base::Isa;
using compas::probes::MembwKernel;
namespace probes = compas::probes;
namespace base = compas::base;
namespace perf = compas::perf;

// ---- size parser ----------------------------------------------------------------------------

TEST(MembwSize, ParsesPlainAndUnits) {
  EXPECT_EQ(base::parse_size("4096"), 4096u);
  EXPECT_EQ(base::parse_size("4096B"), 4096u);
  EXPECT_EQ(base::parse_size("64KiB"), 64u * 1024);
  EXPECT_EQ(base::parse_size("1MiB"), 1u << 20);
  EXPECT_EQ(base::parse_size("1GiB"), std::size_t{1} << 30);
  EXPECT_EQ(base::parse_size("1GB"), 1000000000u);
  EXPECT_EQ(base::parse_size("512M"), std::size_t{512} << 20);
  EXPECT_EQ(base::parse_size("64K"), 65536u);
  EXPECT_EQ(base::parse_size("2G"), std::size_t{2} << 30);
  EXPECT_EQ(base::parse_size("10KB"), 10000u);
  EXPECT_EQ(base::parse_size("3MB"), 3000000u);
  EXPECT_EQ(base::parse_size("1TiB"), std::size_t{1} << 40);
}

TEST(MembwSize, CaseSpacesAndFractions) {
  EXPECT_EQ(base::parse_size("1gib"), std::size_t{1} << 30);
  EXPECT_EQ(base::parse_size("1 GiB"), std::size_t{1} << 30);
  EXPECT_EQ(base::parse_size(" 8mib "), std::size_t{8} << 20);
  EXPECT_EQ(base::parse_size("1.5GiB"), std::size_t{3} << 29);
  EXPECT_EQ(base::parse_size("0.5K"), 512u);
  EXPECT_EQ(base::parse_size("2.5GB"), 2500000000u);
}

TEST(MembwSize, RejectsBadValuesNamingThem) {
  for (const std::string bad :
       {"", "0", "0GiB", "-1", "-4096", "abc", "12abc", "1XB", "GiB", "1.5", "1..5M", "0.0001K",
        "1e9", "99999999999999999999999999999", "100000000TiB", "1 G i B", "+5", "0x100"}) {
    try {
      (void)base::parse_size(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos)
          << "message does not name '" << bad << "': " << e.what();
    }
  }
}

TEST(MembwSize, FormatsReadably) {
  EXPECT_EQ(base::format_size(std::size_t{1} << 30), "1 GiB");
  EXPECT_EQ(base::format_size(1000000000u), "1 GB");
  EXPECT_EQ(base::format_size(100), "100 B");
  EXPECT_EQ(base::format_size(64 * 1024), "64 KiB");
  EXPECT_EQ(base::format_size(1536), "1.5 KiB");
  EXPECT_EQ(base::format_size(std::size_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(base::format_size(25276502016u), "23.54 GiB");
  EXPECT_EQ(base::format_size(2000000), "2 MB");
}

// ---- names ----------------------------------------------------------------------------------

TEST(MembwNames, KernelsStoresIsas) {
  EXPECT_EQ(probes::parse_membw_kernel("read"), MembwKernel::load);
  EXPECT_EQ(probes::parse_membw_kernel("write"), MembwKernel::store);
  const auto ks = probes::parse_membw_kernels("triad,load,triad");
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0], MembwKernel::triad);
  EXPECT_EQ(ks[1], MembwKernel::load);
  EXPECT_THROW(probes::parse_membw_kernels("load,,copy"), std::invalid_argument);
  try {
    probes::parse_membw_kernels("load,foo");
    ADD_FAILURE() << "accepted foo";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'foo'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(probes::parse_membw_kernel("scale"), std::invalid_argument);
  EXPECT_EQ(probes::membw_bytes_per_element(MembwKernel::load), 8);
  EXPECT_EQ(probes::membw_bytes_per_element(MembwKernel::store), 8);
  EXPECT_EQ(probes::membw_bytes_per_element(MembwKernel::copy), 16);
  EXPECT_EQ(probes::membw_bytes_per_element(MembwKernel::triad), 24);
  EXPECT_EQ(probes::parse_store_mode("nt"), probes::StoreMode::streaming);
  EXPECT_THROW(probes::parse_store_mode("fast"), std::invalid_argument);
  // membw's names for the one store-kind enum, and the common names beside them.
  for (auto m :
       {probes::StoreMode::automatic, probes::StoreMode::cached, probes::StoreMode::streaming})
    EXPECT_EQ(probes::parse_store_mode(probes::store_mode_name(m)), m);
  EXPECT_EQ(probes::parse_store_mode("streaming"), probes::StoreMode::streaming);
  EXPECT_THROW(probes::parse_store_mode("direct"), std::invalid_argument);
  EXPECT_EQ(probes::parse_membw_isa("auto"), std::nullopt);
  EXPECT_EQ(probes::parse_membw_isa("generic"), MembwIsa::generic);
  EXPECT_THROW(probes::parse_membw_isa("neon9"), std::invalid_argument);
  EXPECT_TRUE(compas::base::cpu_runs(probes::best_membw_isa()));
}

// ---- kernels --------------------------------------------------------------------------------

std::vector<MembwIsa> supported_isas() {
  std::vector<MembwIsa> out;
  for (auto isa : {MembwIsa::generic, MembwIsa::sse2, MembwIsa::avx2, MembwIsa::avx512})
    if (compas::base::cpu_runs(isa)) out.push_back(isa);
  return out;
}

// Lengths around the vector and unroll widths, and offsets that misalign the arrays.
const std::size_t kLengths[] = {0, 1, 3, 7, 8, 9, 31, 32, 33, 63, 64, 65, 127, 1000, 4099};
const std::size_t kOffsets[] = {0, 1, 3, 5};

TEST(MembwKernels, LoadSumsExactly) {
  std::vector<double> buf(5000 + 16);
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<double>(i % 1000);
  for (auto isa : supported_isas())
    for (auto n : kLengths)
      for (auto off : kOffsets) {
        const double* a = buf.data() + off;
        const double expect = std::accumulate(a, a + n, 0.0);
        EXPECT_EQ(probes::membw::load(isa, a, n), expect)
            << compas::base::to_string(isa) << " n=" << n << " off=" << off;
      }
}

TEST(MembwKernels, StoreCopyTriadWriteExactlyTheirRange) {
  const double s = 3.0;
  for (auto isa : supported_isas())
    for (bool nt : {false, true})
      for (auto n : kLengths)
        for (auto off : kOffsets) {
          const std::string where = std::string(compas::base::to_string(isa)) +
                                    (nt ? " nt" : " temporal") + " n=" + std::to_string(n) +
                                    " off=" + std::to_string(off);
          const std::size_t len = n + 16;
          std::vector<double> a(len, -1.0), b(len), c(len), d(len, -1.0);
          for (std::size_t i = 0; i < len; ++i) {
            b[i] = static_cast<double>(i % 97);
            c[i] = static_cast<double>((i * 7) % 31);
          }
          probes::membw::store(isa, a.data() + off, n, 2.5, nt);
          for (std::size_t i = 0; i < len; ++i)
            ASSERT_EQ(a[i], (i >= off && i < off + n) ? 2.5 : -1.0) << where << " store i=" << i;

          probes::membw::copy(isa, d.data() + off, b.data() + off, n, nt);
          for (std::size_t i = 0; i < len; ++i)
            ASSERT_EQ(d[i], (i >= off && i < off + n) ? b[i] : -1.0) << where << " copy i=" << i;

          std::fill(a.begin(), a.end(), -1.0);
          // Sources at a different misalignment than the destination.
          probes::membw::triad(isa, a.data() + off, b.data() + 1, c.data() + 2, s, n, nt);
          for (std::size_t i = 0; i < len; ++i) {
            const double want =
                (i >= off && i < off + n) ? b[i - off + 1] + s * c[i - off + 2] : -1.0;
            ASSERT_EQ(a[i], want) << where << " triad i=" << i;
          }
        }
}

// ---- run_membw ------------------------------------------------------------------------------

probes::MembwOptions small_options() {
  probes::MembwOptions o;
  o.threads = {2, 1};  // given out of order: records come back ascending
  o.size_bytes = std::size_t{8} << 20;
  o.repeats = 2;
  o.min_repeat_ms = 1;
  o.oversubscribe = true;  // two threads even on a one-PU runner
  return o;
}

TEST(MembwRun, RecordsForEveryKernelAndThreadCount) {
  const auto topo = compas::threads::Topology::host();
  const auto o = small_options();
  const auto res = probes::run_membw(topo, o);
  EXPECT_EQ(res.threads, (std::vector<int>{1, 2}));
  ASSERT_EQ(res.records.size(), o.kernels.size() * 2);
  std::size_t i = 0;
  for (auto k : o.kernels)
    for (int t : {1, 2}) {
      const auto& r = res.records[i++];
      SCOPED_TRACE(probes::to_string(k) + " T=" + std::to_string(t));
      EXPECT_EQ(r.kernel, k);
      EXPECT_EQ(r.threads, t);
      EXPECT_GT(r.bandwidth_gbs, 0);
      EXPECT_LE(r.min_bandwidth_gbs, r.bandwidth_gbs);
      EXPECT_GE(r.max_bandwidth_gbs, r.bandwidth_gbs);
      EXPECT_DOUBLE_EQ(r.per_thread_gbs, r.bandwidth_gbs / t);
      ASSERT_EQ(r.thread_gbs.size(), static_cast<std::size_t>(t));
      for (double g : r.thread_gbs) EXPECT_GT(g, 0);
      EXPECT_EQ(r.repeats, 2);
      EXPECT_GE(r.passes, 1);
      EXPECT_TRUE(r.verified);
      EXPECT_LE(r.working_set_bytes, o.size_bytes);
      EXPECT_GT(r.working_set_bytes, o.size_bytes - 64 * 3);
      EXPECT_EQ(r.bytes_per_repeat, static_cast<std::uint64_t>(r.elements) *
                                        probes::membw_bytes_per_element(k) *
                                        static_cast<std::uint64_t>(r.passes));
      EXPECT_EQ(r.non_temporal.has_value(), probes::membw_has_stores(k));
      EXPECT_TRUE(compas::base::cpu_runs(r.isa));
      for (const auto& v : r.tried) EXPECT_GT(v.gbs, 0);
    }
  ASSERT_EQ(res.summaries.size(), o.kernels.size());
  for (const auto& s : res.summaries) {
    EXPECT_EQ(s.max_threads, 2);
    EXPECT_EQ(s.counts, 2);
    EXPECT_GT(s.peak_gbs, 0);
    EXPECT_EQ(s.stores == "none", s.kernel == MembwKernel::load);
  }
}

TEST(MembwRun, NoEventsNoRegions) {
  const auto topo = compas::threads::Topology::host();
  auto o = small_options();
  o.threads = {1};
  o.kernels = {MembwKernel::load};
  o.repeats = 1;
  const auto res = probes::run_membw(topo, o);
  ASSERT_EQ(res.records.size(), 1u);
  EXPECT_FALSE(res.records[0].region.has_value());
  EXPECT_TRUE(res.counter_errors.empty());
}

TEST(MembwRun, EventsMakeOneRegionPerKernelAndThreadCount) {
  const auto topo = compas::threads::Topology::host();
  auto o = small_options();
  o.kernels = {MembwKernel::copy, MembwKernel::triad};
  SKIP_WITHOUT_CPU_EVENTS();
  o.events = perf::choose_events("perf::TASK-CLOCK");
  ASSERT_TRUE(o.events.counting()) << o.events.notice;
  const auto res = probes::run_membw(topo, o);
  EXPECT_TRUE(res.counter_errors.empty());
  ASSERT_EQ(res.records.size(), 4u);
  for (const auto& r : res.records) {
    const std::string name = probes::to_string(r.kernel) + " T=" + std::to_string(r.threads);
    SCOPED_TRACE(name);
    ASSERT_TRUE(r.region.has_value());
    const auto& g = *r.region;
    EXPECT_EQ(g.region, name);
    EXPECT_EQ(g.threads, r.threads);  // one sample per team thread
    EXPECT_DOUBLE_EQ(g.calls.sum, static_cast<double>(r.repeats * r.threads));  // timed only
    ASSERT_EQ(g.counters.count("perf::TASK-CLOCK"), 1u);
    EXPECT_EQ(g.counters.at("perf::TASK-CLOCK").n, r.threads);
    EXPECT_GT(g.counters.at("perf::TASK-CLOCK").min, 0);
    EXPECT_EQ(g.counters.size(), 1u);  // only what was asked for and read
    // The kernel's own bytes over the slowest thread's time in the region.
    ASSERT_EQ(g.derived.count("bandwidth_gbs"), 1u);
    EXPECT_DOUBLE_EQ(g.derived.at("bandwidth_gbs"),
                     static_cast<double>(r.bytes_per_repeat) * r.repeats / g.seconds.max * 1e-9);
    EXPECT_EQ(g.derived.count("memory_bytes_est"), 0u);  // no last-level misses read
    EXPECT_TRUE(r.verified);
  }
}

TEST(MembwRun, ForcedStoreModesVerify) {
  const auto topo = compas::threads::Topology::host();
  for (auto mode : {probes::StoreMode::cached, probes::StoreMode::streaming}) {
    auto o = small_options();
    o.threads = {2};
    o.repeats = 1;
    o.size_bytes = (std::size_t{3} << 20) + 4096 + 24;  // not a multiple of lines x threads
    o.stores = mode;
    const auto res = probes::run_membw(topo, o);
    for (const auto& r : res.records) {
      SCOPED_TRACE(probes::to_string(r.kernel) + " " + probes::store_mode_name(mode));
      EXPECT_TRUE(r.verified);
      if (probes::membw_has_stores(r.kernel)) {
        ASSERT_TRUE(r.non_temporal.has_value());
        EXPECT_EQ(*r.non_temporal,
                  mode == probes::StoreMode::streaming && r.isa != compas::base::Isa::generic);
        for (const auto& v : r.tried) EXPECT_EQ(v.non_temporal, *r.non_temporal);
      }
    }
  }
}

TEST(MembwRun, EveryIsaVerifies) {
  const auto topo = compas::threads::Topology::host();
  for (auto isa : supported_isas()) {
    auto o = small_options();
    o.threads = {1};
    o.repeats = 1;
    o.size_bytes = std::size_t{1} << 20;
    o.isa = isa;
    o.stores = probes::StoreMode::cached;
    const auto res = probes::run_membw(topo, o);
    for (const auto& r : res.records) {
      EXPECT_EQ(r.isa, isa);
      EXPECT_TRUE(r.tried.empty());  // one variant only: nothing to calibrate
      EXPECT_TRUE(r.verified) << compas::base::to_string(isa) << " " << probes::to_string(r.kernel);
    }
  }
}

TEST(MembwRun, RejectsBadOptions) {
  const auto topo = compas::threads::Topology::host();
  auto o = small_options();
  o.threads = {};
  EXPECT_THROW(probes::run_membw(topo, o), std::invalid_argument);
  o = small_options();
  o.threads = {0};
  EXPECT_THROW(probes::run_membw(topo, o), std::invalid_argument);
  o = small_options();
  o.kernels = {};
  EXPECT_THROW(probes::run_membw(topo, o), std::invalid_argument);
  o = small_options();
  o.repeats = 0;
  EXPECT_THROW(probes::run_membw(topo, o), std::invalid_argument);
  o = small_options();
  o.size_bytes = 100;  // below one line per array per thread
  EXPECT_THROW(probes::run_membw(topo, o), std::invalid_argument);
  o = small_options();
  o.oversubscribe = false;
  o.threads = {topo.pus() + 1};
  EXPECT_THROW(probes::run_membw(topo, o), std::invalid_argument);
  const std::uint64_t phys = base::physical_memory_bytes();
  if (phys > 0) {
    o = small_options();
    o.size_bytes = static_cast<std::size_t>(phys / 2 + 4096);
    try {
      (void)probes::run_membw(topo, o);
      ADD_FAILURE() << "accepted a working set above half of physical memory";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(o.size_bytes)), std::string::npos)
          << e.what();
    }
  }
}

// ---- saturation point -----------------------------------------------------------------------

TEST(MembwSaturation, SyntheticSeries) {
  using probes::membw_saturation_point;
  EXPECT_EQ(membw_saturation_point({1, 2, 3}, {10, 19, 20}), 2);
  EXPECT_EQ(membw_saturation_point({1, 2, 3}, {10, 20, 40}), std::nullopt);
  EXPECT_EQ(membw_saturation_point({1, 2}, {10, 10.5}), 1);
  EXPECT_EQ(membw_saturation_point({1, 2, 4}, {10, 9, 30}), 1);       // a drop counts as saturated
  EXPECT_EQ(membw_saturation_point({1, 2}, {10, 11}), std::nullopt);  // exactly +10% still grows
  EXPECT_EQ(membw_saturation_point({2, 4, 8}, {10, 15, 15.5}), 4);
  EXPECT_EQ(membw_saturation_point({1}, {10}), std::nullopt);
  EXPECT_EQ(membw_saturation_point({}, {}), std::nullopt);
  EXPECT_EQ(membw_saturation_point({1, 2}, {10, 13}, 0.5), 1);
  EXPECT_THROW(membw_saturation_point({1, 2}, {10}), std::invalid_argument);
}

// From medians with their repeats' spread: a step whose gain range lies across 10% is not
// resolved, and no point is named.
TEST(MembwSaturation, ASpreadWiderThanTheStepIsNotResolved) {
  using probes::BandwidthSpread;
  const auto exact = [](std::vector<double> v) {
    std::vector<BandwidthSpread> out;
    for (double x : v) out.push_back({x, x, x});
    return out;
  };
  // Without spread: the same answers as the median series.
  EXPECT_EQ(probes::membw_saturation({1, 2, 3}, exact({10, 19, 20})).threads, 2);
  EXPECT_TRUE(probes::membw_saturation({1, 2, 3}, exact({10, 20, 40})).resolved);
  EXPECT_FALSE(probes::membw_saturation({1, 2, 3}, exact({10, 20, 40})).threads);
  // Medians 10 -> 10.5 (+5%, saturated by the medians), but the repeats range 9-11 and 9.5-11.5:
  // the step may gain from -14% to +28%.
  const auto wide = probes::membw_saturation({1, 2}, {{10, 9, 11}, {10.5, 9.5, 11.5}});
  EXPECT_FALSE(wide.resolved);
  EXPECT_FALSE(wide.threads);
  EXPECT_EQ(wide.from, 1);
  EXPECT_EQ(wide.to, 2);
  EXPECT_NEAR(wide.gain_min, 9.5 / 11 - 1, 1e-12);
  EXPECT_NEAR(wide.gain_max, 11.5 / 9 - 1, 1e-12);
  EXPECT_NE(wide.note().find("not resolved: from 1 to 2 threads"), std::string::npos)
      << wide.note();
  // A narrow spread keeps the verdict: 10 -> 10.5 with 1% either way saturates at 1.
  const auto narrow = probes::membw_saturation({1, 2}, {{10, 9.9, 10.1}, {10.5, 10.4, 10.6}});
  EXPECT_TRUE(narrow.resolved);
  EXPECT_EQ(narrow.threads, 1);
  EXPECT_EQ(narrow.note(), "");
  // A step that grows beyond its spread, then one whose spread straddles: not resolved at 2 -> 4.
  const auto later =
      probes::membw_saturation({1, 2, 4}, {{10, 9.8, 10.2}, {18, 17.5, 18.5}, {19.5, 17, 21}});
  EXPECT_FALSE(later.resolved);
  EXPECT_EQ(later.from, 2);
  EXPECT_THROW(probes::membw_saturation({1, 2}, exact({10})), std::invalid_argument);
}

// COMPaS Table 2 (bcopy, MB/s): 71.31, 74.12, 74.25, 74.24 -> the bus saturates at one thread.
TEST(MembwSaturation, CompasTable2) {
  EXPECT_EQ(probes::membw_saturation_point({1, 2, 3, 4}, {71.31, 74.12, 74.25, 74.24}), 1);
}

}  // namespace
