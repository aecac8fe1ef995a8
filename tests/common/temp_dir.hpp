// A test fixture with a fresh directory of its own (TempDirTest).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

namespace compas::testing {

// A test fixture with a fresh directory of its own (under the temporary directory, named after
// `stem`), removed with everything in it afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(std::string stem = "compas-test") : stem_(std::move(stem)) {}
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / (stem_ + ".XXXXXX")).string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr) << std::strerror(errno);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string stem_;
  std::filesystem::path dir_;
};

}  // namespace compas::testing
