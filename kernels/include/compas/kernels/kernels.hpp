// kernels: Laplace (Jacobi), GEMM, NAS CG and radix sort, each with setup, run, verification
// against an outside reference, and a flop/byte model, on any processes x threads job.
// This layer is being built; see docs/ARCHITECTURE.md for its planned contents.
#pragma once
