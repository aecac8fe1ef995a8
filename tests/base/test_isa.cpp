// base::cpu_runs against what the kernel says this CPU has (/proc/cpuinfo's flags): avx2 with
// fma, avx512f; generic and (on x86-64) sse2 always.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "compas/base/isa.hpp"

namespace {

using compas::base::Isa;

// The flags of the first processor in /proc/cpuinfo; empty when there is none to read.
std::set<std::string> cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

TEST(Isa, NamesAreTheOnesTheCommandLineTakes) {
  EXPECT_STREQ(compas::base::to_string(Isa::generic), "generic");
  EXPECT_STREQ(compas::base::to_string(Isa::sse2), "sse2");
  EXPECT_STREQ(compas::base::to_string(Isa::avx2), "avx2");
  EXPECT_STREQ(compas::base::to_string(Isa::avx512), "avx512");
}

TEST(Isa, CpuRunsWhatTheKernelSaysTheCpuHas) {
  EXPECT_TRUE(compas::base::cpu_runs(Isa::generic));
#if defined(__x86_64__)
  const auto flags = cpu_flags();
  if (flags.empty()) GTEST_SKIP() << "no flags line in /proc/cpuinfo";
  EXPECT_TRUE(compas::base::cpu_runs(Isa::sse2));
  EXPECT_EQ(compas::base::cpu_runs(Isa::avx2), flags.count("avx2") && flags.count("fma"));
  EXPECT_EQ(compas::base::cpu_runs(Isa::avx512), flags.count("avx512f") == 1);
#else
  EXPECT_FALSE(compas::base::cpu_runs(Isa::avx2));
#endif
}

}  // namespace
