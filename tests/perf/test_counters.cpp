// The PAPI path, exercised for real with the software events this VM offers, the fallback
// chain for hardware events it lacks, and the runtime's SDE counters read back through PAPI.
#include <gtest/gtest.h>
#if COMPAS_TEST_WITH_PAPI
#include <papi.h>
#endif

#include <algorithm>
#include <string>

#include "../common/cpu_events.hpp"
#include "compas/perf/counters.hpp"
#include "compas/perf/sde.hpp"
#include "compas/threads/team.hpp"

namespace cp = compas::perf;
namespace ct = compas::threads;

namespace {

// True when this machine has a PMU PAPI can use (a real cluster node, not this VM).
bool hardware_counters_present() {
  return cp::papi_available() &&
         cp::choose_events("PAPI_TOT_CYC").source == cp::CounterSource::hardware;
}

}  // namespace

#if COMPAS_TEST_WITH_PAPI
TEST(Counters, PapiInitialises) {
  ASSERT_TRUE(cp::papi_available()) << cp::papi_error();
  EXPECT_FALSE(cp::papi_version().empty());
}
#else
// Built without PAPI (COMPAS_PAPI=OFF): every request is measured as time only, names every
// event it cannot count and says why, in one line; bad names are still bad input.
TEST(Counters, WithoutPapiEveryRequestIsTimeOnlyAndSaysWhy) {
  EXPECT_FALSE(cp::papi_available());
  EXPECT_NE(cp::papi_error().find("built without PAPI"), std::string::npos) << cp::papi_error();
  EXPECT_EQ(cp::cpu_events_unavailable(), cp::papi_error());
  const auto c = cp::choose_events("ipc,perf::TASK-CLOCK");
  EXPECT_FALSE(c.counting());
  EXPECT_EQ(c.source, cp::CounterSource::time_only);
  EXPECT_EQ(c.unavailable,
            (std::vector<std::string>{"PAPI_TOT_CYC", "PAPI_TOT_INS", "perf::TASK-CLOCK"}));
  EXPECT_NE(c.notice.find("PAPI_TOT_INS, perf::TASK-CLOCK not countable here"), std::string::npos)
      << c.notice;
  EXPECT_NE(c.notice.find("built without PAPI"), std::string::npos) << c.notice;
  EXPECT_THROW(cp::choose_events("a b"), std::invalid_argument);
  cp::ThreadCounters counters(c);
  EXPECT_EQ(counters.size(), 0);
}

TEST(Sde, WithoutPapiCountersAreListedOnly) {
  cp::sde::export_thread_activity();
  const auto names = cp::sde::registered();
  EXPECT_NE(std::find(names.begin(), names.end(), "barriers"), names.end());
}
#endif

TEST(Counters, EmptyRequestCountsNothing) {
  const auto c = cp::choose_events("");
  EXPECT_FALSE(c.counting());
  EXPECT_TRUE(c.notice.empty());
  EXPECT_EQ(c.source, cp::CounterSource::time_only);
}

TEST(Counters, GroupsExpand) {
  EXPECT_EQ(cp::group_events("ipc"), (std::vector<std::string>{"PAPI_TOT_CYC", "PAPI_TOT_INS"}));
  EXPECT_EQ(cp::group_events("soft"), cp::software_events());
  EXPECT_THROW(cp::group_events("bogus"), std::invalid_argument);
}

TEST(Counters, EventRequestsExpandGroupsInOrderWithoutDuplicates) {
  EXPECT_EQ(cp::expand_event_request(""), std::vector<std::string>{});
  EXPECT_EQ(cp::expand_event_request(",,"), std::vector<std::string>{});
  EXPECT_EQ(cp::expand_event_request("PAPI_TOT_INS,ipc,,PAPI_TOT_INS,perf::TASK-CLOCK"),
            (std::vector<std::string>{"PAPI_TOT_INS", "PAPI_TOT_CYC", "perf::TASK-CLOCK"}));
  for (const char* bad : {"PAPI_TOT_CYC, PAPI_L3_TCM", "a\tb", "x\x01"}) {
    try {
      (void)cp::expand_event_request(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("invalid event name"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(cp::expand_event_request(std::string(300, 'A')), std::invalid_argument);
}

#if COMPAS_TEST_WITH_PAPI
TEST(Counters, UnknownEventNameIsBadInput) {
  try {
    cp::choose_events("PAPI_TOT_CYC,NOT_AN_EVENT_XYZ");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("NOT_AN_EVENT_XYZ"), std::string::npos);
  }
}

// The reason given for counting nothing agrees with what can be counted.
TEST(Counters, CpuEventsUnavailableMeansNothingIsCountable) {
  const std::string why = cp::cpu_events_unavailable();
  const auto soft = cp::choose_events("soft");
  EXPECT_EQ(why.empty(), soft.counting()) << why << " / " << soft.notice;
  if (!why.empty()) {
    EXPECT_EQ(soft.source, cp::CounterSource::time_only);
    EXPECT_NE(soft.notice.find(why), std::string::npos) << soft.notice;
  }
}

// Without the perf_event component a native name cannot be checked: it is not countable, which
// is not bad input; a name that is neither native nor PAPI's stays bad input.
TEST(Counters, NativeNamesAreNotBadInputWhenPapiCannotCheckThem) {
  if (cp::cpu_events_unavailable().empty())
    GTEST_SKIP() << "PAPI's perf_event component works here: native names are checked by "
                    "SoftwareEventsAreCountedByName";
  const auto c = cp::choose_events("perf::TASK-CLOCK,perf::NO-SUCH-EVENT");
  EXPECT_FALSE(c.counting());
  EXPECT_EQ(c.unavailable, (std::vector<std::string>{"perf::TASK-CLOCK", "perf::NO-SUCH-EVENT"}));
  EXPECT_NE(c.notice.find("measuring time only"), std::string::npos) << c.notice;
  EXPECT_THROW(cp::choose_events("perf::TASK-CLOCK,NOT_AN_EVENT_XYZ"), std::invalid_argument);
}
#endif

TEST(Counters, SoftwareEventsAreCountedByName) {
  SKIP_WITHOUT_CPU_EVENTS();
  const auto c = cp::choose_events("perf::TASK-CLOCK,perf::CONTEXT-SWITCHES");
  ASSERT_EQ(c.events.size(), 2u) << c.notice;
  EXPECT_EQ(c.source, cp::CounterSource::software);
  EXPECT_TRUE(c.unavailable.empty());
  EXPECT_TRUE(c.notice.empty()) << c.notice;
  EXPECT_EQ(c.index_of("perf::CONTEXT-SWITCHES"), 1);
  EXPECT_EQ(c.index_of("PAPI_TOT_CYC"), -1);
}

TEST(Counters, MissingHardwareEventFallsBackWithOneNotice) {
  if (hardware_counters_present()) GTEST_SKIP() << "this machine has hardware counters";
  const auto c = cp::choose_events("ipc");
  // Nothing of the request is counted, so nothing of it may be reported...
  EXPECT_EQ(c.unavailable, (std::vector<std::string>{"PAPI_TOT_CYC", "PAPI_TOT_INS"}));
  EXPECT_EQ(c.index_of("PAPI_TOT_CYC"), -1);
  // ...and the software events take over, or time alone where PAPI counts no CPU event at all,
  // said in one line.
  const std::string why = cp::cpu_events_unavailable();
  if (why.empty()) {
    EXPECT_EQ(c.source, cp::CounterSource::software);
    EXPECT_EQ(c.events, cp::software_events());
    EXPECT_NE(c.notice.find("software"), std::string::npos);
  } else {
    EXPECT_EQ(c.source, cp::CounterSource::time_only);
    EXPECT_TRUE(c.events.empty());
    EXPECT_NE(c.notice.find("measuring time only"), std::string::npos) << c.notice;
    EXPECT_NE(c.notice.find(why), std::string::npos) << c.notice;
  }
  EXPECT_NE(c.notice.find("PAPI_TOT_CYC"), std::string::npos);
  EXPECT_EQ(c.notice.find('\n'), std::string::npos);

  testing::internal::CaptureStderr();
  cp::announce(c);
  cp::announce(c);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST(Counters, MixedRequestKeepsWhatIsCountable) {
  if (hardware_counters_present()) GTEST_SKIP() << "this machine has hardware counters";
  const auto c = cp::choose_events("PAPI_L3_TCM,perf::PAGE-FAULTS");
  if (cp::cpu_events_unavailable().empty()) {
    EXPECT_EQ(c.events, (std::vector<std::string>{"perf::PAGE-FAULTS"}));
    EXPECT_EQ(c.unavailable, (std::vector<std::string>{"PAPI_L3_TCM"}));
  } else {
    EXPECT_TRUE(c.events.empty());
    EXPECT_EQ(c.unavailable, (std::vector<std::string>{"PAPI_L3_TCM", "perf::PAGE-FAULTS"}));
  }
  EXPECT_NE(c.notice.find("PAPI_L3_TCM"), std::string::npos);
}

TEST(Counters, ThreadCountersReadTaskClockOnEveryThread) {
  SKIP_WITHOUT_CPU_EVENTS();
  const auto c = cp::choose_events("perf::TASK-CLOCK");
  ASSERT_TRUE(c.counting());
  ct::Topology topo = ct::Topology::host();
  ct::TeamOptions o;
  o.threads = 2;
  o.allow_oversubscribe = true;
  ct::Team team(topo, o);
  std::vector<long long> delta(2, -1);
  std::vector<std::string> errors(2);
  team.run([&](ct::ThreadCtx& t) {
    cp::ThreadCounters counters(c);
    errors[static_cast<std::size_t>(t.thread())] = counters.error();
    if (!counters.error().empty()) return;
    long long v0 = 0, v1 = 0;
    counters.read(&v0);
    volatile double x = 0;
    for (int i = 0; i < 2000000; ++i) x = x + 1e-9 * i;
    counters.read(&v1);
    delta[static_cast<std::size_t>(t.thread())] = v1 - v0;
  });
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(errors[static_cast<std::size_t>(t)], "");
    EXPECT_GT(delta[static_cast<std::size_t>(t)], 0) << "thread " << t;
  }
}

#if COMPAS_TEST_WITH_PAPI
TEST(Sde, ThreadActivityIsReadableThroughPapiByName) {
  ASSERT_TRUE(cp::papi_available());
  cp::sde::export_thread_activity();
  const auto names = cp::sde::registered();
  ASSERT_NE(std::find(names.begin(), names.end(), "barriers"), names.end());

  int es = PAPI_NULL;
  ASSERT_EQ(PAPI_create_eventset(&es), PAPI_OK);
  ASSERT_EQ(PAPI_add_named_event(es, cp::sde::papi_name("barriers").c_str()), PAPI_OK)
      << "sde:::compas::barriers not found through PAPI";
  ASSERT_EQ(PAPI_start(es), PAPI_OK);

  ct::Topology topo = ct::Topology::host();
  ct::TeamOptions o;
  o.threads = 2;
  o.allow_oversubscribe = true;
  ct::Team team(topo, o);
  constexpr int kBarriers = 100;
  team.run([&](ct::ThreadCtx& t) {
    for (int i = 0; i < kBarriers; ++i) t.barrier();
  });
  long long value = 0;
  ASSERT_EQ(PAPI_stop(es, &value), PAPI_OK);
  PAPI_cleanup_eventset(es);
  PAPI_destroy_eventset(&es);
  // Two threads passed kBarriers each while the counter ran.
  EXPECT_EQ(value, 2 * kBarriers);
}
#endif
