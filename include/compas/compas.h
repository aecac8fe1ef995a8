/* compas.h: the C API of compas's porting layer (C11, usable from C++ too).
 *
 *   compas_runtime* rt;
 *   compas_init(&argc, &argv, &rt);              // joins the job, pins OpenMP's threads
 *   compas_array* u;
 *   compas_array_create(rt, COMPAS_DOUBLE, 1, (int64_t[]){1}, (int64_t[]){n + 1}, NULL, &u);
 *   double* p; int64_t lo, hi;
 *   compas_array_data(u, &p, NULL);               // p[0] is global index lo - halo
 *   compas_array_bounds(u, &lo, &hi);             // the owned part [lo, hi)
 *   compas_array_exchange(u);                     // neighbours' edges into the halos
 *   compas_allreduce(rt, &x, &x, 1, COMPAS_DOUBLE, COMPAS_MAX);
 *   compas_finalize(&rt);
 *
 * Semantics are those of the C++ layer (the headers of compas/runtime/, docs/PORTING.md): the same
 * distribution, halos, collectives and checks. Every call is made by the thread that called
 * compas_init, outside OpenMP parallel regions (funneled, like MPI_THREAD_FUNNELED), except the
 * queries (rank, bounds, data, ...), which any thread may make: a collective call from another
 * thread, compas_finalize and the destroys included, is COMPAS_ERR_STATE before it does anything.
 * Collective calls (creating and destroying arrays, groups and channels, exchanges, swaps,
 * collectives, compas_finalize) are made by every process (every member of a group) in the same
 * order.
 *
 * Errors: every call returns COMPAS_OK (0) or one of enum compas_error; nothing is thrown and
 * nothing aborts (unless the program asks for errors that end the job: compas_start,
 * compas_set_errors). compas_last_error() is the message of the last failure on the calling thread
 * (it names the call and the value at fault). A handle is checked before use: a NULL, destroyed
 * or foreign handle gives COMPAS_ERR_HANDLE (a destroyed handle whose memory a new handle of the
 * same kind has taken cannot be told from that new one). Errors of a collective's arguments that
 * the processes detect alike (shapes that differ between processes, a halo wider than a part) give
 * every process the same code and message; an error only one process sees (a NULL pointer on
 * one of them) leaves the others waiting until COMPAS_TIMEOUT gives them COMPAS_ERR_COMM.
 *
 * Handles are opaque; for the ABI, only pointers to them, int, int64_t and the plain struct
 * compas_array_options cross the boundary (a Fortran bind(C) type can mirror it). */
#ifndef COMPAS_COMPAS_H
#define COMPAS_COMPAS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COMPAS_C_API_VERSION 1

/* The return codes. */
enum compas_error {
  COMPAS_OK = 0,
  COMPAS_ERR_ARG = 1,        /* a bad argument: a value out of range, a NULL pointer, a type */
  COMPAS_ERR_COLLECTIVE = 2, /* a collective's arguments, as every process sees them: they differ
                                between processes (the call, the element type, the operator, a
                                count, a root, an array's or a channel's shape), or a halo is
                                wider than a part (1-D, 2-D and 3-D alike); every process of the
                                call gets it at once */
  COMPAS_ERR_HANDLE = 3,     /* a NULL, destroyed or wrong kind of handle */
  COMPAS_ERR_NOMEM = 4,      /* out of memory */
  COMPAS_ERR_COMM = 5,       /* communication failed: a process died, COMPAS_TIMEOUT passed (the
                                job's forming in compas_init included) */
  COMPAS_ERR_STATE = 6,      /* the wrong thread, inside a parallel region, a pending exchange, a
                                second compas_init; and every collective of the job (or of a
                                group) after one of its collectives failed on this process (a
                                dead peer, a timeout: that one returned COMPAS_ERR_COMM), whose
                                message says they are unusable and names that failure */
  COMPAS_ERR_INTERNAL = 7    /* anything else */
};

/* Element types of arrays, collectives and channels. */
enum compas_type { COMPAS_DOUBLE = 1, COMPAS_FLOAT = 2, COMPAS_INT32 = 3, COMPAS_INT64 = 4 };

/* Reduction operators. */
enum compas_op { COMPAS_SUM = 1, COMPAS_MIN = 2, COMPAS_MAX = 3, COMPAS_PROD = 4 };

/* 2-D arrays: rows over the processes, or rows and columns over a process grid. */
enum compas_decomposition { COMPAS_DECOMP_ROWS = 0, COMPAS_DECOMP_GRID = 1 };

/* A new array's contents: zeros, or untouched (first touch by the threads that compute). */
enum compas_fill { COMPAS_FILL_ZERO = 0, COMPAS_FILL_NONE = 1 };

/* How an array's local block (its halo box) lies in memory (compas_array_create_with_layout).
 * PADDED (compas_array_create's): each row padded to whole 64-byte lines with its first owned
 * element on one, rows and planes as long as the largest part's (strides from
 * compas_array_data). CONTIGUOUS: the halo box packed, row after row: the strides are exactly the
 * box's extents, as a C array T[e0][e1][e2] (or Fortran's u(e2, e1, e0)) of that box would lie.
 * 1-D blocks are contiguous either way. */
enum compas_layout { COMPAS_LAYOUT_PADDED = 0, COMPAS_LAYOUT_CONTIGUOUS = 1 };

typedef struct compas_runtime compas_runtime;
typedef struct compas_array compas_array;
typedef struct compas_exchange compas_exchange;
typedef struct compas_group compas_group;
typedef struct compas_channel compas_channel;
typedef struct compas_ghosts compas_ghosts;

/* Options of a distributed array, per dimension (entries past the array's dims are ignored).
 * compas_array_options_init gives the defaults: halo 1, not periodic, grid chosen, rows, zeros.
 * 1-D and 2-D arrays take one halo width and one periodic flag for all their dimensions (the
 * entries must agree); 3-D arrays take each. grid: processes per dimension, 0 = chosen by compas
 * (2-D: COMPAS_DECOMP_GRID only; 1-D: 0 or the number of processes). The layout is part of the
 * ABI: options added later come with new calls, not new fields. */
typedef struct compas_array_options {
  int64_t halo[3];
  int periodic[3];
  int grid[3];
  int decomposition;
  int fill;
} compas_array_options;

/* ---- errors ---- */
/* The message of the last failure on this thread ("" before any). Valid until the next failing
 * call on this thread. */
const char* compas_last_error(void);
/* "COMPAS_ERR_ARG" for COMPAS_ERR_ARG ...; "unknown" for a value outside the enum. */
const char* compas_error_name(int code);

/* ---- the runtime ---- */
/* Joins the job and pins this process's threads, OpenMP's included. compas's own flags
 * (--threads N, --bind B, --wait W, --openmp M, ...) are removed from argv and *argc updated;
 * argc and argv may both be NULL (the environment only: COMPAS_THREADS, OMP_NUM_THREADS, ...).
 * One runtime per process: a compas_init while this process's runtime is alive is
 * COMPAS_ERR_STATE and leaves *rt as it was; in a job of several processes a process joins once,
 * so a compas_init after compas_finalize (under compas-run; under mpirun / srun once MPI was
 * finalized) is COMPAS_ERR_STATE too, on every process at once (*rt NULL). Alone a process may
 * call compas_init again after compas_finalize. */
int compas_init(int* argc, char*** argv, compas_runtime** rt);
/* Collective: destroys the arrays, groups and channels still alive (newest first), then the
 * runtime; *rt becomes NULL. Like the destroys, it returns COMPAS_ERR_COMM when what it destroyed
 * could not meet the other processes (a peer that does not come within COMPAS_TIMEOUT, a dead
 * one): the runtime is gone all the same. */
int compas_finalize(compas_runtime** rt);
int compas_process(const compas_runtime* rt, int* rank);
int compas_processes(const compas_runtime* rt, int* count);
int compas_threads(const compas_runtime* rt, int* count); /* per process */
/* Returns when every process has called it. */
int compas_barrier(compas_runtime* rt);
/* Ends the whole job: prints "compas: process R: MESSAGE" and every process exits with `code`
 * (1..255). Returns only on a bad argument. rt may be NULL (before compas_init succeeded): this
 * process prints "compas: MESSAGE" and exits; a launcher ends the others. */
int compas_abort(compas_runtime* rt, int code, const char* message);
/* After a call failed: compas_abort with the failure's message (compas_last_error) and status 2
 * when it was COMPAS_ERR_ARG (bad input: a bad flag of compas_init, a value out of range), 1
 * otherwise, as compas's own programs exit. The error-check of a program:
 *   #define CHECK(call) (void)((call) == COMPAS_OK || compas_fail(rt))
 * Returns only on a bad rt. */
int compas_fail(compas_runtime* rt);

/* ---- distributed arrays ---- */
int compas_array_options_init(compas_array_options* options);
/* Collective: a `dims`-dimensional (1..3) array of `type` over the global box [lo[d], hi[d]),
 * d = 0..dims-1 (the last dimension contiguous in memory). options may be NULL (the defaults). */
int compas_array_create(compas_runtime* rt, int type, int dims, const int64_t* lo,
                        const int64_t* hi, const compas_array_options* options,
                        compas_array** array);
/* compas_array_create with the local block laid out as `layout` says: COMPAS_LAYOUT_PADDED (what
 * compas_array_create does) or COMPAS_LAYOUT_CONTIGUOUS (enum compas_layout); another value is
 * COMPAS_ERR_ARG. Every process passes the same layout (COMPAS_ERR_COLLECTIVE otherwise). */
int compas_array_create_with_layout(compas_runtime* rt, int type, int dims, const int64_t* lo,
                                    const int64_t* hi, const compas_array_options* options,
                                    int layout, compas_array** array);
/* Collective; *array becomes NULL. A pending exchange is completed first. The destroys of arrays,
 * groups and channels meet the other processes (the memory may be reused only once nobody can
 * reach it): when they cannot (COMPAS_TIMEOUT, a dead peer) the handle is destroyed all the same
 * and the call returns COMPAS_ERR_COMM naming the failure. */
int compas_array_destroy(compas_array** array);
int compas_array_type(const compas_array* array, int* type, int* dims);
/* This process's part in global indices: lo[d] <= i < hi[d] (hi exclusive), dims entries each. */
int compas_array_bounds(const compas_array* array, int64_t* lo, int64_t* hi);
/* The same with the halos: the box the local block holds (hi exclusive). */
int compas_array_halo_bounds(const compas_array* array, int64_t* lo, int64_t* hi);
/* The local block: *(T**)data receives the address of its first element, global index
 * (hlo[0], hlo[1], ...) of compas_array_halo_bounds; element (i, j, k) is at
 * (i - hlo[0]) * strides[0] + (j - hlo[1]) * strides[1] + (k - hlo[2]) * strides[2] (strides in
 * elements, dims entries, the last 1; strides may be NULL). The address changes with
 * compas_array_swap. */
int compas_array_data(const compas_array* array, void* data, int64_t* strides);
/* Collective: every halo cell whose source exists gets its neighbour's value. */
int compas_array_exchange(compas_array* array);
/* The exchange in two halves: begin sends (do not write owned cells, nor read halos, until
 * wait); wait puts the halos in place and destroys *exchange (set to NULL). */
int compas_array_begin_exchange(compas_array* array, compas_exchange** exchange);
int compas_exchange_wait(compas_exchange** exchange);
/* Pushes a begun exchange along and returns at once (MPI_Test): *done = 1 once
 * compas_exchange_wait would not block (every halo block arrived, every send complete), 0
 * otherwise. The exchange stays alive: the halos are in place only after compas_exchange_wait,
 * which must still be called (it then returns at once). */
int compas_exchange_test(compas_exchange* exchange, int* done);
/* Collective, the reverse of compas_array_exchange (finite-element assembly): every halo cell's
 * value is added into the owned cell it mirrors at the process that owns it (periodic
 * dimensions wrap; a non-periodic boundary's halo cells are ignored); halo cells keep their
 * values. COMPAS_ERR_STATE while an exchange of the array is pending. */
int compas_array_accumulate_halos(compas_array* array);
/* Collective, O(1): the two arrays (same type and dims) trade their contents and data addresses
 * (and, for arrays on a group, the group they lie on). */
int compas_array_swap(compas_array* a, compas_array* b);

/* ---- 3-D levels: partitions of the program's own, arrays on a group, aligned levels ----
 * (C++: compas::Partition3, DistArray<T, 3>(group, ...), coarsened, compas::redistribute)
 *
 *   int64_t splits[] = {0, 4, 8,  0, 8,  0, 8};      // planes cut at 4; rows, columns whole
 *   int counts[3] = {3, 2, 2};                        // boundaries per dimension
 *   compas_array_create_split(rt, NULL, COMPAS_DOUBLE, lo, hi, splits, counts, &o, layout, &u);
 *   compas_array_create_like(u, 2, NULL, &uc);        // 4^3, aligned: cut at 2
 *   compas_array_create_like(uc, 1, few, &ug);        // the same domain on a group's members
 *   compas_array_redistribute(uc, ug);                // every cell of uc into ug
 *
 * Split points: dimension d's g_d + 1 boundaries b_0 < b_1 < ... < b_g (global indices, C's
 * dimension order: planes, rows, columns) cut [lo[d], hi[d]) into parts [b_p, b_p+1), so b_0 is
 * lo[d], b_g is hi[d] and every part holds a cell. The process at grid position (p0, p1, p2)
 * holds parts p0, p1, p2; its rank (group rank for an array on a group) is (p0 g1 + p1) g2 + p2.
 * Alignment by a factor f: the coarse domain of [lo, hi) is [lo, lo + (hi - lo) / f), coarse cell
 * lo + c lies with the fine cells lo + f c .. lo + f c + f - 1 (f = 2, 1-based: coarse c with
 * fine 2c - 1 and 2c), and a fine boundary b becomes lo + (b - lo) / f, which needs b - lo to be a
 * multiple of f.
 *
 * Arrays on a group are made by every process of the job (job-wide, as every array): the members
 * pass the group, every other process a group it is not in (compas_group_split with a colour
 * < 0; another group's members are COMPAS_ERR_COLLECTIVE), and holds no cell then: compas_array_member gives 0, its bounds and
 * halo bounds are empty (lo = hi = the domain's lo) and compas_array_data's address holds no
 * element but is this array's alone (compas_array_of finds it). Only members exchange its halos.
 * A group outlives its arrays: compas_group_destroy refuses one that arrays still lie on. */
/* Collective: the 3-D array of `type` over [lo[d], hi[d]) cut at the split points `splits`, which
 * hold counts[0] + counts[1] + counts[2] values, dimension 0's first (counts[d] = g_d + 1 >= 2),
 * on the job (group NULL) or on `group`'s members (grid over group ranks), options and layout as
 * compas_array_create_with_layout's (options->grid: 0 or the partition's number of parts).
 * splits and counts both NULL: the block split over options->grid (an array on a group without
 * split points of its own). A
 * partition that does not begin at lo, end at hi or rise, whose parts do not multiply to the
 * processes (or the members), or that differs between processes: COMPAS_ERR_COLLECTIVE on every
 * process at once, naming the boundary (checked after the processes agreed, as a halo wider than
 * a part); a NULL pointer or a count below 2: COMPAS_ERR_ARG before anything collective. Cost: one agreement (the splits
 * compared), the array's window. */
int compas_array_create_split(compas_runtime* rt, compas_group* group, int type,
                              const int64_t* lo, const int64_t* hi, const int64_t* splits,
                              const int* counts, const compas_array_options* options, int layout,
                              compas_array** array);
/* Collective: a new 3-D array made from `like` (its type, halos, periodicity, fill and layout):
 * - group NULL: on like's processes, aligned with it, coarsened by `factor` (>= 1; 1: the same
 *   domain and partition), compas_array_create_like(u, 2, NULL, &uc) the next coarser level of a
 *   multigrid hierarchy; COMPAS_ERR_ARG naming the factor, the dimension and the boundary that is
 *   not on a multiple of it from the domain's first index (the domain's end included);
 * - group given: like's domain coarsened by `factor` (hi - lo a multiple of it), on the group's
 *   members, cut by the block split over the grid compas chooses for them: aligned with nothing,
 *   compas_array_redistribute moves a level onto it and back.
 * Cost: an agreement and the new array's window; nothing is copied. */
int compas_array_create_like(const compas_array* like, int64_t factor, compas_group* group,
                             compas_array** array);
/* Collective over the whole job: every owned cell of `to` gets the value of that cell in `from`
 * (two 3-D arrays of one domain and type, any partitions, on the job or on groups); halo cells of
 * `to` are left as they were. Every process calls it, member of either array or not, before
 * anything moves: arrays of another type or not 3-D, COMPAS_ERR_ARG; of different domains, or
 * one with an exchange pending, COMPAS_ERR_COLLECTIVE on every process naming them. Cost: an agreement, then one alltoallv of the cells that
 * change process (memory: a send buffer of at most this process's part of from, a receive buffer
 * of at most its part of to). */
int compas_array_redistribute(compas_array* from, compas_array* to);
/* The processes per dimension of a 3-D array's grid (over its members), C's order; *member 1 when
 * this process holds a part of it, 0 for an array on a group it is not in. */
int compas_array_grid(const compas_array* array, int* grid);
int compas_array_member(const compas_array* array, int* member);

/* ---- the short form: errors that end the job, arrays known by their data's address ----
 *
 *   compas_runtime* rt = compas_start(&argc, &argv);  // a failing call now ends the job
 *   double* u = compas_alloc(rt, COMPAS_DOUBLE, 1, (int64_t[]){1}, (int64_t[]){n + 1}, NULL);
 *   int64_t lo, hi;
 *   compas_bounds(u, &lo, &hi);  // u[0] is global index lo - halo, as compas_array_data's pointer
 *   compas_exchange_halos(u);    // u may have been swapped with another array's pointer
 *   if (compas_rank(rt) == 0) ...
 *   compas_finalize(&rt);        // frees what compas_alloc gave (or compas_free(u) before)
 *
 * Error modes (for the whole process, like MPI's error handlers): with COMPAS_ERRORS_RETURN
 * (compas_init's) a call returns its code; with COMPAS_ERRORS_FATAL (compas_start's) a failing call
 * does what compas_fail does: prints "compas: process R: MESSAGE" and ends the job with status 2
 * for bad input (COMPAS_ERR_ARG), 1 otherwise; it does not return. */
enum compas_errors { COMPAS_ERRORS_RETURN = 0, COMPAS_ERRORS_FATAL = 1 };
/* compas_init with COMPAS_ERRORS_FATAL: never returns NULL (a bad flag ends the process with
 * "compas: compas_start: ..." and status 2). */
compas_runtime* compas_start(int* argc, char*** argv);
int compas_set_errors(compas_runtime* rt, int mode);
/* This process's rank and the job's number of processes; -1 when rt is not a live runtime. */
int compas_rank(const compas_runtime* rt);
int compas_size(const compas_runtime* rt);
/* Collective: compas_array_create, returning the array's local block (compas_array_data's
 * address: the first element of the halo box), or NULL on failure. The calls below find the array
 * by that address (the current one: compas_array_swap changes it), so the program may copy and
 * swap its pointers. */
void* compas_alloc(compas_runtime* rt, int type, int dims, const int64_t* lo, const int64_t* hi,
                   const compas_array_options* options);
/* The array whose local block starts at data; NULL (COMPAS_ERR_HANDLE) when there is none. */
compas_array* compas_array_of(const void* data);
/* compas_array_bounds, compas_array_exchange, compas_array_accumulate_halos and
 * compas_array_destroy of compas_array_of(data). */
int compas_bounds(const void* data, int64_t* lo, int64_t* hi);
int compas_exchange_halos(void* data);
int compas_accumulate_halos(void* data);
int compas_free(void* data);

/* ---- collectives over the job (funneled; every process the same calls) ----
 * in and out hold `count` elements of `type`; out may be in. Each call checks its arguments, then
 * the processes agree on the call, the type, the operator and the count (a count of 0 takes part
 * like any other), and only then is anything written into a buffer: processes that differ all get
 * COMPAS_ERR_COLLECTIVE at once, and a call refused by its checks or its agreement leaves the
 * caller's buffers as they were. Every call of this header that takes a count of elements (these,
 * the group forms, the channels' send and receive) refuses one below 0, or of more bytes than this
 * host's memory and swap (count * element size overflowing included), with COMPAS_ERR_ARG naming
 * the count, before anything moves. */
int compas_allreduce(compas_runtime* rt, const void* in, void* out, int64_t count, int type,
                     int op);
/* `count` elements of process `root`'s data into every process's data. */
int compas_broadcast(compas_runtime* rt, void* data, int64_t count, int type, int root);
/* Element by element, op over the values of the processes before this one in rank order; process
 * 0 gets op's identity (0 for a sum, 1 for a product, the type's largest for min, lowest for max).
 */
int compas_exscan(compas_runtime* rt, const void* in, void* out, int64_t count, int type, int op);

/* ---- process groups (MPI_Comm_split) ----
 * The collectives come in two families on purpose: compas_X over the whole job and
 * compas_group_X over a group's members, the same call with the same checks, roots and ranks in
 * group numbering (C has no overloads; both are C++'s one compas::X(processes, ...), which takes
 * the Runtime or a Group). The Fortran module folds them into one generic name with an optional
 * group argument. */
/* Collective over the job: the processes passing one colour form a group ordered by key, then by
 * rank; a colour < 0 puts this process in no group (rank -1, size 0; its collectives fail with
 * COMPAS_ERR_STATE). */
int compas_group_split(compas_runtime* rt, int colour, int key, compas_group** group);
/* Collective over the job; COMPAS_ERR_STATE (on every process alike) while arrays lie on it. */
int compas_group_destroy(compas_group** group);
int compas_group_rank(const compas_group* group, int* rank);
int compas_group_size(const compas_group* group, int* size);
int compas_group_barrier(compas_group* group);
int compas_group_allreduce(compas_group* group, const void* in, void* out, int64_t count, int type,
                           int op);
int compas_group_broadcast(compas_group* group, void* data, int64_t count, int type, int root);
int compas_group_exscan(compas_group* group, const void* in, void* out, int64_t count, int type,
                        int op);

/* ---- point-to-point channels ---- */
/* Collective: ordered messages of up to max_count elements of `type` between any two processes;
 * a sender runs up to `capacity` messages ahead of its receiver. */
int compas_channel_create(compas_runtime* rt, int type, int64_t capacity, int64_t max_count,
                          compas_channel** channel);
int compas_channel_destroy(compas_channel** channel);
int compas_channel_send(compas_channel* channel, int to, const void* data, int64_t count);
/* The next message from `from` into data (room elements); *count receives its length. */
int compas_channel_recv(compas_channel* channel, int from, void* data, int64_t room,
                        int64_t* count);

/* ---- the block split (C++: compas::block_of) ---- */
/* Block `part` of [lo, hi) cut in `parts` near-equal contiguous blocks, the first (hi - lo) % parts
 * of them one index longer: [*block_lo, *block_hi). It is the split compas_array_create gives a
 * 1-D array's range over the processes, for a program's own ranges (its rows for
 * compas_ghosts_create, planes of a grid). Not collective, no runtime needed: any thread, before
 * compas_init too. Errors (COMPAS_ERR_ARG, the value named; under compas_start's errors, the end
 * of the job): hi < lo, parts < 1, part outside [0, parts), a range of more than 2^63 - 1 indices,
 * a NULL pointer. Cost: O(1). */
int compas_block_of(int64_t lo, int64_t hi, int64_t parts, int64_t part, int64_t* block_lo,
                    int64_t* block_hi);

/* ---- ghosted vectors (irregular codes; C++: compas::Partition, compas::GhostPlan) ---- */
/* A vector cut over the processes in rank order, this process owning n_local >= 1 entries
 * (global indices first .. first + n_local - 1, first the sum of the lower ranks' counts), stored
 * as [owned | ghosts]: n_local owned entries, then copies of other entries, the ghosts.
 * Collective: the plan of this process's ghosts, `count` global indices of index_type
 * (COMPAS_INT32 or COMPAS_INT64) at `ghosts`, any order (duplicates are separate ghosts; an own
 * index is a ghost filled by a local copy). One allgather of the counts, then two rounds; setup
 * linear in the list, memory in proportion to the ghosts. An index outside [0, sum of the
 * counts), a count below 1, or another index_type on any process: the same error everywhere. */
int compas_ghosts_create(compas_runtime* rt, int64_t n_local, const void* ghosts, int64_t count,
                         int index_type, compas_ghosts** plan);
/* Collective: the plan of a CSR's column list (`count` global columns of index_type at `cols`):
 * the ghosts are its off-process columns, distinct and sorted, and `cols` is rewritten in place
 * to local positions (an owned column c to c - first, another to n_local + its ghost number);
 * unchanged on an error. */
int compas_ghosts_create_columns(compas_runtime* rt, int64_t n_local, void* cols, int64_t count,
                                 int index_type, compas_ghosts** plan);
/* Collective once the plan was used (its staging windows meet the other processes). */
int compas_ghosts_destroy(compas_ghosts** plan);
/* This process's first global index, owned entries and ghosts (any pointer may be NULL). */
int compas_ghosts_sizes(const compas_ghosts* plan, int64_t* first, int64_t* n_owned,
                        int64_t* n_ghosts);
/* Collective: v holds count = n_owned + n_ghosts elements of `type`; every ghost gets its owner's
 * entry: one message per process that owns some of this process's ghosts, nothing at one
 * process. A count or type that differs from what the plan and the other processes say: the
 * same COMPAS_ERR_COLLECTIVE everywhere, before anything moves. */
int compas_ghosts_update(compas_ghosts* plan, void* v, int64_t count, int type);
/* Collective, the reverse: every ghost's value added into its owner's entry, in source rank
 * order (the same bits every run); the ghosts keep their values. */
int compas_ghosts_accumulate(compas_ghosts* plan, void* v, int64_t count, int type);

#ifdef __cplusplus
}
#endif

#endif /* COMPAS_COMPAS_H */
