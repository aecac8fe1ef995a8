// What report.md says first: the run's metadata (what the study was measured with, and when), and
// a summary per kernel size: its verdict and the answer to the porting question, which split
// P x T of the machine's cores is fastest, by how much, and whether that is beyond the noise.
#pragma once

#include <string>

#include "compas/report/report.hpp"
#include "study_plan.hpp"

namespace compas::app {

// "## Run" as Markdown: date, compas version and commit, command line, compiler and flags,
// libraries, memory, CPU frequency policy, virtual machine or not, and the study's budget.
std::string run_metadata_md(const report::json& run, const StudyArgs& a);

// study["summary"] from study["kernels"] (rows with seconds_samples) at `cores` cores, and its
// Markdown ("## Summary"): per kernel size the verdict, the fastest split of exactly `cores`
// (not oversubscribed) and its ratio over the next fastest with the 90% Mann-Whitney interval of
// their times (beyond the noise when it excludes 1).
std::string summary_md(report::json& study, int cores);

}  // namespace compas::app
