// Faults and delays the tests (and `compas run ... --inject-fault`) inject into a kernel's job: a
// public header for tests and the compas CLI, not part of the kernels' interface (a kernel's
// parameters point at one, or at none) and free to change.
#pragma once

namespace compas::kernels::detail {

struct TestHooks {
  // Perturb one value on process 0 so that verification must fail: laplace an interior point
  // after the sweeps, gemm an element of C, cg a matrix value before solving, sort a key of the
  // output after the last sort.
  bool inject_fault = false;
  // laplace, dynamic schedule: this thread (of every process) starts each sweep's rows only after
  // a pause, so that the others take its rows.
  int slow_thread = -1;
  // cg: process 0 sleeps this long between consecutive puts of each exchange, so the others see
  // its data arrive late and out of step with faster peers.
  int put_stagger_us = 0;
  // cg: every thread of every process spends this much CPU time (spinning) after the untimed
  // iteration, before the timed ones: work that seconds, the regions and the CPU time must not
  // count.
  int untimed_cpu_ms = 0;
};

// The hooks a kernel's parameters point at, or none (nothing injected).
inline const TestHooks& hooks_of(const TestHooks* hooks) {
  static const TestHooks none;
  return hooks ? *hooks : none;
}

}  // namespace compas::kernels::detail
