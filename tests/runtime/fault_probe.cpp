// fault_probe PHASE VICTIM: every rank of a job runs this program; rank VICTIM SIGKILLs itself in
// the middle of PHASE, and the others must end (exit 1) with a line naming a rank they gave up on:
//   "fault_probe: rank R: <message>" on stderr.
// Phases:
//   bootstrap        the victim dies before it connects to the job
//   thread-barrier   a loop of team barriers (the victim's thread 1 dies in one), then hybrid
//                    barriers
//   process-barrier  a loop of Comm barriers
//   put-stream       a stream of 64 KiB puts to the next rank, flushed, with a barrier now and then
//   allreduce        a loop of hybrid allreduces over all threads of all processes
//   op-throws        nobody dies: the operator of a loop of hybrid allreduces throws on the victim
//                    (its 301st call), which ends with that message (exit 1); the others must
//                    end naming it
//   barrier-skipped  nobody dies: in a loop of team barriers the victim's last thread stops
//                    calling them (from the 501st on); the victim's other threads must end the
//                    process after COMPAS_TIMEOUT naming that thread, and the others name the
//                    victim
//   kernel           NAS CG class W on the job; the victim dies 150 ms into it
//   window-freed     nobody dies: the victim destroys a window while the others keep putting,
//                    getting and adding into its copy; the victim's destruction gives up after
//                    COMPAS_TIMEOUT and the others' next operation must fail at the initiator
//   host-barrier-skipped  nobody dies: in a loop of Comm barriers the victim stops calling them
//                    (from the 501st on) and sleeps (FAULT_PROBE_SLEEP s, 60 when unset; then it
//                    calls them again); the others must end after
//                    COMPAS_TIMEOUT naming it. Prints the barrier's algorithm first
//                    ("fault_probe: rank R: barrier host") on stdout.
//   user-op-differs  nobody dies: an allreduce with a caller's operator where the victim passes
//   user-scan-differs  100000 int32_t and the others 100000 double (payloads of different numbers
//                    of chunks), or the same with exclusive_scan; every rank prints what it
//                    caught, meets the others in a Comm barrier (each has spoken before any
//                    exits) and exits 1
// Threads per process from COMPAS_THREADS (2 by default). A survivor that finishes its phase
// enters a final hybrid barrier, which the victim never reaches. Exit codes: 0 never (someone
// died), 1 failed as expected, 2 bad arguments, 3 the phase ended normally on a survivor.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "compas/compas.hpp"
#include "compas/kernels/cg_job.hpp"

namespace {

[[noreturn]] void die() {
  std::raise(SIGKILL);
  std::abort();
}

struct plus {
  template <class T>
  T operator()(const T& a, const T& b) const {
    return a + b;
  }
};

// The user-op-differs and user-scan-differs phases (see above).
int user_op_differs(compas::Runtime& rt, bool me, bool scan) {
  constexpr std::size_t kCount = 100000;
  auto call = [&](auto zero) {
    std::vector<decltype(zero)> v(kCount, zero + 1);
    using T = decltype(zero);
    if (scan)
      rt.collectives().exclusive_scan(std::span<const T>(v), std::span<T>(v), plus{});
    else
      rt.collectives().allreduce(std::span<T>(v), plus{});
  };
  try {
    if (me)
      call(std::int32_t{0});
    else
      call(0.0);
    std::fprintf(stderr, "fault_probe: rank %d: the call returned normally\n", rt.process());
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "fault_probe: rank %d: %s\n", rt.process(), e.what());
  }
  std::fflush(stderr);
  rt.comm().barrier();
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fault_probe PHASE VICTIM\n");
    return 2;
  }
  const std::string phase = argv[1];
  const int victim = std::atoi(argv[2]);
  const char* rank_env = std::getenv("COMPAS_RANK");
  const int my_rank = rank_env ? std::atoi(rank_env) : 0;
  try {
    if (phase == "bootstrap" && my_rank == victim) die();
    auto options = compas::RuntimeOptions::from_environment();
    if (options.threads == 0) options.threads = 2;
    options.oversubscribe = true;
    compas::Runtime rt(options);
    const int R = rt.process(), P = rt.processes();
    std::printf("fault_probe: rank %d of %d started %s\n", R, P, phase.c_str());
    std::fflush(stdout);
    const bool me = R == victim;

    if (phase == "thread-barrier") {
      rt.run([&](compas::ThreadCtx& t) {
        for (int i = 0; i < 20000; ++i) {
          if (me && i == 2000 && t.thread() == t.threads() - 1) die();
          t.barrier();
          if (i % 1000 == 0) rt.barrier(t);
        }
      });
    } else if (phase == "process-barrier") {
      for (int i = 0; i < 20000; ++i) {
        if (me && i == 500) die();
        rt.comm().barrier();
      }
    } else if (phase == "put-stream") {
      constexpr std::size_t kChunk = 64 * 1024 / sizeof(double);
      auto win = rt.window<double>(4 * kChunk, 4);
      std::vector<double> src(kChunk, 1.0 + R);
      const int to = (R + 1) % P;
      for (int i = 0; i < 20000; ++i) {
        if (me && i == 500) die();
        win.put(to, (static_cast<std::size_t>(i) % 4) * kChunk, std::span<const double>(src));
        if (i % 8 == 7) rt.comm().flush(to);
        if (i % 256 == 255) rt.comm().barrier();
      }
    } else if (phase == "allreduce") {
      rt.run([&](compas::ThreadCtx& t) {
        for (int i = 0; i < 20000; ++i) {
          if (me && i == 300 && t.thread() == 0) die();
          const double s = rt.allreduce(t, 1.0, compas::op::sum{});
          if (s != t.global_threads()) throw std::logic_error("allreduce gave a wrong sum");
        }
      });
    } else if (phase == "op-throws") {
      std::atomic<bool> armed{false};
      const auto op = [&armed](double a, double b) {
        if (armed.load(std::memory_order_relaxed)) throw std::runtime_error("the op threw");
        return a + b;
      };
      rt.run([&](compas::ThreadCtx& t) {
        for (int i = 0; i < 20000; ++i) {
          if (me && i == 300 && t.thread() == 0) armed = true;
          const double s = rt.allreduce(t, 1.0, op);
          if (s != t.global_threads()) throw std::logic_error("allreduce gave a wrong sum");
        }
      });
    } else if (phase == "barrier-skipped") {
      rt.run([&](compas::ThreadCtx& t) {
        for (int i = 0; i < 1000; ++i) {
          if (me && i >= 500 && t.thread() == t.threads() - 1) break;
          t.barrier();
        }
      });
    } else if (phase == "kernel") {
      std::thread killer;
      if (me)
        killer = std::thread([] {
          std::this_thread::sleep_for(std::chrono::milliseconds(150));
          die();
        });
      compas::kernels::cg::JobParams p;
      p.cls = 'W';
      for (int i = 0; i < 50; ++i) compas::kernels::cg::run(rt, p);
      if (killer.joinable()) killer.join();
    } else if (phase == "window-freed") {
      if (me) {
        {
          auto win = rt.window<std::uint64_t>(2048, 4);
          rt.comm().barrier();
        }  // destroyed here, alone: the others are still using it
        std::fprintf(stderr, "fault_probe: rank %d: destroyed its window alone\n", R);
      } else {
        auto win = rt.window<std::uint64_t>(2048, 4);
        rt.comm().barrier();
        std::vector<std::uint64_t> src(512, 7), dst(512);
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        for (std::uint64_t i = 0; std::chrono::steady_clock::now() < until; ++i) {
          win.put(victim, (i % 4) * 512, std::span<const std::uint64_t>(src));
          win.get(victim, 0, std::span<std::uint64_t>(dst));
          win.fetch_add(victim, 2047, 1);
          if (i % 64 == 63) rt.comm().flush(victim);
        }
      }
    } else if (phase == "host-barrier-skipped") {
      std::printf("fault_probe: rank %d: barrier %s\n", R, rt.comm().barrier_algorithm().c_str());
      std::fflush(stdout);
      for (int i = 0; i < 1000; ++i) {
        if (me && i == 500) {
          const char* s = std::getenv("FAULT_PROBE_SLEEP");  // seconds, 60 when unset
          std::this_thread::sleep_for(std::chrono::seconds(s ? std::atoi(s) : 60));
          break;
        }
        rt.comm().barrier();
      }
    } else if (phase == "user-op-differs" || phase == "user-scan-differs") {
      return user_op_differs(rt, me, phase == "user-scan-differs");
    } else if (phase != "bootstrap") {
      std::fprintf(stderr, "fault_probe: unknown phase '%s'\n", phase.c_str());
      return 2;
    }
    // The victim is dead: this barrier cannot complete.
    rt.run([&](compas::ThreadCtx& t) { rt.barrier(t); });
    std::fprintf(stderr, "fault_probe: rank %d: %s ended normally\n", R, phase.c_str());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fault_probe: rank %d: %s\n", my_rank, e.what());
    std::fflush(stderr);
    return 1;
  }
}
