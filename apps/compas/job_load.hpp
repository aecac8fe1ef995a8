// The machine load a multi-process command reports: its other processes on process 0's host are
// the job's, not "other processes" that made the machine busy (report/run_info.hpp).
#pragma once

namespace compas::comm {
class Bootstrap;
}

namespace compas::app {

// Collective over the bootstrap's processes: process 0 learns how much CPU time the job's other
// processes on its host have used, and its report's machine_load counts it as the job's.
void count_job_cpu(comm::Bootstrap& boot);

}  // namespace compas::app
