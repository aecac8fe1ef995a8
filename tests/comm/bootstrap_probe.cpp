// bootstrap_probe: a test program run as every rank of a job (through compas-run, mpirun, or
// started by hand by a test driver). It forms the job with Bootstrap::from_environment(), checks
// rank and size against the environment, allgathers rank-specific strings of different lengths
// and checks every entry, runs 50 barriers and a second allgather, and prints
//   ok rank R of P (KIND)
//   affinity rank R: CPUS            (sched_getaffinity, as a cpu list)
//   env rank R: COMPAS_...=...       (what the launcher set)
// plus "stderr rank R" on stderr. Modes (arguments, in any order; unknown words are ignored,
// so a unique marker argument can tag the processes):
//   die-at-barrier R      rank R kills itself with SIGKILL at the 5th barrier
//   leak-shm-at-barrier R as die-at-barrier, but rank R first makes shared memory the way UCX
//                         does and dies before removing it: an attached IPC_PRIVATE SysV segment
//                         not marked for removal, and a file ucx_shm_posix_<pid> in
//                         $UCX_POSIX_DIR (or /dev/shm) not unlinked
//   sleep-forever R|all   rank R (or every rank) sleeps at the 1st barrier; the others wait in it
//   exit-code R CODE      after the checks rank R exits with CODE; the others sleep
//   ignore-term           SIGTERM is ignored (to test the launcher's SIGKILL after the grace)
//   partial               the last stdout line has no newline
//   echo-args ARGS...     print "arg: X" for each following argument, and nothing else
//   comm-die-at-barrier R after the checks, the job makes a Comm and runs 2000 Comm barriers;
//                         rank R kills itself with SIGKILL at the 100th. The others must end
//                         with "bootstrap_probe: rank X: comm: MESSAGE" on stderr, exit 1.
//   comm-throw-at-barrier R  as comm-die-at-barrier, but rank R throws an exception out of the
//                         Comm's scope at the 100th barrier (its Comm is destroyed while the
//                         others wait for it) and exits 1 with "bootstrap_probe: failed: ...".
// Exit codes: 0 ok, 1 bootstrap failure (message on stderr), 2 bad environment, 3 wrong result.
#include <fcntl.h>
#include <sched.h>
#include <sys/shm.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/comm/bootstrap.hpp"
#include "compas/comm/ucx.hpp"

namespace {

int parse_rank_arg(const char* s) {
  return std::strcmp(s, "all") == 0 ? -2 : std::atoi(s);
}

std::string affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "?";
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set)) ++e;
    if (!out.empty()) out += ',';
    out += std::to_string(c);
    if (e > c) out += "-" + std::to_string(e);
    c = e;
  }
  return out;
}

std::string env_or(const char* name, const char* fallback = "-") {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

// Rank r's allgather string: different lengths, one of them large enough to need many reads.
std::string blob_of(int r, int round) {
  const std::size_t len = r == 1 ? 300000 : static_cast<std::size_t>(r * 37 % 101);
  return "rank-" + std::to_string(r) + "-round-" + std::to_string(round) + ":" +
         std::string(len, static_cast<char>('a' + r % 26));
}

// What a rank killed in the middle of UCX's shared-memory set-up leaves (see the mode above).
[[noreturn]] void leak_shm_and_die(int rank) {
  const int shmid = ::shmget(IPC_PRIVATE, 12288, IPC_CREAT | 0600);
  const bool attached = shmid >= 0 && ::shmat(shmid, nullptr, 0) != reinterpret_cast<void*>(-1);
  const char* dir = std::getenv("UCX_POSIX_DIR");
  const std::string path =
      std::string(dir && *dir ? dir : "/dev/shm") + "/ucx_shm_posix_" + std::to_string(::getpid());
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  const bool filled = fd >= 0 && ::ftruncate(fd, 8192) == 0;
  std::printf("rank %d made shared memory: segment %s, file %s\n", rank, attached ? "yes" : "no",
              filled ? "yes" : "no");
  std::fflush(stdout);
  std::raise(SIGKILL);
  for (;;) ::pause();
}

[[noreturn]] void sleep_forever(int rank) {
  std::printf("sleeping rank %d\n", rank);
  std::fflush(stdout);
  for (;;) ::pause();
}

}  // namespace

int main(int argc, char** argv) {
  int die_rank = -1, sleep_rank = -1, exit_rank = -1, exit_code = 0, comm_die_rank = -1;
  int leak_rank = -1;
  bool comm_throw = false;
  bool partial = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "echo-args") {
      for (int k = i + 1; k < argc; ++k) std::printf("arg: %s\n", argv[k]);
      return 0;
    }
    if (a == "die-at-barrier" && i + 1 < argc) die_rank = parse_rank_arg(argv[++i]);
    if (a == "leak-shm-at-barrier" && i + 1 < argc) leak_rank = parse_rank_arg(argv[++i]);
    if (a == "sleep-forever" && i + 1 < argc) sleep_rank = parse_rank_arg(argv[++i]);
    if (a == "exit-code" && i + 2 < argc) {
      exit_rank = parse_rank_arg(argv[++i]);
      exit_code = std::atoi(argv[++i]);
    }
    if (a == "comm-die-at-barrier" && i + 1 < argc) comm_die_rank = parse_rank_arg(argv[++i]);
    if (a == "comm-throw-at-barrier" && i + 1 < argc) {
      comm_die_rank = parse_rank_arg(argv[++i]);
      comm_throw = true;
    }
    if (a == "ignore-term") std::signal(SIGTERM, SIG_IGN);
    if (a == "partial") partial = true;
  }

  try {
    auto bs = compas::comm::Bootstrap::from_environment();
    const int R = bs->rank(), P = bs->size();
    int errors = 0;
    auto expect = [&](bool ok, const std::string& what) {
      if (!ok) {
        std::fprintf(stderr, "bootstrap_probe: rank %d: wrong result: %s\n", R, what.c_str());
        ++errors;
      }
    };
    if (const char* s = std::getenv("COMPAS_SIZE"))
      expect(P == std::atoi(s), "size vs COMPAS_SIZE");
    if (const char* r = std::getenv("COMPAS_RANK"))
      expect(R == std::atoi(r), "rank vs COMPAS_RANK");

    auto check_gather = [&](int round) {
      const auto all = bs->allgather(blob_of(R, round));
      expect(static_cast<int>(all.size()) == P, "allgather returned " + std::to_string(all.size()));
      for (int r = 0; r < P && r < static_cast<int>(all.size()); ++r)
        expect(all[static_cast<std::size_t>(r)] == blob_of(r, round),
               "allgather entry " + std::to_string(r) + " of round " + std::to_string(round));
    };
    check_gather(1);
    for (int b = 1; b <= 50; ++b) {
      if (b == 1 && (sleep_rank == R || sleep_rank == -2)) sleep_forever(R);
      if (b == 5 && die_rank == R) std::raise(SIGKILL);
      if (b == 5 && leak_rank == R) leak_shm_and_die(R);
      bs->barrier();
    }
    check_gather(2);
    if (errors) return 3;
    if (comm_die_rank >= 0) {
      std::printf("pid rank %d: %d\n", R, static_cast<int>(::getpid()));
      std::fflush(stdout);
      compas::comm::Comm comm(*bs);
      try {
        for (int b = 1; b <= 2000; ++b) {
          if (b == 100 && comm_die_rank == R) {
            if (comm_throw) throw std::runtime_error("rank " + std::to_string(R) + " gives up");
            std::raise(SIGKILL);
          }
          comm.barrier();
        }
      } catch (const compas::comm::CommError& e) {
        // The Comm's destructor runs on the way out: having seen a peer die (or a wait time
        // out), it must not wait for the others, which may be stuck on the dead rank.
        std::fprintf(stderr, "bootstrap_probe: rank %d: comm: %s\n", R, e.what());
        std::fflush(stderr);
        return 1;
      }
    }

    std::printf("ok rank %d of %d (%s)\n", R, P, bs->kind().c_str());
    std::printf("affinity rank %d: %s\n", R, affinity().c_str());
    std::printf(
        "env rank %d: COMPAS_CPUS=%s COMPAS_THREADS=%s COMPAS_OVERSUBSCRIBED=%s "
        "COMPAS_LOCAL_RANK=%s COMPAS_LOCAL_SIZE=%s COMPAS_BIND=%s\n",
        R, env_or("COMPAS_CPUS").c_str(), env_or("COMPAS_THREADS").c_str(),
        env_or("COMPAS_OVERSUBSCRIBED").c_str(), env_or("COMPAS_LOCAL_RANK").c_str(),
        env_or("COMPAS_LOCAL_SIZE").c_str(), env_or("COMPAS_BIND").c_str());
    std::fprintf(stderr, "stderr rank %d\n", R);
    if (partial) std::printf("partial rank %d", R);
    std::fflush(stdout);
    if (exit_rank >= 0) {
      if (exit_rank == R) std::_Exit(exit_code);
      bs.reset();
      sleep_forever(R);
    }
    return 0;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "bootstrap_probe: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bootstrap_probe: failed: %s\n", e.what());
    return 1;
  }
}
