// The figures of one study point (a kernel size at one P x T) from its runs' work records. Each
// run of `compas run KERNEL` records what it did ("work": units of the kernel's own kind, their
// timed seconds, the rate's amount and the byte model's bytes per unit); the runs of one point may
// do different amounts of work (--min-seconds), so a run counts by its time per unit and its
// rate, never by its total seconds. A point's figure is the median over its runs of each run's
// figure, with their min and max (decision 0007).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compas/report/report.hpp"
#include "study_plan.hpp"
#include "study_spread.hpp"

namespace compas::app {

// One run's work record, read back.
struct RunWork {
  std::string unit;  // "sweep", "multiply", "iteration", "sort"
  double units = 0, seconds = 0, rate_per_unit = 0, bytes_per_unit = 0, cpu_seconds = 0;

  double per_unit() const { return seconds / units; }                    // seconds per unit
  double rate() const { return rate_per_unit * units / seconds; }        // the rate field's
  double gbs() const { return bytes_per_unit * units / seconds / 1e9; }  // 0: no byte model
};

// The work record of a run's result, or nullopt with `why` (no record: made by an older compas;
// a field missing, not a number, not positive).
std::optional<RunWork> run_work(const report::json& result, std::string& why);

// One run's figures, each per unit of its work.
struct RunFigures {
  RunWork work;
  double compute = 0, communicate = 0, synchronize = 0;  // region seconds per unit (threads' mean)
  double cpu_per_wall = 0;  // CPU time of all processes over the timed seconds
  double comm_share = -1;   // communicate over the three regions (-1: no regions)
  bool verified = false;
};

RunFigures run_figures(const report::json& result, const RunWork& work);

// A point: its runs and the figures they give.
struct PointStats {
  const Step* step = nullptr;  // the first of its runs in the plan
  std::vector<RunFigures> runs;
  std::vector<std::string> left_out;  // runs without a usable work record, with why
  int verified = 0;
  std::string unit;              // the unit of its runs' work
  Spread time;                   // seconds per unit
  Spread rate, gbs, comm_share;  // the runs' rates, GB/s by the byte model, shares
  Spread speedup, efficiency;    // against 1 x 1 (n = 0: none)
  Spread stream;                 // the bandwidth of the kernel's matching stream on as many threads
  Spread bus_share;              // gbs / stream
  double compute = 0, communicate = 0, synchronize = 0, cpu_per_wall = 0;  // medians over runs
  double busy = 0;  // the most other processes took of the machine's CPU time in one of its runs

  int p() const { return step->procs * step->threads; }
  int count() const { return static_cast<int>(runs.size()); }
  std::vector<double> per_unit_samples() const;  // each run's seconds per unit, in run order
  std::vector<double> rate_samples() const;
  std::vector<double> units() const;  // each run's units
};

// One finished run of a point: its id and its result (its raw report's "results"[0]).
struct RunResult {
  std::string id;
  report::json result;
  double busy = 0;  // other processes' share of the machine's CPU time while it ran
};

// The point's figures from its runs' results; speedups are left to derive_speedups.
PointStats point_stats(const Step* step, const std::vector<RunResult>& results);

// Strong scaling: 1 x 1's time per unit over the point's. Weak scaling (the work grows with p):
// the scaled speedup, the point's rate over 1 x 1's. Efficiency: speedup / (P x T).
void derive_speedups(std::vector<PointStats>& points, bool weak);

}  // namespace compas::app
