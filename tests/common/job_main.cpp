#include "job_main.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <exception>
#include <filesystem>

compas::Runtime* g_rt = nullptr;

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const std::string name = std::filesystem::path(argv[0]).filename().string();
  try {
    compas::Runtime rt(argc, argv);
    g_rt = &rt;
    int failed = RUN_ALL_TESTS() != 0;
    rt.run([&](compas::ThreadCtx& t) {
      const int any = rt.allreduce(t, failed, compas::op::max{});
      if (t.is_leader()) failed = any;
    });
    g_rt = nullptr;
    return failed;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return 1;
  }
}
