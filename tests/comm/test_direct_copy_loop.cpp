// The same-host copy loop (comm/src/direct_copy_loop.hpp) in each instance this CPU runs (SSE2
// always, AVX2 and AVX-512 where base::cpu_runs says so), with cached and with streaming stores:
// every length from 64 to 700 bytes and some large ones, at source and destination offsets whose
// difference modulo 4096 takes the loop forward and backward. The bytes copied must be exact and
// the bytes around the destination untouched.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compas/base/isa.hpp"
#include "direct_copy.hpp"

namespace {

using compas::comm::detail::Stores;
using Loop = void (*)(std::byte*, const std::byte*, std::size_t, Stores);

#if defined(__x86_64__)

constexpr std::size_t kPage = 4096;
constexpr std::size_t kGuard = 64;
constexpr std::byte kUntouched{0xA5};
// Offsets past a page boundary: the destination leads or trails the source by 0, 1, 15, 16, 17,
// 31, 33, 63, 2047, 2048, 2049 bytes and more, modulo 4096, aligned on a vector or not.
constexpr std::size_t kOffsets[] = {0, 1, 16, 17, 33, 64, 2047, 2048, 2049, 4079, 4095};

struct Instance {
  const char* name;
  Loop loop;
};

std::vector<Instance> instances() {
  std::vector<Instance> v = {{"sse2", &compas::comm::detail::copy_loop_sse2}};
  if (compas::base::cpu_runs(compas::base::Isa::avx2))
    v.push_back({"avx2", &compas::comm::detail::copy_loop_avx2});
  if (compas::base::cpu_runs(compas::base::Isa::avx512))
    v.push_back({"avx512", &compas::comm::detail::copy_loop_avx512});
  return v;
}

struct Buffers {
  explicit Buffers(std::size_t max)
      : bytes((max + 2 * kPage + 2 * kGuard + kPage - 1) / kPage * kPage),
        src(static_cast<std::byte*>(std::aligned_alloc(kPage, bytes))),
        dst(static_cast<std::byte*>(std::aligned_alloc(kPage, bytes))) {
    for (std::size_t i = 0; i < bytes; ++i) src[i] = static_cast<std::byte>((i * 131 + (i >> 9)));
  }
  ~Buffers() {
    std::free(src);
    std::free(dst);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  std::size_t bytes;
  std::byte* src;
  std::byte* dst;
};

// "" when the copy of n bytes from s to d is exact and the kGuard bytes around d are untouched.
std::string copy_and_check(Loop loop, Stores stores, Buffers& b, std::size_t n, std::size_t so,
                           std::size_t dof) {
  std::byte* s = b.src + kPage + so;
  std::byte* d = b.dst + kPage + dof;
  std::memset(d - kGuard, static_cast<int>(kUntouched), n + 2 * kGuard);
  loop(d, s, n, stores);
  for (std::size_t i = 0; i < kGuard; ++i)
    if (d[-1 - static_cast<std::ptrdiff_t>(i)] != kUntouched || d[n + i] != kUntouched)
      return "wrote outside the destination";
  if (std::memcmp(d, s, n) == 0) return "";
  std::size_t i = 0;
  while (d[i] == s[i]) ++i;
  return "byte " + std::to_string(i) + " differs";
}

void every_case(const std::vector<std::size_t>& sizes) {
  Buffers b(sizes.back());
  for (const Instance& in : instances())
    for (Stores stores : {Stores::cached, Stores::streaming})
      for (std::size_t n : sizes)
        for (std::size_t so : kOffsets)
          for (std::size_t dof : kOffsets) {
            const std::string bad = copy_and_check(in.loop, stores, b, n, so, dof);
            ASSERT_EQ(bad, "") << in.name << (stores == Stores::cached ? " cached" : " streaming")
                               << ", " << n << " bytes from offset " << so << " to offset " << dof;
          }
}

TEST(DirectCopyLoop, EveryLengthFrom64To700AtEveryOffset) {
  std::vector<std::size_t> sizes;
  for (std::size_t n = 64; n <= 700; ++n) sizes.push_back(n);
  every_case(sizes);
}

TEST(DirectCopyLoop, LargeLengthsAtEveryOffset) {
  every_case({2047, 2048, 4096 + 33, (64 << 10) - 1, (64 << 10) + 1, (1 << 20) + 7});
}

#endif  // __x86_64__

// Through copy_direct, as put and get call it: memcpy below the loop's threshold, the loop above,
// both store kinds.
TEST(DirectCopyLoop, CopyDirectAtTheThresholds) {
  using compas::comm::detail::kLoopCopyBytes;
  using compas::comm::detail::kStreamCopyBytes;
  std::vector<std::byte> src(kStreamCopyBytes + 64), dst(kStreamCopyBytes + 64);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i * 7 + 3);
  for (std::size_t n : {std::size_t{1}, kLoopCopyBytes - 1, kLoopCopyBytes, kStreamCopyBytes - 1,
                        kStreamCopyBytes, kStreamCopyBytes + 33})
    for (Stores stores : {Stores::cached, Stores::streaming}) {
      std::fill(dst.begin(), dst.end(), std::byte{0});
      compas::comm::detail::copy_direct(dst.data() + 5, src.data() + 3, n, stores);
      EXPECT_EQ(std::memcmp(dst.data() + 5, src.data() + 3, n), 0) << n;
      EXPECT_EQ(dst[4], std::byte{0}) << n;
      EXPECT_EQ(dst[5 + n], std::byte{0}) << n;
    }
}

}  // namespace
