// report::write_file_atomic: a whole file or none, never written through someone else's file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "compas/report/report.hpp"

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct TempDir {
  fs::path path;
  TempDir() {
    char name[] = "/tmp/compas-report-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// A temporary name another local user can guess (the target plus this process's pid) lets them
// plant a link there: the write would then go through the link into their choice of file. The
// temporary is made with O_EXCL under a fresh name instead.
TEST(WriteFileAtomic, APlantedLinkAtAGuessableTemporaryNameIsNotFollowed) {
  TempDir d;
  const fs::path target = d.path / "out.json", victim = d.path / "victim";
  { std::ofstream(victim) << "untouched"; }
  fs::create_symlink(victim, d.path / ("out.json.tmp." + std::to_string(::getpid())));
  compas::report::write_file_atomic(target.string(), "{\"ok\": 1}\n");
  EXPECT_EQ(read_file(victim), "untouched");
  EXPECT_EQ(read_file(target), "{\"ok\": 1}\n");
  EXPECT_FALSE(fs::is_symlink(target));
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  // Nothing else is left beside it: the victim, the planted link, the file.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d.path)) ++entries;
  EXPECT_EQ(entries, 3);
}

TEST(WriteFileAtomic, ReplacesAWholeFileAndFailsCleanlyWhereItCannotWrite) {
  TempDir d;
  const fs::path target = d.path / "r.csv";
  compas::report::write_file_atomic(target.string(), "a\n");
  compas::report::write_file_atomic(target.string(), "b,c\n");
  EXPECT_EQ(read_file(target), "b,c\n");
  EXPECT_THROW(compas::report::write_file_atomic((d.path / "no/such/dir/x").string(), "x"),
               std::runtime_error);
}

}  // namespace
