// compas study's directory rules (apps/compas/study_dir.cpp, study_runs.cpp): which directory a
// study takes, that it deletes only the files it wrote, and that it opens nothing there through a
// link. The functions are called directly, on directories made here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "../../apps/compas/study_dir.hpp"
#include "../../apps/compas/study_runs.hpp"
#include "../common/proc.hpp"

namespace compas::app {
namespace {

namespace fs = std::filesystem;

std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class StudyDir : public compas::testing::TempDirTest {
 protected:
  StudyDir() : TempDirTest("compas-study-dir-test") {}
  void put(const std::string& rel, const std::string& text) const {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
  // The message of the std::invalid_argument claim_study_dir throws ("" when it throws none).
  static std::string refusal(const std::string& out) {
    try {
      claim_study_dir(out, {"run_a"});
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(StudyDir, OnlyANewEmptyOrStudysDirectoryIsTaken) {
  EXPECT_EQ(refusal(path("new")), "");
  EXPECT_TRUE(fs::is_directory(path("new/raw")));
  EXPECT_EQ(refusal(path("new")), "") << "its own directory, a second time";
  fs::create_directories(path("empty"));
  EXPECT_EQ(refusal(path("empty")), "");
  put("mine/notes.md", "mine");
  EXPECT_NE(refusal(path("mine")).find("'" + path("mine") + "' is not a compas study directory"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(path("mine/.compas-study")));
  EXPECT_NE(refusal("/").find("is the root directory"), std::string::npos);
  EXPECT_NE(refusal("").find("--out is empty"), std::string::npos);
  put("file", "x");
  EXPECT_NE(refusal(path("file")).find("is not a directory"), std::string::npos);
}

// Files others put in a study's directory stay, whatever the study deletes; a name the study did
// not write is refused, not overwritten.
TEST_F(StudyDir, DeletesOnlyTheFilesItWrote) {
  const fs::path out = path("study");
  claim_study_dir(out.string(), {});
  write_study_file(out, "report.md", "# report\n");
  prepare_study_file(out, "raw/run_a.json");
  std::ofstream(out / "raw/run_a.json") << "{}";
  for (const char* f : {"raw/mine.json", "plots/mine.png", "logs/notes", "notes.md"})
    put("study/" + std::string(f), "mine");
  EXPECT_THROW(prepare_study_file(out, "raw/mine.json"), std::runtime_error);
  EXPECT_THROW(write_study_file(out, "notes.md", "ours"), std::runtime_error);
  remove_study_files(out, "", "");
  EXPECT_FALSE(fs::exists(out / "report.md"));
  EXPECT_FALSE(fs::exists(out / "raw/run_a.json"));
  for (const char* f : {"raw/mine.json", "plots/mine.png", "logs/notes", "notes.md"})
    EXPECT_EQ(text_of(out / f), "mine") << f;
}

// The plot script draws into a folder of its own; its PNGs become the study's, a user's PNG of
// the same name stays, and the folder goes.
TEST_F(StudyDir, PlotsDrawnElsewhereAreMovedInWithoutReplacingAUsersPng) {
  const fs::path out = path("study");
  claim_study_dir(out.string(), {});
  study_subdir(out, "plots");
  put("study/plots/b.png", "mine");
  put("study/drawn/a.png", "ours a");
  put("study/drawn/b.png", "ours b");
  take_study_plots(out, out / "drawn");
  EXPECT_EQ(text_of(out / "plots/a.png"), "ours a");
  EXPECT_EQ(text_of(out / "plots/b.png"), "mine");
  EXPECT_FALSE(fs::exists(out / "drawn"));
  EXPECT_TRUE(study_files(out).count("plots/a.png"));
  remove_study_files(out, "plots/", ".png");
  EXPECT_FALSE(fs::exists(out / "plots/a.png"));
  EXPECT_EQ(text_of(out / "plots/b.png"), "mine");
}

// A prepared manifest naming files outside the study, or a folder of it that is a link elsewhere:
// nothing outside is deleted.
TEST_F(StudyDir, AManifestCannotReachOutsideTheDirectory) {
  const fs::path out = path("study");
  put("victim", "precious");
  put("elsewhere/run.json", "precious");
  fs::create_directories(out);
  fs::create_symlink(path("elsewhere"), out / "raw");
  put("study/.compas-study",
      "compas study\n../victim\nraw/../../victim\n" + path("victim") + "\nraw/run.json\n");
  EXPECT_THROW(claim_study_dir(out.string(), {}), std::invalid_argument) << "raw/ is a link";
  remove_study_files(out, "", "");
  EXPECT_EQ(text_of(path("victim")), "precious");
  EXPECT_EQ(text_of(path("elsewhere/run.json")), "precious");
}

// Links under the names the study opens are replaced or refused, never followed.
TEST_F(StudyDir, LinksAreNeverFollowed) {
  const fs::path out = path("study");
  put("victim", "precious");
  claim_study_dir(out.string(), {});
  prepare_study_file(out, "report.md");
  fs::create_symlink(path("victim"), out / "report.md");  // planted after the study owned it
  write_study_file(out, "report.md", "# report\n");
  EXPECT_FALSE(fs::is_symlink(out / "report.md"));
  fs::create_symlink(path("victim"), out / "logs/run_a.log");
  EXPECT_EQ(log_tail(out / "logs/run_a.log"), "");
  fs::create_symlink(path("victim"), out / "raw/run_a.json");
  EXPECT_NE(raw_damage(out, "run_a").find("a symbolic link"), std::string::npos);
  fs::create_symlink(path("victim"), out / "runs.jsonl");
  EXPECT_THROW(append_run(out / "runs.jsonl", {{"id", "run_a"}}), std::runtime_error);
  EXPECT_THROW(read_runs(out / "runs.jsonl"), std::invalid_argument);
  EXPECT_EQ(text_of(path("victim")), "precious");
}

}  // namespace
}  // namespace compas::app
