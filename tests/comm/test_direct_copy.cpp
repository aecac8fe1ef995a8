// Same-host put, put_signal and get (a copy by load/store, comm/src/direct_copy.hpp) at every pair
// of source and destination offsets into a page and every size bench/copy_offsets times, with
// real processes: every rank of a compas-run job runs this program, each towards the next rank,
// all at the same time. The bytes that arrive must be exactly the ones sent and the bytes around
// them untouched. With COMPAS_DIRECT=0 the same checks go through UCX.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../common/sanitized.hpp"
#include "compas/comm/comm.hpp"
#include "compas/comm/window.hpp"

namespace {

using namespace compas::comm;

std::unique_ptr<Bootstrap> g_boot;
std::unique_ptr<Comm> g_comm;

constexpr std::size_t kPage = 4096;
constexpr std::size_t kGuard = 64;  // bytes checked on each side of the destination
// bench/copy_offsets' offsets (bytes past a page boundary) and sizes.
constexpr std::size_t kOffsets[] = {0, 16, 64, 2048, kPage - 16, kPage + 16};
const std::vector<std::size_t> kBenchSizes = {4 << 10,  8 << 10,   16 << 10,  32 << 10,  64 << 10,
                                              96 << 10, 128 << 10, 192 << 10, 256 << 10, 512 << 10,
                                              1 << 20,  2 << 20,   4 << 20};
// A sanitized build checks every size up to 256 KiB: the copy has no threshold past 64 KiB, and
// the sizes past it cost minutes under ThreadSanitizer (checked bytes, not new paths; the edge
// sizes still take 1 MiB + 7).
std::vector<std::size_t> sweep_sizes() {
  if (!compas::test::kSanitized) return kBenchSizes;
  std::vector<std::size_t> sizes;
  for (std::size_t n : kBenchSizes)
    if (n <= (256 << 10)) sizes.push_back(n);
  return sizes;
}
const std::vector<std::size_t> kSweepSizes = sweep_sizes();
// Around the copy's thresholds (2048: memcpy below, the loop above; 64 KiB: put_signal streams)
// and lengths that are no multiple of a vector.
const std::vector<std::size_t> kEdgeSizes = {
    1, 63, 2047, 2048, 2049, 4096 + 33, (64 << 10) - 1, 64 << 10, (64 << 10) + 1, (1 << 20) + 7};
constexpr std::size_t kMaxSize = 4 << 20;
constexpr std::size_t kRegion = kMaxSize + 2 * kPage + 2 * kGuard;  // the largest offset and guards

int rank() {
  return g_comm->rank();
}
int next_rank() {
  return (g_comm->rank() + 1) % g_comm->size();
}
int previous_rank() {
  return (g_comm->rank() + g_comm->size() - 1) % g_comm->size();
}

// The bytes rank `from` sends in case `k`: a different stream per rank and case, so that a byte
// left from another case or another rank, or one copied to the wrong place, is seen.
void fill(std::byte* p, std::size_t n, int from, std::uint64_t k) {
  std::uint64_t x = (static_cast<std::uint64_t>(from) << 40) ^ (k * 0x9E3779B97F4A7C15ull);
  for (std::size_t i = 0; i < n; i += 8) {
    x += 0x9E3779B97F4A7C15ull;  // splitmix64
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    std::memcpy(p + i, &z, std::min<std::size_t>(8, n - i));
  }
}

constexpr std::byte kUntouched{0xA5};

// Where `got` (n bytes, with kGuard bytes before and after it) differs from what rank `from` sent
// in case k: "" when it does not.
std::string check(const std::byte* got, std::size_t n, int from, std::uint64_t k) {
  std::vector<std::byte> want(n);
  fill(want.data(), n, from, k);
  for (std::size_t i = 0; i < kGuard; ++i) {
    if (got[-1 - static_cast<std::ptrdiff_t>(i)] != kUntouched)
      return "the byte " + std::to_string(i + 1) + " before the destination was written";
    if (got[n + i] != kUntouched)
      return "the byte " + std::to_string(i) + " after the destination was written";
  }
  if (std::memcmp(got, want.data(), n) == 0) return "";
  std::size_t i = 0;
  while (got[i] == want[i]) ++i;
  return "byte " + std::to_string(i) + " of " + std::to_string(n) + " is " +
         std::to_string(static_cast<int>(got[i])) + ", not " +
         std::to_string(static_cast<int>(want[i]));
}

// A page-aligned buffer of kRegion bytes.
struct PageBuffer {
  // aligned_alloc wants a size that is a multiple of the alignment (AddressSanitizer refuses
  // another).
  PageBuffer()
      : p(static_cast<std::byte*>(
            std::aligned_alloc(kPage, (kRegion + kPage - 1) / kPage * kPage))) {
    if (!p) throw std::bad_alloc();
  }
  ~PageBuffer() { std::free(p); }
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  std::byte* p;
};

// One window and two local buffers for every case. Offsets into the window are counted from its
// first page boundary past kGuard bytes (where a peer maps it, the page offset is the owner's).
class DirectCopy : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { window_ = new WindowBytes(*g_comm, kRegion, 1); }
  static void TearDownTestSuite() {
    delete window_;
    window_ = nullptr;
  }

  static std::size_t base_of(const std::byte* p) {
    const auto at = reinterpret_cast<std::uintptr_t>(p) + kGuard;
    return kGuard + (kPage - at % kPage) % kPage;
  }

  // Each rank puts (or put_signals) n bytes from its buffer at `src` bytes past a page boundary
  // into the next rank's window at `dst`; each checks what the previous rank put into its own.
  void put_case(bool signal, std::size_t n, std::size_t src, std::size_t dst, std::uint64_t k) {
    WindowBytes& w = *window_;
    const std::size_t mine = base_of(w.local());
    std::memset(w.local() + mine + dst - kGuard, static_cast<int>(kUntouched), n + 2 * kGuard);
    std::byte* from = local_.p + kGuard + src;
    fill(from, n, rank(), k);
    g_comm->barrier();
    const std::size_t theirs = w.direct(next_rank()) ? base_of(w.peer_data(next_rank())) : mine;
    if (signal)
      w.put_signal(next_rank(), theirs + dst, from, n, 0);
    else
      w.put(next_rank(), theirs + dst, from, n);
    g_comm->flush(next_rank());
    g_comm->barrier();
    const std::string bad = check(w.local() + mine + dst, n, previous_rank(), k);
    EXPECT_EQ(bad, "") << (signal ? "put_signal" : "put") << " of " << n << " bytes from offset "
                       << src << " to offset " << dst << " (rank " << previous_rank() << " to "
                       << rank() << ")";
  }

  // Each rank gets n bytes from the next rank's window at `src` into its buffer at `dst`.
  void get_case(std::size_t n, std::size_t src, std::size_t dst, std::uint64_t k) {
    WindowBytes& w = *window_;
    const std::size_t mine = base_of(w.local());
    fill(w.local() + mine + src, n, rank(), k);
    std::byte* to = local_.p + kGuard + dst;
    std::memset(to - kGuard, static_cast<int>(kUntouched), n + 2 * kGuard);
    g_comm->barrier();
    const std::size_t theirs = w.direct(next_rank()) ? base_of(w.peer_data(next_rank())) : mine;
    w.get(next_rank(), theirs + src, to, n);
    const std::string bad = check(to, n, next_rank(), k);
    EXPECT_EQ(bad, "") << "get of " << n << " bytes from offset " << src << " to offset " << dst
                       << " (rank " << rank() << " from " << next_rank() << ")";
    g_comm->barrier();  // the window's bytes stay until every get is done
  }

  // Case numbers start at `first`: each test its own, so that no case finds a previous one's
  // bytes where its own should arrive.
  template <class Case>
  void every_offset(const std::vector<std::size_t>& sizes, std::uint64_t first, Case one) {
    std::uint64_t k = first;
    for (std::size_t n : sizes)
      for (std::size_t src : kOffsets)
        for (std::size_t dst : kOffsets) one(n, src, dst, ++k);
  }

  static WindowBytes* window_;
  PageBuffer local_;
};

WindowBytes* DirectCopy::window_ = nullptr;

TEST_F(DirectCopy, PutAtEveryOffsetAndSize) {
  every_offset(kSweepSizes, 0, [&](std::size_t n, std::size_t s, std::size_t d, std::uint64_t k) {
    put_case(false, n, s, d, k);
  });
}

TEST_F(DirectCopy, PutSignalAtEveryOffsetAndSize) {
  every_offset(kSweepSizes, 10000,
               [&](std::size_t n, std::size_t s, std::size_t d, std::uint64_t k) {
                 put_case(true, n, s, d, k);
               });
}

TEST_F(DirectCopy, GetAtEveryOffsetAndSize) {
  every_offset(
      kSweepSizes, 20000,
      [&](std::size_t n, std::size_t s, std::size_t d, std::uint64_t k) { get_case(n, s, d, k); });
}

TEST_F(DirectCopy, EveryOperationAtSizesAroundTheCopysThresholds) {
  every_offset(kEdgeSizes, 30000,
               [&](std::size_t n, std::size_t s, std::size_t d, std::uint64_t k) {
                 put_case(false, n, s, d, 3 * k);
                 put_case(true, n, s, d, 3 * k + 1);
                 get_case(n, s, d, 3 * k + 2);
               });
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  try {
    g_boot = Bootstrap::from_environment();
    g_comm = std::make_unique<Comm>(*g_boot);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_direct_copy: cannot form the job: %s\n", e.what());
    return 1;
  }
  const int rc = RUN_ALL_TESTS();
  g_comm.reset();
  g_boot.reset();
  return rc;
}
