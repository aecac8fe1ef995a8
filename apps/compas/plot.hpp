// --plot DIR: write the report's JSON into DIR and turn it into PNG plots with
// plot/plot.py (python3-matplotlib). When Python or matplotlib is missing, say how to
// get them and carry on: plots are a convenience, the data is already written.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "compas/report/report.hpp"

namespace compas::app {

void add_plot_flag(CLI::App& cmd, std::string& dir);

// Checks before measuring that DIR exists as a writable directory or can be created.
// Throws std::invalid_argument naming the flag.
void check_plot_dir(const std::string& dir);

// Writes DIR/<command>.json and runs plot.py on it. Returns true when plots were written.
bool plot_report(const report::Report& report, const std::string& dir);

// A python3 that has matplotlib (the one on PATH, else /usr/bin/python3), or "" when none has.
std::string plot_python();

// Path of plot.py: the installed copy (<bindir>/../share/compas/plot.py) or the source tree's.
std::string plot_script_path();

}  // namespace compas::app
