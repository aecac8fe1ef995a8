// compas study's directory rules (apps/compas/study/study_dir.cpp, study_runs.cpp): which directory a
// study takes, that it deletes only the files it wrote, and that it opens nothing there through a
// link. The functions are called directly, on directories made here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "../../apps/compas/study/study_dir.hpp"
#include "../../apps/compas/study/study_runs.hpp"
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
      claim_study_dir(out);
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

// A directory of the user's own that happens to hold a runs.jsonl (an experiment tracker's log)
// is no study's: only the marker a study wrote makes it one. It is refused, naming what to do,
// and nothing in it is touched or marked.
TEST_F(StudyDir, ARunsJsonlWithoutTheMarkerIsNoStudy) {
  put("tracker/runs.jsonl", "{\"id\":\"run_a\",\"loss\":0.3}\n");
  put("tracker/report.md", "my own report");
  put("tracker/study.json", "{\"mine\":true}");
  const std::string why = refusal(path("tracker"));
  EXPECT_NE(why.find("'" + path("tracker") + "' holds runs.jsonl but no .compas-study"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("give --out a new or empty directory"), std::string::npos) << why;
  EXPECT_FALSE(fs::exists(path("tracker/.compas-study")));
  EXPECT_FALSE(fs::exists(path("tracker/raw")));
  EXPECT_EQ(text_of(path("tracker/report.md")), "my own report");
  EXPECT_EQ(text_of(path("tracker/runs.jsonl")), "{\"id\":\"run_a\",\"loss\":0.3}\n");
}

// The marker says which compas wrote it; a marker of the first marked studies (no version) is
// still a study's, and so is one whose manifest the study emptied (--fresh): neither adopts the
// files of the names a study writes that are not in its manifest.
TEST_F(StudyDir, TheMarkerNamesItsVersionAndAdoptsNothing) {
  EXPECT_EQ(refusal(path("new")), "");
  const std::string head = text_of(path("new/.compas-study")).substr(0, 13);
  EXPECT_EQ(head, "compas study ");
  EXPECT_GT(text_of(path("new/.compas-study")).find('\n'), 13u) << "no version after the head";
  put("old/.compas-study", "compas study\n");
  put("old/runs.jsonl", "");
  put("old/report.md", "mine");
  EXPECT_EQ(refusal(path("old")), "");
  EXPECT_FALSE(study_files(path("old")).count("report.md"));
  EXPECT_THROW(write_study_file(path("old"), "report.md", "ours"), std::runtime_error);
  EXPECT_EQ(text_of(path("old/report.md")), "mine");
  put("bad/.compas-study", "compas studying\n");
  EXPECT_NE(refusal(path("bad")).find("does not begin with 'compas study'"), std::string::npos);
}

// Files others put in a study's directory stay, whatever the study deletes; a name the study did
// not write is refused, not overwritten.
TEST_F(StudyDir, DeletesOnlyTheFilesItWrote) {
  const fs::path out = path("study");
  claim_study_dir(out.string());
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
  claim_study_dir(out.string());
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
  EXPECT_THROW(claim_study_dir(out.string()), std::invalid_argument) << "raw/ is a link";
  remove_study_files(out, "", "");
  EXPECT_EQ(text_of(path("victim")), "precious");
  EXPECT_EQ(text_of(path("elsewhere/run.json")), "precious");
}

// Links under the names the study opens are replaced or refused, never followed.
TEST_F(StudyDir, LinksAreNeverFollowed) {
  const fs::path out = path("study");
  put("victim", "precious");
  claim_study_dir(out.string());
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
