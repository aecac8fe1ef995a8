// OpenMP beside compas::Runtime: OpenMP's thread count is the team size, OpenMP's threads are
// pinned like the team (each on the CPU of the team thread with its number) unless the
// environment hands binding to OpenMP, they go back where they were when the Runtime ends, and
// Runtime::allreduce(value, op) reduces across the job from every thread of a parallel region or
// from one thread per process. Every rank of a compas-run job runs this program (P x T from the
// CTest variant); alone it is P = 1, and some variants set COMPAS_OPENMP / OMP_PROC_BIND /
// OMP_NUM_THREADS.
#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/doubling.hpp"
#include "compas/compas.hpp"

namespace {

compas::Runtime* g_rt = nullptr;
compas::Runtime& rt() {
  return *g_rt;
}
std::vector<int> g_before;  // the main thread's CPUs before the Runtime

// The CPUs the calling thread may run on, as the kernel says (not through hwloc).
std::vector<int> affinity_of_this_thread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The oracle for RuntimeOptions::openmp: should the Runtime have pinned OpenMP's threads here?
bool expect_pinned() {
  const std::string mode = env("COMPAS_OPENMP");
  if (mode == "pin") return true;
  if (mode == "leave") return false;
  if (!env("OMP_PROC_BIND").empty()) return lower(env("OMP_PROC_BIND")) == "false";
  return env("OMP_PLACES").empty() && env("GOMP_CPU_AFFINITY").empty();
}

// The CPUs this process may use: compas-run's slice, else the mask it started with: all of
// OpenMP's places when OpenMP binds (libgomp moved the main thread to the first before main()).
std::vector<int> process_cpus() {
  if (!env("COMPAS_CPUS").empty()) return compas::threads::parse_cpu_list(env("COMPAS_CPUS"));
  if (omp_get_proc_bind() == omp_proc_bind_false || omp_get_num_places() == 0) return g_before;
  std::set<int> all;
  for (int p = 0; p < omp_get_num_places(); ++p) {
    std::vector<int> ids(static_cast<std::size_t>(omp_get_place_num_procs(p)));
    omp_get_place_proc_ids(p, ids.data());
    all.insert(ids.begin(), ids.end());
  }
  return {all.begin(), all.end()};
}

// Each thread of one `#pragma omp parallel` (num_threads(n) when n > 0): its affinity, by
// omp_get_thread_num(), and the region's thread count.
struct RegionView {
  int threads = 0;
  std::vector<std::vector<int>> cpus;
};
RegionView look_at_a_region(int n = 0) {
  RegionView v;
  v.cpus.resize(64);
#pragma omp parallel num_threads(n > 0 ? n : omp_get_max_threads())
  {
    const int tid = omp_get_thread_num();
#pragma omp single
    v.threads = omp_get_num_threads();
    if (tid < 64) v.cpus[static_cast<std::size_t>(tid)] = affinity_of_this_thread();
  }
  v.cpus.resize(static_cast<std::size_t>(std::min(v.threads, 64)));
  return v;
}

// A 2x2 integer matrix product: associative, not commutative (as in test_runtime.cpp), so any
// reordering of the operands changes the result.
struct Mat {
  std::uint64_t a = 1, b = 0, c = 0, d = 1;
  bool operator==(const Mat&) const = default;
};
struct matmul {
  Mat operator()(const Mat& x, const Mat& y) const {
    return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
            x.c * y.b + x.d * y.d};
  }
};
Mat operand(int g) {
  const auto u = static_cast<std::uint64_t>(g);
  return {u + 2, 1, u * 3 + 1, u + 5};
}

// Doubles whose sum depends on the order of the additions.
double dvalue(int node, int thread, int call = 0) {
  const int g = node * 17 + thread * 5 + call;
  return (g % 3 == 0 ? 1e16 : 1.0) / (g + 3) + 0.1 * thread - 1e15 * (node % 2);
}
// What the hybrid reduction computes for n threads per process: each process's values in thread
// order, then the process totals grouped as comm's recursive doubling (tests/common/doubling.hpp).
double dreference(int nodes, int n, int call = 0) {
  std::vector<double> totals;
  for (int p = 0; p < nodes; ++p) {
    double mine = dvalue(p, 0, call);
    for (int t = 1; t < n; ++t) mine += dvalue(p, t, call);
    totals.push_back(mine);
  }
  return compas::test::doubling_allreduce(totals, [](double a, double b) { return a + b; });
}
std::uint64_t bits(double d) {
  return std::bit_cast<std::uint64_t>(d);
}

// Sets (or unsets, with nullopt) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

compas::RuntimeOptions parse_args(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  return compas::RuntimeOptions::from_args(argc, argv.data());
}

TEST(OpenMP, ThreadCountIsTheTeamSize) {
  int want = static_cast<int>(process_cpus().size());
  if (!env("COMPAS_THREADS").empty())
    want = std::atoi(env("COMPAS_THREADS").c_str());
  else if (!env("OMP_NUM_THREADS").empty())
    want = std::atoi(env("OMP_NUM_THREADS").c_str());  // its first value
  EXPECT_EQ(rt().threads(), want);
  EXPECT_EQ(omp_get_max_threads(), rt().threads());
  EXPECT_EQ(omp_get_dynamic(), 0);
  for (int round = 0; round < 3; ++round) EXPECT_EQ(look_at_a_region().threads, rt().threads());
  int loop_threads = 0;
#pragma omp parallel for reduction(max : loop_threads)
  for (int i = 0; i < 1000; ++i) loop_threads = std::max(loop_threads, omp_get_num_threads());
  EXPECT_EQ(loop_threads, rt().threads());
}

// rt.barrier() returns omp_get_wtime() once every process has arrived (a port's timer starts
// there): after every process's arrival (compas-run's processes share one host's clock) and
// before the caller's next reading.
TEST(OpenMP, FunneledBarrierReturnsTheWtimeAfterEveryArrival) {
  const double arrived = omp_get_wtime();
  const double t = compas::barrier(rt());
  const double after = omp_get_wtime();
  EXPECT_LE(t, after);
  EXPECT_GE(t, rt().allreduce(arrived, compas::op::max{}));
}

TEST(OpenMP, ModeFollowsTheEnvironment) {
  EXPECT_EQ(rt().openmp_pinned(), expect_pinned());
  if (rt().openmp_pinned()) {
    EXPECT_EQ(rt().openmp_binding().size(), static_cast<std::size_t>(rt().threads()));
  } else {
    EXPECT_TRUE(rt().openmp_binding().empty());
  }
}

TEST(OpenMP, EveryThreadSitsOnTheCpuOfItsTeamThread) {
  if (!expect_pinned()) GTEST_SKIP() << "OpenMP's binding is left to OpenMP here";
  const auto& pu = rt().team().placement().pu_of_thread;
  // In every region, not only the first: libgomp gives team id i to the same thread each time.
  for (int round = 0; round < 3; ++round) {
    const RegionView v = look_at_a_region(round == 2 ? rt().threads() : 0);
    ASSERT_EQ(v.threads, rt().threads());
    std::set<int> distinct;
    for (std::size_t i = 0; i < v.cpus.size(); ++i) {
      EXPECT_EQ(v.cpus[i], std::vector<int>{pu[i]}) << "OpenMP thread " << i << ", round " << round;
      if (!v.cpus[i].empty()) distinct.insert(v.cpus[i][0]);
    }
    if (!rt().team().placement().oversubscribed) {
      EXPECT_EQ(distinct.size(), v.cpus.size()) << "two OpenMP threads share a cpu";
    }
  }
  // Every CPU of the loop's threads is one of this process's.
  const auto mine = process_cpus();
  std::vector<int> on(static_cast<std::size_t>(rt().threads()), -1);
#pragma omp parallel for schedule(static, 1)
  for (int i = 0; i < rt().threads(); ++i) on[static_cast<std::size_t>(i)] = sched_getcpu();
  for (std::size_t i = 0; i < on.size(); ++i) {
    EXPECT_EQ(on[i], pu[i]) << "iteration " << i;
    EXPECT_NE(std::find(mine.begin(), mine.end(), on[i]), mine.end());
  }
  // What the Runtime read back agrees.
  ASSERT_EQ(rt().openmp_binding().size(), pu.size());
  for (std::size_t i = 0; i < pu.size(); ++i)
    EXPECT_EQ(rt().openmp_binding()[i], std::vector<int>{pu[i]}) << "OpenMP thread " << i;
}

TEST(OpenMP, LeftAloneTheBindingIsOpenMPs) {
  if (expect_pinned()) GTEST_SKIP() << "the Runtime pins OpenMP's threads here";
  const RegionView v = look_at_a_region();
  ASSERT_EQ(v.threads, rt().threads());
  const auto mine = process_cpus();
  const bool openmp_binds = omp_get_proc_bind() != omp_proc_bind_false;  // OMP_PROC_BIND, ...
  for (std::size_t i = 0; i < v.cpus.size(); ++i) {
    if (openmp_binds) {  // libgomp's places lie inside the mask the process started with
      for (int c : v.cpus[i])
        EXPECT_NE(std::find(mine.begin(), mine.end(), c), mine.end())
            << "OpenMP thread " << i << " on cpu " << c;
    } else if (i > 0) {
      // Untouched, unbound libgomp threads inherit the one CPU of the thread that made them,
      // which the team pinned: the problem the pinning solves.
      EXPECT_EQ(v.cpus[i], std::vector<int>{rt().team().placement().pu_of_thread[0]})
          << "OpenMP thread " << i;
    }
  }
}

TEST(OpenMP, AllreduceFromEveryThreadOfARegion) {
  const int T = rt().threads(), P = rt().processes(), me = rt().process();
  std::vector<long> sums(static_cast<std::size_t>(T));
  std::vector<int> maxes(static_cast<std::size_t>(T));
  std::vector<Mat> prods(static_cast<std::size_t>(T));
  std::vector<double> dsums(static_cast<std::size_t>(T));
  std::atomic<int> errors{0};
#pragma omp parallel
  {
    const int tid = omp_get_thread_num();
    const auto i = static_cast<std::size_t>(tid);
    try {
      sums[i] = rt().allreduce(static_cast<long>(me * 100 + tid), compas::op::sum{});
      maxes[i] = rt().allreduce(me * 100 + tid, compas::op::max{});
      prods[i] = rt().allreduce(operand(me * T + tid), matmul{});
      dsums[i] = rt().allreduce(dvalue(me, tid), compas::op::sum{});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "thread %d: %s\n", tid, e.what());
      ++errors;
    }
  }
  ASSERT_EQ(errors.load(), 0);
  const long want_sum = 100L * T * P * (P - 1) / 2 + static_cast<long>(P) * T * (T - 1) / 2;
  Mat want_prod;
  for (int g = 0; g < P * T; ++g) want_prod = matmul{}(want_prod, operand(g));
  // The ThreadCtx form over the team, with the same values: the same bits.
  std::vector<double> team_dsums(static_cast<std::size_t>(T));
  rt().run([&](compas::ThreadCtx& t) {
    team_dsums[static_cast<std::size_t>(t.thread())] =
        rt().allreduce(t, dvalue(me, t.thread()), compas::op::sum{});
  });
  for (std::size_t i = 0; i < static_cast<std::size_t>(T); ++i) {
    EXPECT_EQ(sums[i], want_sum) << "thread " << i;
    EXPECT_EQ(maxes[i], (P - 1) * 100 + T - 1) << "thread " << i;
    EXPECT_TRUE(prods[i] == want_prod) << "thread " << i;
    EXPECT_EQ(bits(dsums[i]), bits(dreference(P, T))) << dsums[i] << " vs " << dreference(P, T);
    EXPECT_EQ(bits(dsums[i]), bits(team_dsums[i])) << "thread " << i;
  }
}

TEST(OpenMP, AllreduceCallsFollowEachOtherInRegionsOfAnySize) {
  const int T = rt().threads(), P = rt().processes(), me = rt().process();
  // T threads, then more than T (the slots grow), then fewer; a region of one thread is not an
  // active region, so its one thread takes the funneled form.
  for (const int n : {T, T + 1, std::max(1, T - 1), T}) {
    // Beyond T, the extra thread shares the CPU of thread 0, and libgomp's spinning barriers
    // take turns of a time slice: fewer calls there.
    const int calls = n > T ? 10 : 200;
    std::atomic<int> wrong{0}, errors{0};
#pragma omp parallel num_threads(n)
    {
      const int tid = omp_get_thread_num();
      try {
        for (int call = 0; call < calls; ++call) {
          const long got =
              rt().allreduce(static_cast<long>(call * 1000 + me * 10 + tid), compas::op::sum{});
          const long want = static_cast<long>(call) * 1000 * P * n + 10L * n * P * (P - 1) / 2 +
                            static_cast<long>(P) * n * (n - 1) / 2;
          if (got != want) ++wrong;
          const double d = rt().allreduce(dvalue(me, tid, call), compas::op::sum{});
          if (bits(d) != bits(dreference(P, n, call))) ++wrong;
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "thread %d: %s\n", tid, e.what());
        ++errors;
      }
    }
    EXPECT_EQ(errors.load(), 0) << n << " threads";
    EXPECT_EQ(wrong.load(), 0) << n << " threads";
  }
}

TEST(OpenMP, FunneledAllreduceFromOneThreadPerProcess) {
  const int P = rt().processes(), me = rt().process();
  EXPECT_EQ(rt().allreduce(static_cast<long>(me + 1), compas::op::sum{}),
            static_cast<long>(P) * (P + 1) / 2);
  Mat want;
  for (int r = 0; r < P; ++r) want = matmul{}(want, operand(r));
  EXPECT_TRUE(rt().allreduce(operand(me), matmul{}) == want);
  EXPECT_EQ(bits(rt().allreduce(dvalue(me, 0), compas::op::sum{})), bits(dreference(P, 1)));
  long in_one_thread_region = 0;
#pragma omp parallel num_threads(1)
  in_one_thread_region = rt().allreduce(static_cast<long>(me + 1), compas::op::sum{});
  EXPECT_EQ(in_one_thread_region, static_cast<long>(P) * (P + 1) / 2);
}

// PRK's structure: one parallel region spans the time loop; the halo exchange runs under
// `#pragma omp master` (the thread that made the Runtime), with a barrier after it, and the sweep
// is an `omp for`. The result is the same as with the exchange outside any region; `single`,
// which may run on another thread, is refused.
TEST(OpenMP, HaloExchangeFromTheMasterOfOneRegionSpanningTheTimeLoop) {
  const long n = 40L * rt().processes() + 3;
  auto run = [&](bool in_region) {
    compas::DistArray<double> u(rt(), compas::Range{0, n}), v = u.like();
    for (long i = u.lo(); i < u.hi(); ++i) u[i] = static_cast<double>((i * 7) % 11);
    if (in_region) {
#pragma omp parallel
      for (int s = 0; s < 20; ++s) {
#pragma omp master
        u.exchange_halos();
#pragma omp barrier
#pragma omp for
        for (long i = u.lo(); i < u.hi(); ++i)
          v[i] = (i > 0 && i < n - 1) ? 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]) : u[i];
#pragma omp single
        swap(u, v);
      }
    } else {
      for (int s = 0; s < 20; ++s) {
        u.exchange_halos();
#pragma omp parallel for
        for (long i = u.lo(); i < u.hi(); ++i)
          v[i] = (i > 0 && i < n - 1) ? 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]) : u[i];
        swap(u, v);
      }
    }
    std::vector<double> mine(u.local().begin(), u.local().end());
    return mine;
  };
  EXPECT_EQ(run(true), run(false));
  // From an OpenMP thread that did not make the Runtime: refused before anything collective.
  compas::DistArray<double> w(rt(), compas::Range{0, n});
  int refused = 0;
#pragma omp parallel num_threads(2) reduction(+ : refused)
  if (omp_get_thread_num() == 1) {
    try {
      w.exchange_halos();
    } catch (const std::logic_error&) {
      refused = 1;
    }
  }
  if (omp_get_max_threads() >= 2) {
    EXPECT_EQ(refused, 1);
  }
}

TEST(OpenMP, AllreduceWithoutThreadCtxInsideRunIsALogicError) {
  std::atomic<int> errors{0};
  rt().run([&](compas::ThreadCtx&) {
    try {
      rt().allreduce(1, compas::op::sum{});
    } catch (const std::logic_error&) {
      ++errors;
    }
  });
  EXPECT_EQ(errors.load(), rt().threads());
}

TEST(OpenMP, AllreduceInANestedRegionIsALogicError) {
  if (rt().threads() < 2) GTEST_SKIP() << "needs an active outer region";
  const int levels = omp_get_max_active_levels();
  for (const int inner : {1, 2}) {  // an inactive inner region (one thread), an active one
    omp_set_max_active_levels(2);
    std::atomic<int> errors{0};
#pragma omp parallel
    {
#pragma omp parallel num_threads(inner)
      {
        try {
          rt().allreduce(1, compas::op::sum{});
        } catch (const std::logic_error&) {
          ++errors;
        }
      }
    }
    omp_set_max_active_levels(levels);
    EXPECT_EQ(errors.load(), rt().threads() * inner) << "inner regions of " << inner;
  }
}

TEST(OpenMPOptions, ModeFromEnvironmentAndFlags) {
  {
    const ScopedEnv e("COMPAS_OPENMP", "pin");
    EXPECT_EQ(compas::RuntimeOptions::from_environment().openmp, compas::OpenMP::pin);
    EXPECT_EQ(parse_args({"prog", "--openmp", "leave"}).openmp, compas::OpenMP::leave);
    EXPECT_EQ(parse_args({"prog", "--openmp=auto"}).openmp, compas::OpenMP::automatic);
  }
  {
    const ScopedEnv e("COMPAS_OPENMP", std::nullopt);
    EXPECT_EQ(compas::RuntimeOptions::from_environment().openmp, compas::OpenMP::automatic);
    EXPECT_EQ(compas::RuntimeOptions{}.openmp, compas::OpenMP::automatic);
  }
  std::vector<std::string> args = {"prog", "--openmp", "pin", "--keep"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = 4;
  EXPECT_EQ(compas::RuntimeOptions::from_args(argc, argv.data()).openmp, compas::OpenMP::pin);
  ASSERT_EQ(argc, 2);
  EXPECT_STREQ(argv[1], "--keep");
}

TEST(OpenMPOptions, BadModesNameTheValue) {
  auto expect_bad = [](auto&& parse, const std::string& value) {
    try {
      parse();
      ADD_FAILURE() << "'" << value << "' was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("'" + value + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("auto, pin or leave"), std::string::npos) << msg;
    }
  };
  {
    const ScopedEnv e("COMPAS_OPENMP", "bogus");
    expect_bad([] { return compas::RuntimeOptions::from_environment(); }, "bogus");
  }
  const ScopedEnv e("COMPAS_OPENMP", std::nullopt);
  expect_bad([] { return parse_args({"prog", "--openmp", ""}); }, "");
  expect_bad([] { return parse_args({"prog", "--openmp="}); }, "");
  expect_bad([] { return parse_args({"prog", "--openmp", "Pin"}); }, "Pin");
  EXPECT_THROW(parse_args({"prog", "--openmp"}), std::invalid_argument);
}

TEST(OpenMPOptions, OmpNumThreadsIsTheTeamSizeWhenNothingElseSaysIt) {
  const ScopedEnv no_compas_threads("COMPAS_THREADS", std::nullopt);
  {
    const ScopedEnv e("OMP_NUM_THREADS", "3,2");
    EXPECT_EQ(compas::RuntimeOptions::from_environment().threads, 3);
    EXPECT_EQ(parse_args({"prog"}).threads, 3);
    EXPECT_EQ(parse_args({"prog", "--threads", "2"}).threads, 2);
    const ScopedEnv c("COMPAS_THREADS", "1");
    EXPECT_EQ(compas::RuntimeOptions::from_environment().threads, 1);
  }
  {
    const ScopedEnv e("OMP_NUM_THREADS", " 5 ");
    EXPECT_EQ(compas::RuntimeOptions::from_environment().threads, 5);
  }
  {
    const ScopedEnv e("OMP_NUM_THREADS", std::nullopt);
    EXPECT_EQ(compas::RuntimeOptions::from_environment().threads, 0);
  }
  for (const char* bad : {"two", "0", "-1", ",4", "4x,2"}) {
    const ScopedEnv e("OMP_NUM_THREADS", bad);
    try {
      compas::RuntimeOptions::from_environment();
      ADD_FAILURE() << "OMP_NUM_THREADS '" << bad << "' was accepted";
    } catch (const std::invalid_argument& err) {
      const std::string msg = err.what();
      EXPECT_NE(msg.find(std::string("OMP_NUM_THREADS '") + bad + "'"), std::string::npos) << msg;
    }
    // Not used, so not checked, when the team size comes from elsewhere.
    EXPECT_EQ(parse_args({"prog", "--threads", "2"}).threads, 2);
    const ScopedEnv c("COMPAS_THREADS", "1");
    EXPECT_EQ(compas::RuntimeOptions::from_environment().threads, 1);
  }
}

// After the Runtime: the OpenMP threads it pinned are back on the CPUs the process started with,
// and OpenMP's thread count and dynamic setting are what they were. Returns the number of faults.
int check_after_the_runtime(bool pinned, int threads, int max_before, int dynamic_before) {
  int faults = 0;
  auto fault = [&](const std::string& what) {
    std::fprintf(stderr, "test_openmp: after the Runtime: %s\n", what.c_str());
    ++faults;
  };
  if (omp_get_max_threads() != max_before)
    fault("omp_get_max_threads() is " + std::to_string(omp_get_max_threads()) + ", was " +
          std::to_string(max_before));
  if (omp_get_dynamic() != dynamic_before) fault("omp_get_dynamic() changed");
  if (affinity_of_this_thread() != g_before) fault("the main thread is not back on its cpus");
  if (!pinned) return faults;
  const RegionView v = look_at_a_region(threads);
  for (std::size_t i = 0; i < v.cpus.size(); ++i)
    if (v.cpus[i] != g_before)
      fault("OpenMP thread " + std::to_string(i) + " is on cpus " +
            compas::threads::format_cpu_list(v.cpus[i]) + ", not " +
            compas::threads::format_cpu_list(g_before));
  return faults;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  g_before = affinity_of_this_thread();
  const int max_before = omp_get_max_threads();
  const int dynamic_before = omp_get_dynamic();
  int failed = 0;
  bool pinned = false;
  int threads = 0;
  try {
    compas::Runtime runtime(argc, argv);
    g_rt = &runtime;
    failed = RUN_ALL_TESTS() != 0;
    // Every rank must agree: a failure anywhere fails the job (the funneled allreduce).
    failed = runtime.allreduce(failed, compas::op::max{});
    pinned = runtime.openmp_pinned();
    threads = runtime.threads();
    g_rt = nullptr;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_openmp: %s\n", e.what());
    return 1;
  }
  const int faults = check_after_the_runtime(pinned, threads, max_before, dynamic_before);
  return failed || faults > 0;
}
