// Tests of the `compas` command line, run as a user runs it (cli.hpp): the supervision of `compas
// study`'s runs: timeouts, interrupts, a killed study, runs a launcher refuses, and what a run
// leaves behind. Sizes are tiny; no test passes or fails on a measured time or rate.
#include "study_runs_helpers.hpp"

namespace {

using namespace cli;
using namespace cli_study;

// A launcher that refuses the P = 2 runs while the file `refuse` exists, and starts the others
// with compas-run.
std::string refusing_launcher(const fs::path& dir, const std::string& refuse) {
  return write_script(dir, "launch.sh",
                      "p=$1; shift\nif [ \"$p\" = 2 ] && [ -e " + refuse +
                          " ]; then\n  echo 'launcher: cannot place 2 processes here' >&2\n  "
                          "exit 3\nfi\nexec " +
                          COMPAS_RUN_EXE + " -n \"$p\" -t 1 \"$@\"\n");
}

const char* const kRefused[] = {"laplace_n640_p2t1", "laplace_n1024_p2t1"};
const char* const kPlaced[] = {"laplace_n640_p1t1", "laplace_n1024_p1t1"};

TEST_F(Cli, StudyRecordsARefusedRunAndFinishesTheRest) {
  const std::string out = path("study"), refuse = path("refuse");
  std::ofstream(refuse) << "refuse\n";
  seed_characterization_done(out);
  const Outcome r =
      run_compas(study_args(out, refusing_launcher(dir_, refuse) + " {P}", "1x1,2x1"));
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  auto runs = records_by_id(out + "/runs.jsonl");
  for (const char* id : kRefused) {
    ASSERT_EQ(runs[id].size(), 1u) << id << "\n" << read_file(out + "/runs.jsonl");
    const json f = runs[id].back();
    EXPECT_TRUE(f.value("failed", false)) << f.dump();
    EXPECT_EQ(f.value("exit", 0), 3) << f.dump();
    EXPECT_EQ(f.value("reason", ""), "exit 3") << f.dump();
    EXPECT_NE(f.value("log_tail", "").find("cannot place 2 processes here"), std::string::npos)
        << f.dump();
  }
  for (const char* id : kPlaced) {
    ASSERT_EQ(runs[id].size(), 1u) << id << "\n" << read_file(out + "/runs.jsonl");
    EXPECT_EQ(runs[id].back().value("exit", -1), 0) << runs[id].back().dump();
    EXPECT_TRUE(fs::exists(out + "/raw/" + id + ".json")) << id;
  }
  const std::string md = read_file(out + "/report.md");
  for (const char* part :
       {"Partial report", "## laplace n=640", "## Failed runs", "### laplace n=640 on 2 x 1",
        "### laplace n=1024 on 2 x 1", "exit 3; log: `logs/laplace_n640_p2t1.log`",
        "```\nlauncher: cannot place 2 processes here\n```"})
    EXPECT_NE(md.find(part), std::string::npos) << part << " missing\n" << md;
  EXPECT_NE(r.out.find("; 2 failed)"), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("2 runs failed"), std::string::npos) << r.describe();
}

// Without a terminal the study says one line per finished run (for batch logs); --strict makes a
// study whose runs failed exit 1, its report written all the same.
TEST_F(Cli, StudyPrintsALinePerRunAndStrictExitsOneWhenARunFailed) {
  const std::string out = path("study"), refuse = path("refuse");
  std::ofstream(refuse) << "refuse\n";
  seed_characterization_done(out);
  auto args = study_args(out, refusing_launcher(dir_, refuse) + " {P}", "1x1,2x1");
  args.push_back("--strict");
  const Outcome r = run_compas(args);
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_TRUE(fs::exists(out + "/report.md"));
  EXPECT_NE(r.err.find("] laplace n=640 on 1 x 1: done in "), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("] laplace n=640 on 2 x 1: ended (exit 3) in "), std::string::npos)
      << r.describe();
  EXPECT_NE(r.err.find("compas study: [4/4] "), std::string::npos) << r.describe();
  // Without a terminal every line says the time so far and about how much is left.
  EXPECT_TRUE(
      std::regex_search(r.err, std::regex(R"(\[1/4\] .* s \(elapsed \d+ s, about \d+ s left\))")))
      << r.describe();
  fs::remove(refuse);
  const Outcome fixed = run_compas(args);
  EXPECT_EQ(fixed.exit_code, 0) << "--strict with every run done\n" << fixed.describe();
}

TEST_F(Cli, StudyRerunRetriesTheFailedRuns) {
  const std::string out = path("study"), refuse = path("refuse");
  std::ofstream(refuse) << "refuse\n";
  seed_characterization_done(out);
  const auto args = study_args(out, refusing_launcher(dir_, refuse) + " {P}", "1x1,2x1");
  const Outcome first = run_compas(args);
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  for (const char* id : kRefused) {
    const auto records = records_by_id(out + "/runs.jsonl")[id];
    ASSERT_EQ(records.size(), 1u) << id << "\n" << read_file(out + "/runs.jsonl");
    ASSERT_TRUE(records[0].value("failed", false)) << records[0].dump();
  }
  fs::remove(refuse);
  const Outcome again = run_compas(args);
  ASSERT_EQ(again.exit_code, 0) << again.describe();
  auto runs = records_by_id(out + "/runs.jsonl");
  for (const char* id : kRefused) {
    ASSERT_EQ(runs[id].size(), 2u) << id << " was not run again\n"
                                   << read_file(out + "/runs.jsonl");
    EXPECT_EQ(runs[id].back().value("exit", -1), 0) << runs[id].back().dump();
    EXPECT_FALSE(runs[id].back().contains("failed")) << runs[id].back().dump();
  }
  for (const char* id : kPlaced) EXPECT_EQ(runs[id].size(), 1u) << id << " was run again";
  const std::string md = read_file(out + "/report.md");
  EXPECT_EQ(md.find("## Failed runs"), std::string::npos) << md;
  EXPECT_NE(md.find("All planned runs finished"), std::string::npos) << md;
  EXPECT_EQ(again.out.find("failed"), std::string::npos) << again.describe();
  EXPECT_EQ(again.err.find("failed"), std::string::npos) << again.describe();
}

// A launcher that starts every run with compas-run.
std::string placing_launcher(const fs::path& dir) {
  return write_script(
      dir, "launch.sh",
      std::string("p=$1; shift\nexec ") + COMPAS_RUN_EXE + " -n \"$p\" -t 1 \"$@\"\n");
}

// A 1 x 1 Laplace study whose run laplace_n640_p1t1 finished, then `damage` done to its raw
// report, then the study again: the rerun says "raw/ID.json <said>", records the run as failed
// (its reason holding `reason`), runs it again, and the report is whole JSON again. Returns the
// run's records.
template <class F>
std::vector<json> rerun_after_damage(const std::string& out, F damage, const std::string& said,
                                     const std::string& reason) {
  seed_characterization_done(out);
  const auto args = study_args(out, placing_launcher(fs::path(out).parent_path()) + " {P}", "1x1");
  const Outcome first = run_compas(args);
  EXPECT_EQ(first.exit_code, 0) << first.describe();
  const std::string id = "laplace_n640_p1t1", raw = out + "/raw/" + id + ".json";
  damage();
  const Outcome again = run_compas(args);
  EXPECT_EQ(again.exit_code, 0) << again.describe();
  EXPECT_NE(again.err.find("raw/" + id + ".json " + said), std::string::npos) << again.describe();
  const auto runs = records_by_id(out + "/runs.jsonl")[id];
  EXPECT_EQ(runs.size(), 3u) << read_file(out + "/runs.jsonl");
  if (runs.size() != 3) return runs;
  EXPECT_TRUE(runs[1].value("failed", false)) << runs[1].dump();
  EXPECT_NE(runs[1].value("reason", "").find(reason), std::string::npos) << runs[1].dump();
  EXPECT_EQ(runs[2].value("exit", -1), 0) << runs[2].dump();
  EXPECT_FALSE(json::parse(read_file(raw), nullptr, false).is_discarded());
  return runs;
}

// A raw report cut in half is not a finished run: the rerun names it, records it as failed, runs
// it again, and the report has its section.
TEST_F(Cli, StudyRerunsARunWhoseRawReportIsCutShort) {
  const std::string out = path("study"), raw = out + "/raw/laplace_n640_p1t1.json";
  const auto runs = rerun_after_damage(
      out,
      [&] {
        const std::string whole = read_file(raw);
        ASSERT_FALSE(json::parse(whole, nullptr, false).is_discarded()) << whole;
        std::ofstream(raw, std::ios::trunc) << whole.substr(0, whole.size() / 2);
      },
      "is damaged: not valid JSON", "is damaged");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_FALSE(runs[2].contains("failed")) << runs[2].dump();
  EXPECT_NE(read_file(out + "/report.md").find("## laplace n=640"), std::string::npos);
}

// A raw report that is valid JSON nested 200,000 levels deep (1.2 MB): damaged like one that does
// not parse (it passes the reader's bound on nesting), recorded as failed and run again; never a
// crash of the study.
TEST_F(Cli, StudyRerunsARunWhoseRawReportIsNestedTooDeep) {
  const std::string out = path("study"), raw = out + "/raw/laplace_n640_p1t1.json";
  const auto runs = rerun_after_damage(
      out,
      [&] {
        const int levels = 200000;
        std::string deep;
        for (int i = 0; i < levels; ++i) deep += "{\"a\":";
        deep += "1" + std::string(levels, '}');
        std::ofstream(raw, std::ios::trunc)
            << R"({"command":"run","machine":{"x":)" << deep << R"(},"results":[]})";
      },
      "is damaged: nested more than 64 levels deep", "nested more than 64 levels deep");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_FALSE(runs[2].contains("failed")) << runs[2].dump();
}

// A finished run whose raw report is gone (deleted by hand, lost with a disk) is not done: the
// rerun says so, records it as failed, runs it again, and its report is back.
TEST_F(Cli, StudyRerunsARunWhoseRawReportIsMissing) {
  const std::string out = path("study"), raw = out + "/raw/laplace_n640_p1t1.json";
  rerun_after_damage(
      out, [&] { ASSERT_TRUE(fs::remove(raw)) << raw; }, "is missing", "is missing");
}

// A link planted at raw/ID.json between the study removing a run's old report and the run writing
// its new one (here by the launcher, just before it starts the run), to a character device or to
// a FIFO with a reader: the run replaces the link with its report, a regular file, and writes
// nothing through it.
TEST_F(Cli, StudyRunReplacesALinkPlantedAtItsRawJson) {
  const std::string out = path("study"), fifo = path("fifo"), dev = path("null");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  // Without root no device can be made: the FIFO stands in for it.
  const bool have_dev = ::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
  const std::string target640 = have_dev ? dev : fifo;
  // A reader, and a writer of ours that keeps the FIFO open until the test has read it.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0) << std::strerror(errno);
  const int writer = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(writer, 0) << std::strerror(errno);
  ASSERT_GT(::fcntl(reader, F_SETPIPE_SZ, 1 << 20), 0) << std::strerror(errno);
  seed_characterization_done(out);
  const std::string launcher = write_script(
      dir_, "launch.sh",
      "p=$1; shift\nraw=; prev=\nfor a in \"$@\"; do [ \"$prev\" = --json ] && raw=$a; "
      "prev=$a; done\ncase \"$raw\" in *n640*) ln -s " +
          target640 + " \"$raw\" ;; *) ln -s " + fifo + " \"$raw\" ;; esac\nexec " +
          COMPAS_RUN_EXE + " -n \"$p\" -t 1 \"$@\"\n");
  const Outcome r = run_compas(study_args(out, launcher + " {P}", "1x1"));
  ::close(writer);
  std::string through;
  char buf[4096];
  for (ssize_t n; (n = ::read(reader, buf, sizeof buf)) > 0;) through.append(buf, n);
  ::close(reader);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(through, "") << "a run wrote its report through a link to the FIFO";
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << fifo << " was replaced";
  if (have_dev) {
    ASSERT_EQ(::lstat(dev.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << dev << " was replaced";
    EXPECT_EQ(st.st_rdev, makedev(1, 3));
  }
  auto runs = records_by_id(out + "/runs.jsonl");
  for (const std::string id : kPlaced) {
    const std::string raw = out + "/raw/" + id + ".json";
    ASSERT_EQ(::lstat(raw.c_str(), &st), 0) << raw;
    // Never read through what is there otherwise: a FIFO's open would wait for a writer.
    ASSERT_TRUE(S_ISREG(st.st_mode))
        << raw << " is not a regular file: mode " << std::oct << st.st_mode;
    EXPECT_TRUE(json::parse(read_file(raw), nullptr, false).contains("results")) << raw;
    ASSERT_EQ(runs[id].size(), 1u) << id << "\n" << read_file(out + "/runs.jsonl");
    EXPECT_FALSE(runs[id].back().contains("failed")) << runs[id].back().dump();
  }
  EXPECT_EQ(r.out.find("failed"), std::string::npos) << r.describe();
}

// A directory with files of its own that is not a study's: refused, naming it, nothing written
// or deleted in it (with --fresh or without).
TEST_F(Cli, StudyRefusesANonEmptyDirectoryThatIsNotAStudys) {
  const std::string out = path("thesis");
  fs::create_directories(out + "/plots");
  fs::create_directories(out + "/raw");
  for (const char* f : {"report.md", "study.json", "plots/figure.png", "raw/data.json"})
    std::ofstream(out + "/" + f) << "mine: " << f;
  for (const bool fresh : {false, true}) {
    auto args = study_args(out, placing_launcher(dir_) + " {P}", "1x1");
    if (fresh) args.push_back("--fresh");
    const Outcome r = run_compas(args);
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    EXPECT_NE(r.err.find("--out '" + out + "' is not a compas study directory"), std::string::npos)
        << r.describe();
    for (const std::string f : {"report.md", "study.json", "plots/figure.png", "raw/data.json"})
      EXPECT_EQ(read_file(out + "/" + f), "mine: " + f) << f;
    EXPECT_FALSE(fs::exists(out + "/.compas-study"));
    EXPECT_FALSE(fs::exists(out + "/logs"));
  }
  // --out / is refused too: test_study_dir checks it on claim_study_dir, which writes nothing
  // there even when its root rule is gone (/ is not empty and has no marker).
}

// A directory of the user's own that holds a file named runs.jsonl (an experiment tracker's log)
// beside their report.md and study.json: no study's without the marker a study writes. Refused
// with exit 2 saying what to do, with --fresh or without; nothing in it written or deleted.
TEST_F(Cli, StudyRefusesADirectoryWithARunsJsonlButNoMarker) {
  const std::string out = path("tracker");
  fs::create_directories(out);
  const std::map<std::string, std::string> mine = {
      {"runs.jsonl", "{\"id\":\"exp1\",\"loss\":0.3}\n"},
      {"report.md", "my own report\n"},
      {"study.json", "{\"mine\":true}\n"}};
  for (const auto& [f, text] : mine) std::ofstream(out + "/" + f) << text;
  for (const bool fresh : {false, true}) {
    auto args = study_args(out, placing_launcher(dir_) + " {P}", "1x1");
    if (fresh) args.push_back("--fresh");
    const Outcome r = run_compas(args);
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    EXPECT_NE(r.err.find("--out '" + out + "' holds runs.jsonl but no .compas-study marker"),
              std::string::npos)
        << r.describe();
    EXPECT_NE(r.err.find("give --out a new or empty directory"), std::string::npos) << r.describe();
    for (const auto& [f, text] : mine) EXPECT_EQ(read_file(out + "/" + f), text) << f;
    EXPECT_FALSE(fs::exists(out + "/.compas-study"));
    EXPECT_FALSE(fs::exists(out + "/raw"));
  }
}

// A study directory prepared by someone else, with links under the names the study opens: the
// study writes through none of them (a planted marker link is refused; a run's log that is a
// link, or a runs.jsonl hard-linked to another file, stops the study), and the files the links
// point at are untouched.
TEST_F(Cli, StudyOpensNoPlantedLinkInItsDirectory) {
  const std::string victim = path("victim"), absent = path("made-by-the-study");
  std::ofstream(victim) << "precious\n";
  const std::string launcher = placing_launcher(dir_) + " {P}";
  const std::string marked = path("marked");  // .compas-study, a link to a file to be made
  seed_characterization_done(marked, /*mark=*/false);
  fs::create_symlink(absent, marked + "/.compas-study");
  const Outcome r1 = run_compas(study_args(marked, launcher, "1x1"));
  EXPECT_EQ(r1.exit_code, 2) << r1.describe();
  EXPECT_NE(r1.err.find(".compas-study is a symbolic link"), std::string::npos) << r1.describe();
  EXPECT_FALSE(fs::exists(absent)) << "the study wrote its marker through a link";
  const std::string logged = path("logged");  // a run's log, a link to the victim
  seed_characterization_done(logged);
  fs::create_directories(logged + "/logs");
  fs::create_symlink(victim, logged + "/logs/laplace_n640_p1t1.log");
  const Outcome r2 = run_compas(study_args(logged, launcher, "1x1"));
  EXPECT_NE(r2.exit_code, 0) << r2.describe();
  EXPECT_NE(r2.err.find("logs/laplace_n640_p1t1.log is there and the study did not write it"),
            std::string::npos)
      << r2.describe();
  const std::string linked = path("linked");  // runs.jsonl, a hard link to the victim
  fs::create_directories(linked);
  std::ofstream(linked + "/.compas-study") << "compas study 0.0.0-test\nruns.jsonl\n";
  fs::create_hard_link(victim, linked + "/runs.jsonl");
  const Outcome r3 = run_compas(study_args(linked, launcher, "1x1"));
  EXPECT_NE(r3.exit_code, 0) << r3.describe();
  EXPECT_NE(r3.err.find("not a regular file with one link"), std::string::npos) << r3.describe();
  EXPECT_EQ(read_file(victim), "precious\n");
}

TEST_F(Cli, StudyRunTimeoutMustBeAPositiveNumberOfSeconds) {
  for (const std::string value : {"", "0", "-1", "soon"}) {
    const Outcome r =
        run_compas({"study", "--dry-run", "--out", path("s"), "--run-timeout", value});
    EXPECT_EQ(r.exit_code, 2) << "'" << value << "'\n" << r.describe();
    EXPECT_NE(r.err.find("--run-timeout"), std::string::npos) << r.describe();
    // The empty value gets the common message, with the option's expected type.
    EXPECT_NE(r.err.find(value.empty() ? "SECONDS>0" : "seconds > 0"), std::string::npos)
        << "allowed values\n"
        << r.describe();
    EXPECT_FALSE(fs::exists(path("s"))) << "'" << value << "'";
  }
}

// Under a cluster launcher a grid point beyond this host's cores is left out, and the plan says
// so; --oversubscribe keeps it, and so does compas-run here (today's one oversubscribed point).
TEST_F(Cli, StudyUnderALauncherLeavesOutOversubscribedPoints) {
  const std::string out = path("plan");
  auto plan = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"study",     "--out",   out,      "--dry-run",
                                     "--kernels", "laplace", "--grid", "1x1,1024x1024"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_compas(args);
  };
  const Outcome launched = plan({"--launcher", "mpirun -n {P}"});
  ASSERT_EQ(launched.exit_code, 0) << launched.describe();
  EXPECT_NE(launched.out.find("laplace_n640_p1t1"), std::string::npos) << launched.describe();
  EXPECT_EQ(launched.out.find("p1024t1024"), std::string::npos) << launched.describe();
  EXPECT_NE(launched.out.find("left out 1024 x 1024"), std::string::npos) << launched.describe();
  EXPECT_NE(launched.out.find("--oversubscribe"), std::string::npos) << launched.describe();
  const Outcome asked = plan({"--launcher", "mpirun -n {P}", "--oversubscribe"});
  ASSERT_EQ(asked.exit_code, 0) << asked.describe();
  EXPECT_NE(asked.out.find("laplace_n640_p1024t1024"), std::string::npos) << asked.describe();
  EXPECT_EQ(asked.out.find("left out"), std::string::npos) << asked.describe();
  const Outcome here = plan({});
  ASSERT_EQ(here.exit_code, 0) << here.describe();
  EXPECT_NE(here.out.find("laplace_n640_p1024t1024"), std::string::npos) << here.describe();
  EXPECT_FALSE(fs::exists(out)) << "a dry run created " << out;
}

}  // namespace
