// compas study's plan: what it runs (the characterize steps, then every kernel size on every
// P x T of the grid) and how (this program, under compas-run or the user's launcher).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compas/threads/topology.hpp"

namespace compas::app {

struct StudyArgs {
  std::string out = "compas-study";
  std::string kernels = "laplace,gemm,cg,sort";
  std::string grid = "auto";
  std::string launcher;
  double budget = 10;              // minutes
  double run_timeout_s = 0;        // 0: derived from each run's estimate
  int repeats = 0;                 // runs of every kernel point; 0: by the budget (3 at least)
  std::string scaling = "strong";  // strong: sizes fixed; weak: size per core fixed
  std::string stream_size;  // --stream-size: the memory probes' working set ("": STREAM's rule)
  bool oversubscribe = false;
  bool no_paper = false;  // --no-paper: COMPaS 1998's figures left out of the report
  bool strict = false;    // exit 1 when a run failed
  bool fresh = false;
  bool dry_run = false;
  bool quiet = false;
  bool vary_work = false;  // hidden --vary-work: run r of a point does r times the work
};

struct Step {
  Step() = default;
  Step(std::string i, std::string t, std::string k, std::vector<std::string> a, double e)
      : id(std::move(i)),
        title(std::move(t)),
        kind(std::move(k)),
        argv(std::move(a)),
        estimate_s(e) {}
  std::string id;     // file-name safe, unique
  std::string title;  // for progress and the report
  std::string kind;   // "characterize" or "kernel"
  std::vector<std::string> argv;
  double estimate_s = 1;
  double timeout_s = 0;
  // kernel runs
  std::string kernel;
  int procs = 1, threads = 1;
  bool oversubscribed = false;
  std::string size;    // e.g. "n=640"
  std::string series;  // the points compared with each other: "laplace n=640", or under weak
                       // scaling "laplace n=1024*sqrt(p) (weak)"
  std::string point;   // the kernel point this run repeats: its first repetition's id
  int rep = 1;         // which repetition (1-based) of how many
  int reps = 1;
};

// How many times the study runs each kernel point: --repeats, or 3 (5 from a 20-minute budget,
// 7 from an hour).
int study_repeats(const StudyArgs& a);

// --stream-size in bytes, 0 when not given; std::invalid_argument unless a whole number of MiB.
std::uint64_t study_stream_size(const StudyArgs& a);

// The plan, in the order it runs. Throws std::invalid_argument on a bad --grid or --kernels.
std::vector<Step> make_plan(const StudyArgs& a, const threads::Topology& topo);

// Throws std::invalid_argument unless --scaling is strong or weak.
void check_scaling(const std::string& scaling);

// The grid points and kernels the plan leaves out, each with why.
std::vector<std::string> left_out_points(const StudyArgs& a, int cores);

// Throws std::invalid_argument when a --launcher template cannot place the process count.
void check_launcher(const std::string& launcher);

int host_cores(const threads::Topology& topo);

// The kernels a study can sweep ("laplace, gemm, ...") and the record field of each one's rate.
std::string study_kernel_names();
std::string rate_field(const std::string& kernel);

}  // namespace compas::app
