// The kernels compas runs, as a table. Each kernel's run_<name>.cpp defines its KernelSpec (its
// `compas run` subcommand, the record field of its rate, the stream of the same traffic and its
// sizes in the study) and kernel_table.cpp lists it once; `compas run`, `compas run --list`, the
// study's plan and report, and the tests that go through `compas run --list` all read the table.
// CONTRIBUTING.md, "Add a kernel", is the recipe.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace compas::app {

// A kernel's subcommand under `compas run` and the function that runs it once parsed.
struct RunKernel {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// One size of a kernel in the study: its label ("n=640"), its `compas run` flags and an estimate
// of its seconds on 1 process x 1 thread (for the plan's time budget and timeouts).
struct StudySize {
  std::string label;
  std::vector<std::string> args;
  double seconds_1x1 = 0;
};

// A weak-scaling series: the size on p = P x T cores that keeps the data per core of 1 x 1.
struct WeakSeries {
  std::string label;  // "n=1024*sqrt(p)"
  std::function<StudySize(int p)> at;
};

struct KernelSpec {
  std::string name;        // the subcommand of `compas run` and a name for --kernels
  std::string rate_field;  // the field of its JSON record holding its rate ("mops")
  std::string stream;      // the `compas membw` stream of the same traffic: "load" or "copy"
  RunKernel (*add_run)(CLI::App& run) = nullptr;  // adds its subcommand to `compas run`
  // Its sizes in the study at the plan's scale (budget / 10, 0.02 to 100), smallest first.
  std::vector<StudySize> (*study_sizes)(double scale) = nullptr;
  // Its weak-scaling series at that scale; null when its sizes are fixed (NPB's classes).
  WeakSeries (*weak_series)(double scale) = nullptr;
};

const std::vector<KernelSpec>& kernel_table();
// The kernel of that name, or nullptr.
const KernelSpec* find_kernel(std::string_view name);
// "laplace, gemm, cg, sort": for messages that list what is allowed.
std::string kernel_names();
// n0 * sqrt(p), rounded: a side that keeps n^2 per core when p cores share the work.
std::string scaled_by_sqrt(int n0, int p);

}  // namespace compas::app
