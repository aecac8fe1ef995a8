// How busy the machine was while a probe measured: the run's "machine_load" (report/run_info.hpp),
// the share of the machine's CPU time other processes used. Bandwidths and latencies measured
// beside other work come out low, and the verdicts judged against them with them: the report
// says so beside the figures.
#pragma once

#include <string>

#include "compas/report/report.hpp"

namespace compas::app {

// From 10% of the machine's CPU time on, a measurement is said to be taken on a busy machine.
constexpr double kBusyShare = 0.1;

// Other processes' share of the CPU time while run `raw` measured (0 when not recorded).
double busy_share(const report::json& raw);

// "While membw measured, other processes used 43% of the machine's CPU time (the hypervisor took
// 0%): ..." as a paragraph, or "" below kBusyShare.
std::string busy_note(const report::json& raw, const std::string& what);

// The verdict's caveat when the stream it was judged against was measured on a busy machine.
std::string busy_stream_caveat(double share);

}  // namespace compas::app
