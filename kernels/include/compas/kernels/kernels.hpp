// kernels: Laplace (Jacobi), GEMM, NAS CG and radix sort, each with setup, run, verification
// against an outside reference, and a flop/byte model, on any processes x threads job.
// The layer's headers: laplace.hpp, gemm_job.hpp (gemm_local.hpp: the local multiply), cg.hpp and
// cg_job.hpp, sort.hpp (the local sort) and sort_job.hpp; docs/decisions/0012-kernel-schedules.md
// describes how they compute and communicate, 0006-kernel-verification.md how they are checked.
// test_hooks.hpp (what the tests set to reach a kernel's fallbacks) is not included here.
#pragma once

#include "compas/kernels/cg.hpp"
#include "compas/kernels/cg_job.hpp"
#include "compas/kernels/gemm_job.hpp"
#include "compas/kernels/gemm_local.hpp"
#include "compas/kernels/laplace.hpp"
#include "compas/kernels/sort.hpp"
#include "compas/kernels/sort_job.hpp"
