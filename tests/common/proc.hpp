// Test helpers for jobs of real processes, built once into the library compas_test_proc (link it):
// a child process with its output captured (Proc, process.hpp), a job whose ranks a test starts by
// hand with the variables a launcher would set (ManualJob, manual_job.hpp), the process table and
// the processes of a launcher's job (process_table.hpp: JobPids), the shared memory a job left
// behind (shm_snapshot.hpp: ShmSnapshot), and a test fixture with its own directory (temp_dir.hpp).
#pragma once

#include "manual_job.hpp"
#include "process.hpp"
#include "process_table.hpp"
#include "shm_snapshot.hpp"
#include "temp_dir.hpp"
