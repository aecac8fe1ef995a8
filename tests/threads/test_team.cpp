// Team: SPMD runs on pinned threads of the real host, unpinned teams on synthetic machines,
// exceptions, repeated runs and oversubscription.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "affinity_guard.hpp"
#include "compas/threads/ops.hpp"
#include "compas/threads/team.hpp"
#include "host_topology.hpp"

namespace ct = compas::threads;

namespace {

using compas_threads_test::host;

ct::TeamOptions options(int threads, bool allow_oversubscribe = false) {
  ct::TeamOptions o;
  o.threads = threads;
  o.allow_oversubscribe = allow_oversubscribe;
  return o;
}

std::vector<int> host_cpus() {
  std::vector<int> out;
  for (const auto& p : host().pu_list()) out.push_back(p.os_index);
  std::sort(out.begin(), out.end());
  return out;
}

// What one thread saw of itself during a run.
struct Seen {
  std::thread::id id;
  int calls = 0;
  int nthreads = 0;
  int cpu = -2;
  int socket = -2;
  int sched_cpu = -2;
  std::vector<int> binding;
  bool leader = false;
  ct::Team* team = nullptr;
};

// Runs one body that records what every thread sees.
std::vector<Seen> observe(ct::Team& team, const ct::Topology& binding_topo) {
  std::vector<Seen> seen(static_cast<std::size_t>(team.threads()));
  team.run([&](ct::ThreadCtx& ctx) {
    Seen& s = seen[static_cast<std::size_t>(ctx.thread())];
    s.id = std::this_thread::get_id();
    ++s.calls;
    s.nthreads = ctx.threads();
    s.cpu = ctx.cpu();
    s.socket = ctx.socket();
    s.sched_cpu = sched_getcpu();
    s.binding = binding_topo.current_thread_binding();
    s.leader = ctx.is_leader();
    s.team = &ctx.team();
  });
  return seen;
}

}  // namespace

TEST(Team, RunExecutesEveryTidOnceWithThreadZeroOnCaller) {
  for (int threads : {1, 2, host().pus()}) {
    if (threads > host().pus()) continue;
    ct::Team team(host(), options(threads));
    ASSERT_EQ(team.threads(), threads);
    const auto seen = observe(team, host());
    std::set<std::thread::id> ids;
    for (int t = 0; t < threads; ++t) {
      const Seen& s = seen[static_cast<std::size_t>(t)];
      EXPECT_EQ(s.calls, 1) << "tid " << t;
      EXPECT_EQ(s.nthreads, threads);
      EXPECT_EQ(s.leader, t == 0);
      EXPECT_EQ(s.team, &team);
      ids.insert(s.id);
    }
    EXPECT_EQ(seen[0].id, std::this_thread::get_id());
    EXPECT_EQ(static_cast<int>(ids.size()), threads) << "two tids ran on one thread";
  }
}

TEST(Team, ThreadsAreBoundToTheirPlacedCpu) {
  const int threads = host().pus();
  std::vector<int> reversed = host_cpus();
  std::reverse(reversed.begin(), reversed.end());
  ct::BindSpec list;
  list.policy = ct::BindPolicy::list;
  list.cpus = reversed;
  ct::BindSpec sockets;
  sockets.policy = ct::BindPolicy::sockets;
  ct::BindSpec scatter;
  scatter.policy = ct::BindPolicy::scatter;
  for (const ct::BindSpec& bind : {ct::BindSpec{}, scatter, sockets, list}) {
    ct::TeamOptions o = options(threads);
    o.bind = bind;
    ct::Team team(host(), o);
    const ct::Placement& p = team.placement();
    const ct::Placement expected = ct::place_threads(host(), threads, bind);
    EXPECT_EQ(p.pu_of_thread, expected.pu_of_thread) << bind.to_string();
    EXPECT_FALSE(p.oversubscribed);
    ASSERT_EQ(team.binding().size(), static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t)
      EXPECT_EQ(team.binding()[static_cast<std::size_t>(t)],
                std::vector<int>{p.pu_of_thread[static_cast<std::size_t>(t)]})
          << bind.to_string() << " tid " << t;
    // And they still are when the body runs.
    for (int round = 0; round < 3; ++round) {
      const auto seen = observe(team, host());
      for (int t = 0; t < threads; ++t) {
        const Seen& s = seen[static_cast<std::size_t>(t)];
        const int cpu = p.pu_of_thread[static_cast<std::size_t>(t)];
        EXPECT_EQ(s.cpu, cpu) << bind.to_string() << " tid " << t;
        EXPECT_EQ(s.socket, p.socket_of_thread[static_cast<std::size_t>(t)]);
        EXPECT_EQ(s.binding, std::vector<int>{cpu}) << bind.to_string() << " tid " << t;
        EXPECT_EQ(s.sched_cpu, cpu) << bind.to_string() << " tid " << t;
      }
    }
  }
}

TEST(Team, CallerBindingIsRestored) {
  const std::vector<int> before = host().current_thread_binding();
  ASSERT_EQ(before, host_cpus());
  {
    ct::Team team(host(), options(host().pus()));
    EXPECT_EQ(host().current_thread_binding(), std::vector<int>{team.placement().pu_of_thread[0]});
  }
  EXPECT_EQ(host().current_thread_binding(), before);
  { ct::Team team(host(), options(3 * host().pus(), true)); }
  EXPECT_EQ(host().current_thread_binding(), before);
}

// A process restricted to one CPU (taskset, an MPI launcher's binding) must not have its team
// pinned outside that CPU, nor get more threads than it has CPUs without oversubscription.
TEST(Team, StaysWithinTheProcessAffinity) {
  OneCpuAffinity one;
  if (!one.restricted()) GTEST_SKIP() << "needs at least two CPUs to restrict to one";
  const ct::Topology topo = ct::Topology::host();  // built while restricted
  {
    ct::Team team(topo, options(1));
    EXPECT_EQ(team.placement().pu_of_thread, std::vector<int>{one.cpu()})
        << "thread 0 placed outside the process's CPUs";
    EXPECT_EQ(team.binding()[0], std::vector<int>{one.cpu()});
  }
  EXPECT_THROW(ct::Team(topo, options(2)), std::invalid_argument)
      << "two threads pinned for a process allowed one CPU";
}

TEST(Team, SyntheticTopologyCannotPin) {
  const ct::Topology topo = ct::Topology::synthetic("pack:2 core:4 pu:2");
  try {
    ct::Team team(topo, options(2));
    ADD_FAILURE() << "a pinned team on a synthetic topology was built";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("pack:2 core:4 pu:2"), std::string::npos) << e.what();
  }
}

TEST(Team, SyntheticTopologyUnpinned) {
  const ct::Topology topo = ct::Topology::synthetic("pack:2 core:4 pu:2");
  for (auto bind : {ct::BindPolicy::compact, ct::BindPolicy::scatter}) {
    ct::TeamOptions o = options(8);
    o.pin = false;
    o.bind.policy = bind;
    o.barrier = ct::BarrierAlgorithm::tree;
    ct::Team team(topo, o);
    const ct::Placement expected = ct::place_threads(topo, 8, o.bind);
    EXPECT_EQ(team.placement().pu_of_thread, expected.pu_of_thread);
    EXPECT_EQ(team.placement().socket_of_thread, expected.socket_of_thread);
    EXPECT_FALSE(team.oversubscribed());  // 8 threads on 16 synthetic PUs
    for (const auto& b : team.binding()) EXPECT_TRUE(b.empty());
    for (int round = 0; round < 20; ++round) {
      const auto seen = observe(team, host());
      std::set<std::thread::id> ids;
      for (int t = 0; t < 8; ++t) {
        const Seen& s = seen[static_cast<std::size_t>(t)];
        EXPECT_EQ(s.calls, 1);
        EXPECT_EQ(s.cpu, expected.pu_of_thread[static_cast<std::size_t>(t)]);
        EXPECT_EQ(s.socket, expected.socket_of_thread[static_cast<std::size_t>(t)]);
        EXPECT_EQ(s.binding, host_cpus()) << "tid " << t << " is bound";
        ids.insert(s.id);
      }
      EXPECT_EQ(seen[0].id, std::this_thread::get_id());
      EXPECT_EQ(ids.size(), 8u);
    }
    int sum = 0;
    team.run([&](ct::ThreadCtx& ctx) {
      const int s = ctx.allreduce(ctx.socket() * 100 + ctx.thread(), compas::op::sum{});
      if (ctx.is_leader()) sum = s;
    });
    int expected_sum = 0;
    for (int t = 0; t < 8; ++t)
      expected_sum += expected.socket_of_thread[static_cast<std::size_t>(t)] * 100 + t;
    EXPECT_EQ(sum, expected_sum);
  }
  // Unpinned, the synthetic machine's PU count still bounds the team.
  ct::TeamOptions o = options(17);
  o.pin = false;
  EXPECT_THROW(ct::Team(topo, o), std::invalid_argument);
}

TEST(Team, BadThreadCountThrows) {
  EXPECT_THROW(ct::Team(host(), options(0)), std::invalid_argument);
  EXPECT_THROW(ct::Team(host(), options(-3)), std::invalid_argument);
}

TEST(Team, OversubscriptionNeedsPermission) {
  const int threads = 8;
  ASSERT_GT(threads, host().pus()) << "this test expects a host with fewer than 8 PUs";
  try {
    ct::Team team(host(), options(threads));
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("8"), std::string::npos) << e.what();
  }
}

TEST(Team, OversubscribedTeamWorks) {
  const int threads = 8;
  ct::Team team(host(), options(threads, true));
  EXPECT_TRUE(team.placement().oversubscribed);
  EXPECT_TRUE(team.oversubscribed());
  const ct::Backoff b = ct::resolve(ct::WaitPolicy::automatic, true);
  EXPECT_EQ(team.backoff().spins, b.spins);
  EXPECT_EQ(team.backoff().yields, b.yields);
  EXPECT_TRUE(team.backoff().sleep);
  for (int t = 0; t < threads; ++t)
    EXPECT_EQ(team.binding()[static_cast<std::size_t>(t)],
              std::vector<int>{team.placement().pu_of_thread[static_cast<std::size_t>(t)]});
  for (int round = 0; round < 20; ++round) {
    const auto seen = observe(team, host());
    std::set<std::thread::id> ids;
    for (int t = 0; t < threads; ++t) {
      EXPECT_EQ(seen[static_cast<std::size_t>(t)].calls, 1);
      EXPECT_EQ(seen[static_cast<std::size_t>(t)].binding,
                std::vector<int>{team.placement().pu_of_thread[static_cast<std::size_t>(t)]});
      ids.insert(seen[static_cast<std::size_t>(t)].id);
    }
    EXPECT_EQ(ids.size(), static_cast<std::size_t>(threads));
  }
  std::vector<long> got(threads, -1);
  team.run([&](ct::ThreadCtx& ctx) {
    long v = 0;
    for (int i = 0; i < 50; ++i) {
      ctx.barrier();
      v += ctx.allreduce(static_cast<long>(ctx.thread() + i), compas::op::sum{});
    }
    got[static_cast<std::size_t>(ctx.thread())] = v;
  });
  long expected = 0;
  for (int i = 0; i < 50; ++i)
    expected += static_cast<long>(threads) * (threads - 1) / 2 + threads * i;
  for (int t = 0; t < threads; ++t) EXPECT_EQ(got[static_cast<std::size_t>(t)], expected);
}

TEST(Team, JobOversubscribedBacksOff) {
  ct::TeamOptions o = options(1);
  o.job_oversubscribed = true;
  ct::Team team(host(), o);
  EXPECT_FALSE(team.placement().oversubscribed);
  EXPECT_TRUE(team.oversubscribed());
  EXPECT_EQ(team.backoff().spins, ct::resolve(ct::WaitPolicy::automatic, true).spins);
  ct::TeamOptions q = options(1);
  q.wait = ct::WaitPolicy::yield;
  ct::Team yielding(host(), q);
  EXPECT_EQ(yielding.wait_policy(), ct::WaitPolicy::yield);
  EXPECT_FALSE(yielding.backoff().sleep);
  EXPECT_FALSE(yielding.oversubscribed());
}

TEST(Team, WithinASliceOfTheHost) {
  const int k = host().cores();
  for (int i = 0; i < k; ++i) {
    ct::TeamOptions o = options(1);
    o.within = ct::process_slice(host(), i, k);
    ct::Team team(host(), o);
    const int expected =
        host().pu_list()[static_cast<std::size_t>(o.within.pu_indices.front())].os_index;
    EXPECT_EQ(team.placement().pu_of_thread, std::vector<int>{expected});
    EXPECT_EQ(team.binding()[0], std::vector<int>{expected});
    int cpu = -1;
    team.run([&](ct::ThreadCtx& ctx) { cpu = ctx.cpu(); });
    EXPECT_EQ(cpu, expected);
    ct::TeamOptions too_many = o;
    too_many.threads = static_cast<int>(o.within.pu_indices.size()) + 1;
    EXPECT_THROW(ct::Team(host(), too_many), std::invalid_argument);
  }
}

TEST(Team, ProcessIdentity) {
  ct::TeamOptions o = options(std::min(2, host().pus()));
  o.process = 3;
  o.processes = 5;
  ct::Team team(host(), o);
  const int n = team.threads();
  std::vector<int> gid(static_cast<std::size_t>(n)), gthreads(static_cast<std::size_t>(n));
  std::vector<int> process(static_cast<std::size_t>(n)), processes(static_cast<std::size_t>(n));
  team.run([&](ct::ThreadCtx& ctx) {
    const auto t = static_cast<std::size_t>(ctx.thread());
    gid[t] = ctx.global_id();
    gthreads[t] = ctx.global_threads();
    process[t] = ctx.process();
    processes[t] = ctx.processes();
  });
  for (int t = 0; t < n; ++t) {
    EXPECT_EQ(gid[static_cast<std::size_t>(t)], 3 * n + t);
    EXPECT_EQ(gthreads[static_cast<std::size_t>(t)], 5 * n);
    EXPECT_EQ(process[static_cast<std::size_t>(t)], 3);
    EXPECT_EQ(processes[static_cast<std::size_t>(t)], 5);
  }
}

// ---- exceptions --------------------------------------------------------------------------------

TEST(Team, ExceptionOnOneThreadIsRethrown) {
  for (int threads : {2, 4}) {
    ct::Team team(host(), options(threads, threads > host().pus()));
    for (int thrower = 0; thrower < threads; ++thrower) {
      std::atomic<int> finished{0};
      try {
        team.run([&](ct::ThreadCtx& ctx) {
          ctx.barrier();
          (void)ctx.allreduce(ctx.thread(), compas::op::sum{});
          ctx.barrier();
          if (ctx.thread() == thrower)
            throw std::out_of_range("boom from " + std::to_string(thrower));
          finished.fetch_add(1);
        });
        ADD_FAILURE() << "run() did not rethrow the exception of tid " << thrower;
      } catch (const std::out_of_range& e) {
        EXPECT_EQ(std::string(e.what()), "boom from " + std::to_string(thrower));
      }
      // The other threads finished their bodies before run() returned.
      EXPECT_EQ(finished.load(), threads - 1);
      // The team is still usable, and the error does not stick to the next run.
      std::atomic<int> calls{0};
      EXPECT_NO_THROW(team.run([&](ct::ThreadCtx& ctx) {
        ctx.barrier();
        calls.fetch_add(1);
      }));
      EXPECT_EQ(calls.load(), threads);
    }
  }
}

// A thread that fails while the others wait in (or are heading for) team barriers: they leave
// with TeamCancelled instead of waiting for ever, run() rethrows the original error, and the
// team's next run has a working barrier again. Every algorithm and wait policy.
TEST(Team, ExceptionOnOneThreadReleasesTheOthersFromTheirBarriers) {
  for (auto algorithm : {ct::BarrierAlgorithm::central, ct::BarrierAlgorithm::dissemination,
                         ct::BarrierAlgorithm::tree})
    for (auto wait : {ct::WaitPolicy::spin, ct::WaitPolicy::block, ct::WaitPolicy::automatic})
      for (int threads : {2, 3, 4}) {
        // A pure spin wait with more threads than PUs only measures the scheduler (each barrier
        // waits for time slices: about a minute for this loop on 2 PUs beside other work); the
        // oversubscribed shapes run with the waits that back off.
        if (wait == ct::WaitPolicy::spin && threads > host().pus()) continue;
        SCOPED_TRACE(ct::to_string(algorithm) + "/" + ct::to_string(wait) + "/" +
                     std::to_string(threads));
        auto o = options(threads, threads > host().pus());
        o.barrier = algorithm;
        o.wait = wait;
        ct::Team team(host(), o);
        for (int thrower : {0, threads - 1}) {
          std::atomic<int> cancelled{0}, completed{0};
          try {
            team.run([&](ct::ThreadCtx& ctx) {
              try {
                // 60 steps, the failure at the 31st: the others are in, or heading for, a
                // barrier or a collective of each algorithm (200 steps took a minute beside other
                // tests on 2 PUs, a barrier waiting for time slices).
                for (int i = 0; i < 60; ++i) {
                  if (ctx.thread() == thrower && i == 30) throw std::logic_error("thread failed");
                  if (i % 3 == 0)
                    (void)ctx.allreduce(i, compas::op::sum{});
                  else
                    ctx.barrier();
                }
                completed.fetch_add(1);
              } catch (const ct::TeamCancelled&) {
                cancelled.fetch_add(1);
                throw;
              }
            });
            ADD_FAILURE() << "run() returned normally";
          } catch (const std::logic_error& e) {
            EXPECT_STREQ(e.what(), "thread failed");
          } catch (const std::exception& e) {
            ADD_FAILURE() << "run() rethrew '" << e.what() << "', not the first failure";
          }
          EXPECT_EQ(completed.load(), 0) << "a thread passed a barrier the thrower never reached";
          EXPECT_EQ(cancelled.load(), threads - 1);
          // The next run: barriers and collectives work again.
          std::atomic<int> wrong{0};
          team.run([&](ct::ThreadCtx& ctx) {
            for (int i = 0; i < 50; ++i)
              if (ctx.allreduce(ctx.thread() + i, compas::op::sum{}) !=
                  threads * (threads - 1) / 2 + threads * i)
                wrong.fetch_add(1);
          });
          EXPECT_EQ(wrong.load(), 0);
        }
      }
}

TEST(Team, ExceptionOnEveryThreadRethrowsOne) {
  const int threads = 4;
  ct::Team team(host(), options(threads, threads > host().pus()));
  for (int round = 0; round < 10; ++round) {
    try {
      team.run([&](ct::ThreadCtx& ctx) {
        ctx.barrier();
        throw std::runtime_error("tid " + std::to_string(ctx.thread()));
      });
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("tid ", 0), 0u) << what;
      const int tid = std::stoi(what.substr(4));
      EXPECT_GE(tid, 0);
      EXPECT_LT(tid, threads);
    }
  }
}

// ---- many runs ---------------------------------------------------------------------------------

TEST(Team, ManyRunsInARow) {
  for (int threads : {1, host().pus(), 5}) {
    ct::Team team(host(), options(threads, threads > host().pus()));
    std::vector<int> calls(static_cast<std::size_t>(threads), 0);
    std::vector<int> stale(static_cast<std::size_t>(threads), 0);
    int bad = 0;
    constexpr int kRuns = 200;
    for (int run = 0; run < kRuns; ++run) {
      std::vector<int> mark(static_cast<std::size_t>(threads), 0);
      team.run([&](ct::ThreadCtx& ctx) {
        const auto t = static_cast<std::size_t>(ctx.thread());
        ++calls[t];
        mark[t] = run + 1;
        ctx.barrier();
        // Every thread's mark of this run is visible after the barrier.
        for (int j = 0; j < ctx.threads(); ++j)
          if (mark[static_cast<std::size_t>(j)] != run + 1) ++stale[t];
      });
      // Everything written by the workers is visible to the caller after run().
      for (int t = 0; t < threads; ++t)
        if (mark[static_cast<std::size_t>(t)] != run + 1) ++bad;
    }
    EXPECT_EQ(bad, 0) << threads << " threads";
    for (int t = 0; t < threads; ++t) {
      EXPECT_EQ(calls[static_cast<std::size_t>(t)], kRuns) << "tid " << t;
      EXPECT_EQ(stale[static_cast<std::size_t>(t)], 0) << "tid " << t << " saw a stale mark";
    }
  }
}

TEST(Team, ManyEmptyRunsInARow) {
  // No barrier in the body: only run()'s own start and join synchronise the threads.
  for (int threads : {host().pus(), 5}) {
    ct::Team team(host(), options(threads, threads > host().pus()));
    std::vector<int> calls(static_cast<std::size_t>(threads), 0);
    constexpr int kRuns = 300;
    for (int run = 0; run < kRuns; ++run)
      team.run([&](ct::ThreadCtx& ctx) { ++calls[static_cast<std::size_t>(ctx.thread())]; });
    for (int t = 0; t < threads; ++t)
      EXPECT_EQ(calls[static_cast<std::size_t>(t)], kRuns) << threads << " threads, tid " << t;
  }
}

namespace {

// Scheduler state of one thread of this process ('R' running, 'S' sleeping, ...), or '?'.
char task_state(pid_t tid) {
  std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? '?' : stat[paren + 2];
}

}  // namespace

// team.hpp: "Threads stay alive between runs and sleep when idle", whatever the wait policy.
TEST(Team, IdleWorkersSleep) {
  for (auto policy : {ct::WaitPolicy::spin, ct::WaitPolicy::automatic}) {
    const int threads = host().pus();
    if (threads < 2) GTEST_SKIP() << "needs a worker thread";
    ct::TeamOptions o = options(threads);
    o.wait = policy;
    ct::Team team(host(), o);
    std::vector<pid_t> tids(static_cast<std::size_t>(threads));
    team.run([&](ct::ThreadCtx& ctx) { tids[static_cast<std::size_t>(ctx.thread())] = gettid(); });
    // Hang guard only: with correct idling this takes milliseconds.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    bool all_asleep = false;
    while (!all_asleep && std::chrono::steady_clock::now() < deadline) {
      all_asleep = true;
      for (int t = 1; t < threads; ++t)
        all_asleep = all_asleep && task_state(tids[static_cast<std::size_t>(t)]) == 'S';
      if (!all_asleep) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(all_asleep) << "idle workers of a " << ct::to_string(policy)
                            << " team never went to sleep";
    // And they wake up for the next run.
    std::atomic<int> calls{0};
    team.run([&](ct::ThreadCtx&) { calls.fetch_add(1); });
    EXPECT_EQ(calls.load(), threads);
  }
}

TEST(Team, ManyTeamsInARow) {
  // Building and tearing down teams repeatedly must neither leak threads nor hang.
  for (int i = 0; i < 30; ++i) {
    const int threads = 1 + i % 4;
    ct::TeamOptions o = options(threads, threads > host().pus());
    o.barrier = static_cast<ct::BarrierAlgorithm>(i % 3);
    ct::Team team(host(), o);
    std::atomic<int> calls{0};
    if (i % 2 == 0) team.run([&](ct::ThreadCtx&) { calls.fetch_add(1); });
    EXPECT_EQ(calls.load(), i % 2 == 0 ? threads : 0);
  }
}

// A barrier that some threads skip: the threads that wait end the process once the team's wait
// limit has passed, naming the thread that did not arrive, instead of hanging for ever: from
// COMPAS_TIMEOUT (+ 2 s), and from the options with every algorithm and wait policy. (alarm: a
// child that still hangs dies of SIGALRM, which fails the expectation.)
TEST(TeamDeathTest, ABarrierSomeThreadsSkipEndsTheProcessAfterCompasTimeout) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(30);
        setenv("COMPAS_TIMEOUT", "0.5", 1);
        ct::Team team(host(), options(3, true));
        team.run([](ct::ThreadCtx& t) {
          if (t.thread() != 0) t.barrier();
        });
      },
      ::testing::ExitedWithCode(1),
      "team barrier: thread 0 did not arrive within 2.5 s \\(COMPAS_TIMEOUT 0.5 s \\+ 2 s\\)");
}

TEST(TeamDeathTest, EveryAlgorithmAndPolicyNamesTheAbsentThreads) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (auto algorithm : {ct::BarrierAlgorithm::central, ct::BarrierAlgorithm::dissemination,
                         ct::BarrierAlgorithm::tree})
    for (auto wait : {ct::WaitPolicy::spin, ct::WaitPolicy::yield, ct::WaitPolicy::block,
                      ct::WaitPolicy::automatic}) {
      SCOPED_TRACE(ct::to_string(algorithm) + ", " + ct::to_string(wait));
      EXPECT_EXIT(
          {
            alarm(30);
            ct::TeamOptions o = options(4, true);
            o.barrier = algorithm;
            o.wait = wait;
            o.timeout_s = 0.2;
            ct::Team team(host(), o);
            team.run([](ct::ThreadCtx& t) {
              t.barrier();
              if (t.thread() % 2 == 0) t.barrier();
            });
          },
          ::testing::ExitedWithCode(1), "threads 1, 3 did not arrive within 0.2 s");
    }
}
