// Window and RMA tests across real processes. CTest starts this program through compas-run with
// P = 1..4 (see CMakeLists.txt); every rank runs every test, in the same order, so each test is
// collective (signals and atomics: test_rma_signals.cpp, in the same program). Each checks the data
// every rank holds against a serial reference computed locally. COMPAS_DIRECT=0 variants force the
// UCX RMA path instead of load/store between same-host peers.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "compas/comm/comm.hpp"
#include "rma_job.hpp"

namespace {

std::unique_ptr<compas::comm::Bootstrap> g_boot;
std::unique_ptr<compas::comm::Comm> g_comm;

}  // namespace

namespace rma_job {

compas::comm::Comm& comm() {
  return *g_comm;
}
int rank() {
  return g_comm->rank();
}
int nranks() {
  return g_comm->size();
}

}  // namespace rma_job

namespace {

using namespace compas::comm;
using namespace rma_job;

// The byte rank r writes at position i of its message to rank t.
std::uint8_t pattern(int r, int t, std::size_t i) {
  return static_cast<std::uint8_t>((r * 131 + t * 31 + i * 7 + (i >> 8)) & 0xff);
}

TEST(Window, LocalViewStartsZeroedAndSized) {
  Window<double> w(comm(), 1000);
  EXPECT_EQ(w.size(), 1000u);
  ASSERT_EQ(w.local().size(), 1000u);
  for (double v : w.local()) ASSERT_EQ(v, 0.0);
  for (std::size_t s = 0; s < 64; ++s) ASSERT_EQ(w.signal(s), 0u);
  EXPECT_TRUE(w.direct(rank()));
}

bool alone_on_host() {
  return comm().hosts()[static_cast<std::size_t>(comm().host_of(rank()))].size() == 1;
}

// Resident memory of this process in KiB (anonymous and shared pages), from /proc/self/status.
long resident_kib() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmRSS:", 6) == 0) kib = std::strtol(line + 6, nullptr, 10);
  std::fclose(f);
  return kib;
}

// Fill::none leaves the data's pages untouched, so the threads that first write them place them
// (first touch); Fill::zero touches them all from the creating thread. Signals start at zero
// either way.
TEST(Window, UnfilledDataIsFirstTouchedByItsWriter) {
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  constexpr long kKib = static_cast<long>(kBytes >> 10);
  {
    const long before = resident_kib();
    WindowBytes w(comm(), kBytes, 8, Fill::none);
    const long created = resident_kib();
    for (std::size_t s = 0; s < 8; ++s) EXPECT_EQ(w.signal(s), 0u);
    EXPECT_LT(created - before, kKib / 8) << "creating touched the data";
    std::memset(w.local(), 1, kBytes);
    EXPECT_GT(resident_kib() - created, kKib * 7 / 8) << "writing it did not make it resident";
    comm().barrier();
  }
  {
    const long before = resident_kib();
    WindowBytes w(comm(), kBytes, 8, Fill::zero);
    EXPECT_GT(resident_kib() - before, kKib * 7 / 8) << "a zeroed window's pages are all touched";
    EXPECT_EQ(static_cast<int>(w.local()[kBytes / 2]), 0);
    EXPECT_EQ(static_cast<int>(w.local()[kBytes - 1]), 0);
    comm().barrier();
  }
}

// The /proc/self/smaps record of the mapping holding `at`: its maps line (range, permissions,
// path) and its "VmFlags:" line.
struct MappingRecord {
  std::string line, flags;
};

MappingRecord mapping_of(const void* at) {
  const auto a = reinterpret_cast<std::uintptr_t>(at);
  std::ifstream smaps("/proc/self/smaps");
  MappingRecord found;
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = a >= lo && a < hi;
      if (inside) found.line = line;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      found.flags = line;
    }
  }
  return found;
}

// A process alone on its host maps its window privately (anonymous, "p" in the permissions) and,
// 2 MiB and more under COMPAS_HUGE_PAGES=1, on a 2 MiB boundary with huge pages asked for ("hg"
// among the VmFlags; else not asked for);
// a process whose same-host peers reach its window by load/store maps a shared segment ("s").
// Nothing else tells them apart.
TEST(Window, PrivateMemoryWhenAloneOnItsHost) {
  constexpr std::size_t kBytes = std::size_t{8} << 20;
  WindowBytes w(comm(), kBytes, 8, Fill::none);
  const MappingRecord m = mapping_of(w.local());
  ASSERT_FALSE(m.line.empty()) << "no mapping holds the window";
  std::istringstream fields(m.line);
  std::string range, perms;
  fields >> range >> perms;
  ASSERT_EQ(perms.size(), 4u) << m.line;
  if (alone_on_host()) {
    EXPECT_EQ(perms[3], 'p') << "alone on its host, the window is shared: " << m.line;
    const bool asked = comm().options().huge_pages;  // COMPAS_HUGE_PAGES=1
    EXPECT_EQ((m.flags + " ").find(" hg ") != std::string::npos, asked)
        << "huge pages " << (asked ? "not " : "") << "asked for: " << m.flags;
    if (asked) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w.local()) % (std::uintptr_t{2} << 20), 0u);
    }
  } else {
    bool reached_directly = false;  // by some same-host peer's load/store (not over tcp alone)
    for (int r = 0; r < nranks(); ++r) reached_directly |= r != rank() && w.direct(r);
    if (reached_directly) {
      EXPECT_EQ(perms[3], 's') << "peers load and store in a private window: " << m.line;
    }
  }
  comm().barrier();
}

// Every rank puts a block of `n` bytes at an unaligned offset into every rank (itself too), then
// after a barrier each checks every block it received.
void put_everywhere(std::size_t n, std::size_t skew) {
  const int p = nranks();
  const std::size_t stride = n + skew;
  WindowBytes w(comm(), stride * static_cast<std::size_t>(p) + 1);
  std::vector<std::vector<std::uint8_t>> out(p);
  for (int t = 0; t < p; ++t) {
    out[t].resize(n);
    for (std::size_t i = 0; i < n; ++i) out[t][i] = pattern(rank(), t, i);
  }
  for (int k = 0; k < p; ++k) {
    const int t = (rank() + k) % p;
    w.put(t, static_cast<std::size_t>(rank()) * stride + skew, out[t].data(), n);
  }
  comm().barrier();
  for (int r = 0; r < p; ++r) {
    const std::byte* got = w.local() + static_cast<std::size_t>(r) * stride + skew;
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(static_cast<std::uint8_t>(got[i]), pattern(r, rank(), i))
          << "byte " << i << " of " << n << " from rank " << r;
  }
  comm().barrier();
}

TEST(Rma, PutManySizesAndOffsets) {
  for (std::size_t n : {0ul, 1ul, 7ul, 8ul, 63ul, 4096ul, 65537ul, 1ul << 20})
    for (std::size_t skew : {0ul, 3ul}) put_everywhere(n, skew);
}

TEST(Rma, GetManySizesAndOffsets) {
  const int p = nranks();
  for (std::size_t n : {0ul, 1ul, 13ul, 4096ul, 100003ul, 1ul << 20}) {
    const std::size_t skew = n % 5;
    WindowBytes w(comm(), n + skew);
    for (std::size_t i = 0; i < n; ++i)
      w.local()[skew + i] = static_cast<std::byte>(pattern(rank(), 0, i));
    comm().barrier();
    std::vector<std::uint8_t> in(n);
    for (int k = 0; k < p; ++k) {
      const int t = (rank() + k + 1) % p;
      w.get(t, skew, in.data(), n);
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(in[i], pattern(t, 0, i)) << "byte " << i << " of " << n << " from rank " << t;
    }
    comm().barrier();
  }
}

TEST(Rma, NonBlockingPutsAndGetsComplete) {
  const int p = nranks();
  constexpr std::size_t kN = 4096;
  Window<std::int64_t> w(comm(), kN * static_cast<std::size_t>(p));
  std::vector<std::int64_t> src(kN);
  std::iota(src.begin(), src.end(), rank() * 1000000);
  std::vector<Request> reqs;
  for (int t = 0; t < p; ++t)
    reqs.push_back(w.put_nb(t, static_cast<std::size_t>(rank()) * kN, src));
  for (auto& r : reqs) r.wait();
  comm().flush_all();
  comm().barrier();
  std::vector<std::vector<std::int64_t>> got(p, std::vector<std::int64_t>(kN));
  reqs.clear();
  const int t = (rank() + 1) % p;
  for (int r = 0; r < p; ++r) reqs.push_back(w.get_nb(t, static_cast<std::size_t>(r) * kN, got[r]));
  for (auto& r : reqs) r.wait();
  for (int r = 0; r < p; ++r)
    for (std::size_t i = 0; i < kN; ++i)
      ASSERT_EQ(got[r][i], r * 1000000 + static_cast<std::int64_t>(i));
  comm().barrier();
}

// A window destroyed while this process still has non-blocking operations on it in flight: the
// collective destruction completes them first (nothing lands in unmapped memory), so their
// Requests finish afterwards without error and deliver what they read.
TEST(Rma, DestroyingAWindowCompletesItsOutstandingRequests) {
  const int p = nranks();
  const int next = (rank() + 1) % p, prev = (rank() + p - 1) % p;
  constexpr std::size_t kN = 1 << 16;  // 512 KiB: large enough to be in flight
  std::vector<std::int64_t> src(kN, rank() + 1), got(kN, -1);
  std::uint64_t found = ~0ULL;
  std::vector<Request> reqs;
  {
    Window<std::int64_t> w(comm(), 2 * kN + 1);
    auto mine = w.local();
    for (std::size_t i = 0; i < kN; ++i)
      mine[kN + i] = rank() * 1000 + static_cast<std::int64_t>(i % 1000);
    mine[2 * kN] = 100 + rank();
    comm().barrier();
    reqs.push_back(w.put_nb(next, 0, src));
    reqs.push_back(w.get_nb(prev, kN, got));
    reqs.push_back(w.bytes().fetch_add_nb(next, 2 * kN * sizeof(std::int64_t), 1, 8, &found));
  }  // destroyed with the requests not waited for
  for (auto& r : reqs) EXPECT_NO_THROW(r.wait());
  for (std::size_t i = 0; i < kN; ++i)
    ASSERT_EQ(got[i], prev * 1000 + static_cast<std::int64_t>(i % 1000)) << "element " << i;
  // Every rank adds 1 once to its next rank's counter, so the value found is the initial one.
  EXPECT_EQ(found, static_cast<std::uint64_t>(100 + next));
  comm().barrier();
}

TEST(Rma, OutOfBoundsIsAnErrorAndWritesNothing) {
  WindowBytes w(comm(), 100);
  const int t = (rank() + 1) % nranks();
  std::vector<char> buf(200, 'x');
  EXPECT_THROW(w.put(t, 90, buf.data(), 11), std::out_of_range);
  EXPECT_THROW(w.put(t, 101, buf.data(), 0), std::out_of_range);
  EXPECT_THROW(w.get(t, 0, buf.data(), 101), std::out_of_range);
  EXPECT_THROW(w.put(t, SIZE_MAX - 3, buf.data(), 8), std::out_of_range);
  EXPECT_THROW(w.put_signal(t, 0, buf.data(), 1, 64), std::out_of_range);
  EXPECT_THROW(w.fetch_add(t, 96, 1, 8), std::out_of_range);
  EXPECT_THROW(w.fetch_add(t, 4, 1, 8), std::invalid_argument);
  EXPECT_THROW(w.put(nranks(), 0, buf.data(), 1), std::out_of_range);
  EXPECT_THROW(w.put(-1, 0, buf.data(), 1), std::out_of_range);
  w.put(t, 100, buf.data(), 0);  // the empty range at the end is inside
  comm().barrier();
  for (std::size_t i = 0; i < 100; ++i) ASSERT_EQ(w.local()[i], std::byte{0});
  comm().barrier();
}

// Windows may differ in size between processes (as MPI allows): every access is checked against
// the target's own data size and signal count, never the caller's. Rank r makes 96 + 64 r bytes
// and 2 + r signals, so a rank's previous rank (r - 1) has the smaller window: a put inside the
// caller's window but past the target's end must throw and write nothing, not land in the
// target's signals (which follow its data).
TEST(Rma, AccessIsCheckedAgainstTheTargetsOwnSize) {
  const int p = nranks(), me = rank();
  const auto bytes_of = [](int r) { return std::size_t{96} + 64 * static_cast<std::size_t>(r); };
  const auto signals_of = [](int r) { return std::size_t{2} + static_cast<std::size_t>(r); };
  WindowBytes w(comm(), bytes_of(me), signals_of(me));
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(w.bytes(r), bytes_of(r)) << "rank " << r;
    EXPECT_EQ(w.signals(r), signals_of(r)) << "rank " << r;
  }
  EXPECT_EQ(w.bytes(), bytes_of(me));
  EXPECT_THROW((void)w.bytes(p), std::out_of_range);
  std::vector<char> buf(bytes_of(p), 'x');
  for (int t = 0; t < p; ++t) {
    if (bytes_of(t) >= bytes_of(me)) continue;  // only targets smaller than this process
    const std::size_t end = bytes_of(t);
    EXPECT_THROW(w.put(t, end, buf.data(), 8), std::out_of_range) << "to rank " << t;
    EXPECT_THROW(w.put(t, end - 4, buf.data(), 8), std::out_of_range) << "to rank " << t;
    EXPECT_THROW(w.put_signal(t, end, buf.data(), 8, 0), std::out_of_range) << "to rank " << t;
    EXPECT_THROW(w.get(t, end - 8, buf.data(), 16), std::out_of_range) << "from rank " << t;
    EXPECT_THROW(w.fetch_add(t, end, 1, 8), std::out_of_range) << "to rank " << t;
    EXPECT_THROW(w.compare_swap(t, end, 0, 1, 8), std::out_of_range) << "to rank " << t;
    // The target's signal words start a line past its data: a put aimed there must not land.
    EXPECT_THROW(w.put(t, (end + 63) / 64 * 64, buf.data(), 8), std::out_of_range);
    // Signal indices beyond the target's count (inside the caller's) are refused as well.
    EXPECT_THROW(w.signal_add(t, signals_of(t)), std::out_of_range) << "to rank " << t;
    EXPECT_THROW(w.put_signal(t, 0, buf.data(), 1, signals_of(t)), std::out_of_range);
    // Inside the target's window the operations work.
    w.put(t, end - 8, buf.data(), 8);
    w.signal_add(t, signals_of(t) - 1);
  }
  comm().flush_all();
  comm().barrier();
  // Each rank received one put and one signal from every larger rank, nothing else.
  const auto larger = static_cast<std::uint64_t>(p - 1 - me);
  EXPECT_EQ(w.signal(signals_of(me) - 1), larger);
  for (std::size_t s = 0; s + 1 < signals_of(me); ++s) EXPECT_EQ(w.signal(s), 0u) << s;
  for (std::size_t i = 0; i < bytes_of(me); ++i)
    ASSERT_EQ(w.local()[i], i >= bytes_of(me) - 8 && larger > 0 ? std::byte{'x'} : std::byte{0})
        << "byte " << i;
  comm().barrier();
}

// A window whose size in bytes does not fit a size_t is refused, not wrapped around.
TEST(Window, SizesThatWrapAreRefused) {
  EXPECT_THROW(Window<double>(comm(), SIZE_MAX / 4), std::length_error);
  EXPECT_THROW(WindowBytes(comm(), SIZE_MAX - 10), std::length_error);
  EXPECT_THROW(WindowBytes(comm(), 64, SIZE_MAX / 4), std::length_error);
  Window<std::uint64_t> w(comm(), 16, 1);
  const std::uint64_t one = 1;
  // offset * sizeof(T) would wrap to a small offset inside the window.
  const std::size_t wraps = (SIZE_MAX / 8) + 2;  // * 8 wraps to 8
  EXPECT_THROW(w.put(rank(), wraps, std::span<const std::uint64_t>(&one, 1)), std::out_of_range);
  EXPECT_THROW(w.fetch_add(rank(), wraps, 1), std::out_of_range);
  for (auto v : w.local()) EXPECT_EQ(v, 0u);
  comm().barrier();
}

TEST(Rma, BarrierOrdersPhases) {
  // Phase k: everyone writes k into its own slot at every rank; after the barrier everyone must
  // read k in every slot (a barrier that lets a rank out early shows k-1 somewhere).
  const int p = nranks();
  Window<std::int64_t> w(comm(), static_cast<std::size_t>(p));
  for (std::int64_t k = 1; k <= 300; ++k) {
    const std::int64_t v = k;
    for (int t = 0; t < p; ++t)
      w.put(t, static_cast<std::size_t>(rank()), std::span<const std::int64_t>(&v, 1));
    comm().barrier();
    for (int r = 0; r < p; ++r) ASSERT_EQ(w.local()[r], k) << "slot " << r << " phase " << k;
    comm().barrier();
  }
}

TEST(Rma, BarrierOrdersPhasesWithTheAlgorithmsAlternating) {
  // As above, each phase's two barriers by a different algorithm where both can run (each counts
  // its own barriers: a mix-up lets a rank out early or hangs until the timeout).
  const int p = nranks();
  std::vector<ProcessBarrier> kinds = {ProcessBarrier::dissemination, ProcessBarrier::automatic};
  if (comm().host_barrier_possible()) kinds.push_back(ProcessBarrier::host);
  Window<std::int64_t> w(comm(), static_cast<std::size_t>(p));
  for (std::int64_t k = 1; k <= 300; ++k) {
    const std::int64_t v = k;
    for (int t = 0; t < p; ++t)
      w.put(t, static_cast<std::size_t>(rank()), std::span<const std::int64_t>(&v, 1));
    comm().barrier(kinds[static_cast<std::size_t>(k) % kinds.size()]);
    for (int r = 0; r < p; ++r) ASSERT_EQ(w.local()[r], k) << "slot " << r << " phase " << k;
    comm().barrier(kinds[static_cast<std::size_t>(k / 2) % kinds.size()]);
  }
}

TEST(Comm, ProcessBarrierAlgorithmIsTheOneExpected) {
  // The variants of this test say which algorithm the job must have chosen
  // (COMPAS_TEST_EXPECT_BARRIER): two-level when asked for and every same-host peer is reached by
  // load/store; dissemination when asked for, or when load/store is off.
  const std::string algo = comm().barrier_algorithm();
  EXPECT_TRUE(algo == "host" || algo == "dissemination") << algo;
  if (nranks() == 1 || static_cast<int>(comm().hosts().size()) == nranks()) {
    EXPECT_EQ(algo, "dissemination") << "no host has two processes";
  }
  if (!comm().options().direct) {
    EXPECT_FALSE(comm().host_barrier_possible());
    EXPECT_THROW(comm().barrier(ProcessBarrier::host), std::logic_error);
  }
  const char* want = std::getenv("COMPAS_TEST_EXPECT_BARRIER");
  if (!want) GTEST_SKIP() << "COMPAS_TEST_EXPECT_BARRIER not set: " << algo << " chosen";
  EXPECT_EQ(algo, std::string(want));
  if (std::string(want) == "host") {
    EXPECT_TRUE(comm().host_barrier_possible());
  }
}

TEST(Rma, PassiveTargetProgressWhileTargetComputes) {
  // Rank 0 computes (no compas call) while the others get from and fetch_add on it; they must
  // all finish before rank 0 comes back, which the final count shows.
  const int p = nranks();
  Window<std::uint64_t> w(comm(), 2 + static_cast<std::size_t>(p), 1);
  comm().barrier();
  if (rank() == 0) {
    w.local()[1] = 42;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    comm().barrier();
    // Spin without touching the worker until every peer has added (progress must come from
    // elsewhere: the progress thread, or the transport itself).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    std::atomic_ref<std::uint64_t> count(w.local()[0]);
    while (count.load() < static_cast<std::uint64_t>(p - 1) &&
           std::chrono::steady_clock::now() < deadline) {
      if (comm().options().progress == Progress::wait) comm().progress();
      std::this_thread::yield();
    }
    EXPECT_EQ(count.load(), static_cast<std::uint64_t>(p - 1));
    // Every peer flushed its put_signal before its fetch_add.
    EXPECT_EQ(w.signal(0), static_cast<std::uint64_t>(p - 1));
    for (int r = 1; r < p; ++r) EXPECT_EQ(w.local()[2 + r], 1000u + r) << "from rank " << r;
  } else {
    comm().barrier();
    std::uint64_t v = 0;
    w.get(0, 1, std::span<std::uint64_t>(&v, 1));
    EXPECT_EQ(v, 42u);
    const std::uint64_t mine = 1000u + static_cast<std::uint64_t>(rank());
    w.put_signal(0, 2 + static_cast<std::size_t>(rank()), std::span<const std::uint64_t>(&mine, 1),
                 0);
    comm().flush(0);  // remote completion: the signal is applied at rank 0 when this returns
    w.fetch_add(0, 0, 1);
  }
  comm().barrier();
}

TEST(Comm, HostsAndLazyEndpoints) {
  // compas-run starts every rank on this host; the two-host test starts one rank per host and
  // says so in COMPAS_TEST_HOSTS.
  const char* h = std::getenv("COMPAS_TEST_HOSTS");
  const std::size_t hosts = h ? static_cast<std::size_t>(std::atoi(h)) : 1;
  ASSERT_EQ(comm().hosts().size(), hosts);
  if (hosts == 1) {
    EXPECT_EQ(static_cast<int>(comm().hosts()[0].size()), nranks());
    for (int r = 0; r < nranks(); ++r) EXPECT_TRUE(comm().same_host(r));
  } else {
    // COMPAS_TEST_RANKS_PER_HOST consecutive ranks per host (1 unless said).
    const char* per_env = std::getenv("COMPAS_TEST_RANKS_PER_HOST");
    const int per = per_env ? std::atoi(per_env) : 1;
    ASSERT_EQ(nranks(), per * static_cast<int>(hosts));
    for (int r = 0; r < nranks(); ++r) EXPECT_EQ(comm().same_host(r), r / per == rank() / per);
    for (int r = 0; r < nranks(); ++r)
      EXPECT_EQ(comm().host_of(r), comm().host_of(r - r % per)) << "rank " << r;
    // One rank per host: UCX is limited to tcp, which must carry the traffic between hosts. (With
    // several, the test turns on shared memory, which UCX may use across namespaces.)
    for (int r = 0; r < nranks() && per == 1; ++r)
      EXPECT_FALSE(r != rank() && comm().options().direct &&
                   comm().transport(r).find("tcp") == std::string::npos)
          << "rank " << r
          << " is on another host and must be reached over the network: " << comm().transport(r);
  }
  EXPECT_LE(comm().connected_peers(), nranks() - 1);
  const auto s = comm().stats();
  EXPECT_GT(s.puts, 0u);
  EXPECT_GT(s.bytes_put, 0u);
  EXPECT_GT(s.atomics, 0u);
  if (nranks() > 1) {
    EXPECT_FALSE(comm().transport((rank() + 1) % nranks()).empty());
  }
}

// Each process's thread count (CommOptions::threads, which the Runtime sets; here from
// COMPAS_TEST_COMM_THREADS, else COMPAS_THREADS, else 1) reaches every process, and a host whose
// processes' threads outnumber its cpus is found oversubscribed.
TEST(Comm, ThreadCountsReachEveryProcess) {
  const char* given = std::getenv("COMPAS_TEST_COMM_THREADS");
  const char* env = std::getenv("COMPAS_THREADS");
  const int want = given ? std::atoi(given) : env ? std::atoi(env) : 1;
  std::set<int> cpus;
  int threads = 0;
  for (int r : comm().hosts()[static_cast<std::size_t>(comm().host_of(rank()))]) {
    cpus.insert(comm().cpus_of(r).begin(), comm().cpus_of(r).end());
    threads += comm().threads_of(r);
  }
  for (int r = 0; r < nranks(); ++r) EXPECT_EQ(comm().threads_of(r), want) << "rank " << r;
  if (!comm().options().oversubscribed_given) {
    EXPECT_EQ(comm().options().oversubscribed, threads > static_cast<int>(cpus.size()));
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  try {
    g_boot = Bootstrap::from_environment();
    CommOptions o = CommOptions::from_environment();
    if (const char* t = std::getenv("COMPAS_TEST_COMM_THREADS")) o.threads = std::atoi(t);
    g_comm = std::make_unique<Comm>(*g_boot, o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_rma: cannot form the job: %s\n", e.what());
    return 1;
  }
  const int rc = RUN_ALL_TESTS();
  g_comm.reset();
  g_boot.reset();
  return rc;
}
