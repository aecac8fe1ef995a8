! compas_interfaces.f90: every procedure of the module compas (use compas), as source to read.
! Installed beside compas.mod (include/compas/fortran/<compiler>/), since the .mod file is
! compiler-specific and not meant for reading. Programs `use compas`, not this module: its
! abstract interfaces only mirror the module's procedures (a test, fortran.interfaces, checks
! each against the module: the same arguments, types, ranks, intents and optional ones).
!
! Conventions of every call:
!  - ierr (optional, intent(out)): present, it receives COMPAS_OK (0) or a code (COMPAS_ERR_ARG,
!    COMPAS_ERR_COLLECTIVE, COMPAS_ERR_HANDLE, COMPAS_ERR_NOMEM, COMPAS_ERR_COMM,
!    COMPAS_ERR_STATE, COMPAS_ERR_INTERNAL) and compas_error_message() the message; absent, a
!    failure ends the job: each failing process prints "compas: process R: MESSAGE" and the job
!    exits with status 2 for COMPAS_ERR_ARG (bad input), 1 otherwise.
!  - Collective calls (marked so) are made by every process (of the group) in the same order,
!    funneled: by the thread that called compas_init, outside OpenMP parallel regions.
!  - A distributed array u is a Fortran pointer with the program's global bounds, halos
!    included: u(lo(1)-h:hi(1)+h, lo(2)-h:hi(2)+h, ...). Its memory is contiguous (is_contiguous(u)
!    is .true.): the halo box packed, dimension 1 fastest, strides exactly the box's extents; with
!    padded=.true. dimension 1 is padded to whole 64-byte lines instead (then pass u only to
!    assumed-shape dummies: an explicit-shape one gets a temporary copy).
!  - The calls that take u find the array by the address of the first element they are given:
!    the pointer compas_create gave (or a copy of it, or a pointer swapped with another), or,
!    except for compas_swap and compas_destroy, any contiguous piece of its memory: what an
!    explicit-shape or assumed-size dummy of an F77-style routine receives (u(0:m1+1, 0:m2+1),
!    u(m1+2, m2+2), u(0:m1+1, 0:*)).
!
! Constants: COMPAS_OK and the error codes above; the reduction operators COMPAS_SUM,
! COMPAS_MIN, COMPAS_MAX, COMPAS_PROD. Types: compas_exchange_handle (a pending exchange),
! compas_group (a group of processes), compas_ghosts (a plan of ghosted vectors).
module compas_interfaces
  use compas, only: compas_exchange_handle, compas_group, compas_ghosts
  implicit none
  private

  public :: compas_init, compas_finalize, compas_rank, compas_processes, compas_threads, &
            compas_abort, compas_argument_count, compas_get_argument, compas_error_message, &
            compas_create, compas_bounds, compas_exchange, compas_begin_exchange, compas_wait, &
            compas_test, compas_accumulate_halos, compas_swap, compas_destroy, compas_allreduce, &
            compas_broadcast, compas_exscan, compas_barrier, compas_group_split, &
            compas_group_destroy, compas_group_rank, compas_group_size, compas_create_like, &
            compas_redistribute, compas_grid, compas_member, compas_ghosts_create, &
            compas_ghosts_create_columns, compas_ghosts_sizes, compas_ghosts_update, &
            compas_ghosts_accumulate, compas_ghosts_destroy, compas_block_of

  abstract interface

    ! ---- the job ----

    ! Collective: joins the job and pins this process's threads, OpenMP's included. compas's own
    ! flags (--threads N, --bind B, ...) are taken from the command line; the rest are the
    ! program's (compas_argument_count, compas_get_argument). A second call while the job is
    ! alive, or after compas_finalize in a job of several processes: COMPAS_ERR_STATE.
    subroutine compas_init(ierr)
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective: destroys the arrays and groups still alive, then leaves the job.
    subroutine compas_finalize(ierr)
      integer, intent(out), optional :: ierr
    end subroutine

    ! This process's rank, 0 .. compas_processes() - 1; -1 on failure (before compas_init).
    integer function compas_rank(ierr)
      integer, intent(out), optional :: ierr
    end function

    ! The job's number of processes; -1 on failure.
    integer function compas_processes(ierr)
      integer, intent(out), optional :: ierr
    end function

    ! Threads per process (OpenMP's, pinned by compas_init); -1 on failure.
    integer function compas_threads(ierr)
      integer, intent(out), optional :: ierr
    end function

    ! Ends the whole job: prints "compas: process R: MESSAGE" and every process exits with
    ! `code` (1..255). Returns only on a bad code.
    subroutine compas_abort(code, message, ierr)
      integer, intent(in) :: code
      character(*), intent(in) :: message
      integer, intent(out), optional :: ierr
    end subroutine

    ! The number of the program's arguments (compas's flags taken out).
    integer function compas_argument_count()
    end function

    ! The program's argument i (1 .. compas_argument_count()), as get_command_argument gives it:
    ! value (blank-padded or truncated), length, status (0; -1 truncated; 1 no such argument).
    subroutine compas_get_argument(i, value, length, status)
      integer, intent(in) :: i
      character(*), intent(out), optional :: value
      integer, intent(out), optional :: length, status
    end subroutine

    ! The message of the last failure of a call made with ierr ("" before any).
    function compas_error_message() result(text)
      character(:), allocatable :: text
    end function

    ! ---- distributed arrays ----

    ! Collective (generic): u becomes this process's part of an array over the global box
    ! lo(d) .. hi(d) (inclusive, any lower bound), halos included, with the global bounds.
    !   u            pointer of real(8), real(4), integer(4) or integer(8), rank 1 to 3 (shown:
    !                real(8), rank 2); nullified first, associated on success
    !   lo, hi       one entry per dimension
    !   halo         cells on each side: one entry for every dimension or one per dimension (1-D
    !                and 2-D: one width for all); default 1
    !   periodic     per dimension or one for all (1-D and 2-D: one flag for all); default .false.
    !   grid         processes per dimension, 0 chosen (absent: a 2-D array is cut along its last
    !                dimension only)
    !   first_touch  .true.: no zero fill, the threads that compute touch the memory first
    !   padded       .true.: dimension 1 padded to whole 64-byte lines (not contiguous: pass u to
    !                assumed-shape dummies only); default .false., contiguous
    !   split1, split2, split3  (3-D, all three) the split points of each dimension: the first
    !                index of every part, then hi(d) + 1 (parts of [1, 5, 9] over 1..8: 1..4 and
    !                5..8); the process at grid position (p1, p2, p3) (from 0) holds part p1 of
    !                dimension 1 ..., rank p1 + g1 (p2 + g2 p3). A first or last split point other
    !                than lo(d), hi(d) + 1: COMPAS_ERR_ARG naming it; points that do not rise, or
    !                parts that do not multiply to the processes: COMPAS_ERR_COLLECTIVE naming the
    !                boundary (in C's order: planes are dimension 3)
    !   group        (3-D) the array lies on the group's members (grid over group ranks; the
    !                block split unless split points are given). Every process of the job makes
    !                it, the others passing a group they are not in (compas_group_split with a
    !                colour < 0): they hold no cell (u empty, compas_member .false.)
    subroutine compas_create(u, lo, hi, halo, periodic, grid, first_touch, ierr, padded, split1, &
                             split2, split3, group)
      import :: compas_group
      real(8), pointer, intent(inout) :: u(:, :)
      integer, intent(in) :: lo(2), hi(2)
      integer, intent(in), optional :: halo(:), grid(:)
      logical, intent(in), optional :: periodic(:), first_touch
      integer, intent(out), optional :: ierr
      logical, intent(in), optional :: padded
      integer, intent(in), optional :: split1(:), split2(:), split3(:)
      type(compas_group), intent(in), optional :: group
    end subroutine

    ! Collective (compas_create's second form, generic over the four types, rank 3: call
    ! compas_create(u, like=v [, coarsen, group, ierr])): u becomes a new array made from v (its
    ! type, halos, periodicity, fill and layout; v the whole pointer compas_create gave).
    !   coarsen  the factor (default 1). Without group: v's domain coarsened (1..n to 1..n/f for
    !            lower bound 1), aligned with v on v's processes: coarse cell c with the fine cells
    !            f(c-1)+1 .. fc, so for f = 2 coarse c over fine 2c-1 and 2c, and restriction and
    !            prolongation read one process's cells and its halos. A split point of v that is
    !            not a multiple of f from lo: COMPAS_ERR_ARG naming it; coarsen < 1 too
    !   group    u lies on the group's members with v's domain coarsened by f (f dividing every
    !            extent), the block split over them: not aligned with v; compas_redistribute
    !            moves a level onto it and back
    subroutine compas_create_like(u, like, coarsen, group, ierr)
      import :: compas_group
      real(8), pointer, intent(inout) :: u(:, :, :)
      real(8), pointer, intent(in) :: like(:, :, :)
      integer, intent(in), optional :: coarsen
      type(compas_group), intent(in), optional :: group
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective over the whole job: every owned cell of `to` gets its value in `from`, two 3-D
    ! arrays of one domain and type over any partitions, on the job or on groups (a level onto a
    ! group and back: one call each). Every process calls it, holding cells of either or neither
    ! (a non-member passes its empty pointer); halo cells of `to` are left as they were. Arrays
    ! of two domains, or an exchange pending: COMPAS_ERR_COLLECTIVE naming them; of two types:
    ! COMPAS_ERR_ARG. from and to as the calls take u (above).
    subroutine compas_redistribute(from, to, ierr)
      type(*), dimension(..), target, intent(in) :: from
      type(*), dimension(..), target, intent(inout) :: to
      integer, intent(out), optional :: ierr
    end subroutine

    ! The processes per dimension of a 3-D array's grid (over its members); not collective.
    subroutine compas_grid(u, grid, ierr)
      type(*), dimension(..), target, intent(in) :: u
      integer, intent(out) :: grid(3)
      integer, intent(out), optional :: ierr
    end subroutine

    ! Whether this process holds a part of u: .false. only for an array on a group it is not in;
    ! not collective.
    logical function compas_member(u, ierr)
      type(*), dimension(..), target, intent(in) :: u
      integer, intent(out), optional :: ierr
    end function

    ! Block `part` (0 .. parts - 1) of lo..hi (inclusive) cut in `parts`: block_lo..block_hi,
    ! inclusive, empty (block_hi = block_lo - 1) when the range has fewer cells than parts. The
    ! split of every array's dimension over its processes: n = hi - lo + 1 cells, the first
    ! mod(n, parts) blocks one cell longer, so block k starts at lo + k*(n/parts) + min(k,
    ! mod(n, parts)). For a program's own ranges (a CSR's rows, a list of planes). Not
    ! collective, no job needed (before compas_init too). hi < lo - 1, parts < 1, a part outside
    ! 0 .. parts - 1, lo = -huge(0) - 1 or hi = huge(0) (an empty block's bounds would not fit):
    ! COMPAS_ERR_ARG naming the value and what is allowed, block_lo = 1 and block_hi = 0.
    subroutine compas_block_of(lo, hi, parts, part, block_lo, block_hi, ierr)
      integer, intent(in) :: lo, hi, parts, part
      integer, intent(out) :: block_lo, block_hi
      integer, intent(out), optional :: ierr
    end subroutine

    ! This process's part of u: lo(d) <= i <= hi(d), inclusive, per dimension (size(lo) and
    ! size(hi) at least rank(u)); u spans lo(d) - halo .. hi(d) + halo. u as the calls take it
    ! (above); not collective.
    subroutine compas_bounds(u, lo, hi, ierr)
      type(*), dimension(..), target, intent(in) :: u
      integer, intent(out) :: lo(:), hi(:)
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective: every halo cell of u whose source exists gets its neighbour's value (periodic
    ! dimensions wrap; halo cells past a non-periodic boundary keep theirs). u's halos are
    ! written: intent(inout).
    subroutine compas_exchange(u, ierr)
      type(*), dimension(..), target, intent(inout) :: u
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective: the exchange's first half; do not write owned cells nor read halos until
    ! compas_wait(exchange). u's halos are written by then: intent(inout).
    subroutine compas_begin_exchange(u, exchange, ierr)
      import :: compas_exchange_handle
      type(*), dimension(..), target, intent(inout) :: u
      type(compas_exchange_handle), intent(out) :: exchange
      integer, intent(out), optional :: ierr
    end subroutine

    ! The exchange's second half: the halos in place; exchange is finished.
    subroutine compas_wait(exchange, ierr)
      import :: compas_exchange_handle
      type(compas_exchange_handle), intent(inout) :: exchange
      integer, intent(out), optional :: ierr
    end subroutine

    ! Pushes a begun exchange along and returns at once: done is .true. once compas_wait would
    ! not block. compas_wait must still be called.
    subroutine compas_test(exchange, done, ierr)
      import :: compas_exchange_handle
      type(compas_exchange_handle), intent(in) :: exchange
      logical, intent(out) :: done
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective, the reverse of compas_exchange: every halo cell's value is added into the
    ! owned cell it mirrors at the process that owns it (periodic dimensions wrap; halo cells
    ! past a non-periodic boundary are ignored); halo cells keep their values. intent(inout).
    subroutine compas_accumulate_halos(u, ierr)
      type(*), dimension(..), target, intent(inout) :: u
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective (generic, as compas_create's u): the arrays trade contents, and both pointers
    ! are re-pointed. u and v are the whole pointers compas_create gave.
    subroutine compas_swap(u, v, ierr)
      real(8), pointer, intent(inout) :: u(:, :), v(:, :)
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective (generic, as compas_create's u): frees the array and nullifies u, the whole
    ! pointer compas_create gave.
    subroutine compas_destroy(u, ierr)
      real(8), pointer, intent(inout) :: u(:, :)
      integer, intent(out), optional :: ierr
    end subroutine

    ! ---- collectives (in place; group=g: over the group's members) ----

    ! Collective (generic): x, a scalar or a contiguous array of any rank of real(8), real(4),
    ! integer(4) or integer(8) (shown: real(8)), becomes op over every process's x, element by
    ! element; op COMPAS_SUM, COMPAS_MIN, COMPAS_MAX or COMPAS_PROD. An assumed-size x(*) has
    ! no size: the call refuses it (COMPAS_ERR_ARG), asking for a section x(1:n).
    subroutine compas_allreduce(x, op, group, ierr)
      import :: compas_group
      real(8), dimension(..), target, intent(inout) :: x
      integer, intent(in) :: op
      type(compas_group), intent(in), optional :: group
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective (generic, as compas_allreduce's x): process root's x into every process's x.
    subroutine compas_broadcast(x, root, group, ierr)
      import :: compas_group
      real(8), dimension(..), target, intent(inout) :: x
      integer, intent(in) :: root
      type(compas_group), intent(in), optional :: group
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective (generic, as compas_allreduce's x): op over the x of the processes before this
    ! one in rank order; process 0 gets op's identity.
    subroutine compas_exscan(x, op, group, ierr)
      import :: compas_group
      real(8), dimension(..), target, intent(inout) :: x
      integer, intent(in) :: op
      type(compas_group), intent(in), optional :: group
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective: returns when every process (of the group) has called it.
    subroutine compas_barrier(group, ierr)
      import :: compas_group
      type(compas_group), intent(in), optional :: group
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective over the job: the processes passing one colour form a group ordered by key,
    ! then by rank; a colour < 0 puts this process in no group (rank -1, size 0).
    subroutine compas_group_split(colour, key, group, ierr)
      import :: compas_group
      integer, intent(in) :: colour, key
      type(compas_group), intent(out) :: group
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective over the job: the group is gone.
    subroutine compas_group_destroy(group, ierr)
      import :: compas_group
      type(compas_group), intent(inout) :: group
      integer, intent(out), optional :: ierr
    end subroutine

    ! This process's rank in the group (-1 when it is in none); -1 on failure.
    integer function compas_group_rank(group, ierr)
      import :: compas_group
      type(compas_group), intent(in) :: group
      integer, intent(out), optional :: ierr
    end function

    ! The group's number of processes (0 when this process is in none); -1 on failure.
    integer function compas_group_size(group, ierr)
      import :: compas_group
      type(compas_group), intent(in) :: group
      integer, intent(out), optional :: ierr
    end function

    ! ---- ghosted vectors (PETSc's VecGhost): v(1:n_owned + n_ghosts), [owned | ghosts] ----
    ! Every index is 1-based: global indices 1 .. the sum of the processes' n_local (process r
    ! owning the r-th run of them), local positions 1 .. n_owned + n_ghosts (v(k), k <= n_owned,
    ! is global index first + k - 1; v(n_owned + k) is ghost k). The C API's are 0-based: the
    ! module shifts each list on its way and the messages' indices, positions and domain back.
    ! Costs (g ghosts owned by other processes, s entries this process serves to them): the C++
    ! GhostPlan's (docs/PORTING.md, "Every call and its cost", port/ghost.hpp), plus the module's
    ! pass over the list.

    ! Collective (generic): plan becomes the plan of this process's n_local (>= 1) entries and its
    ! ghosts: ghost k a copy of global index ghosts(k), integer(4) or integer(8) (shown), any
    ! order; duplicates are separate ghosts, an own index a ghost filled by a local copy. An index
    ! outside 1..N on any process: COMPAS_ERR_ARG on every process, naming the process, the index,
    ! its position in ghosts and the domain 1..N; an n_local below 1: COMPAS_ERR_COLLECTIVE. Cost:
    ! a copy of ghosts one less (size(ghosts) x its kind's bytes while the plan is made), then
    ! C's: an allgather of the counts and two rounds among the processes, linear in the list,
    ! memory O(g + s + P).
    subroutine compas_ghosts_create(plan, n_local, ghosts, ierr)
      import :: compas_ghosts
      type(compas_ghosts), intent(out) :: plan
      integer, intent(in) :: n_local
      integer(8), intent(in) :: ghosts(:)
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective (generic, cols integer(4) or integer(8)): the plan of a CSR's column list (1-based
    ! global columns): its ghosts are the off-process columns, distinct and sorted (so grouped by
    ! owner), and cols is rewritten in place to local positions: an owned column c to
    ! c - first + 1, another to n_owned + its place among the ghosts; so x(cols(e)) reads the
    ! entry of column e's global column once compas_ghosts_update(plan, x) ran. A column outside
    ! 1..N: COMPAS_ERR_COLLECTIVE on every process naming the process, column, position and
    ! domain, cols left as it was. Cost: C's (O(nnz + g log g), the two passes over cols on the
    ! OpenMP team from 65536 columns), and the module's two passes over cols in place (one less
    ! before, one more after); a non-contiguous cols is copied in and out by the compiler.
    subroutine compas_ghosts_create_columns(plan, n_local, cols, ierr)
      import :: compas_ghosts
      type(compas_ghosts), intent(out) :: plan
      integer, intent(in) :: n_local
      integer(8), contiguous, target, intent(inout) :: cols(:)
      integer, intent(out), optional :: ierr
    end subroutine

    ! This process's first global index (1-based, integer(8)), its owned entries and its ghosts;
    ! not collective, O(1). A plan never made or destroyed (or a copy of one destroyed):
    ! COMPAS_ERR_HANDLE, and those present are -1; the same error from the other calls.
    subroutine compas_ghosts_sizes(plan, first, n_owned, n_ghosts, ierr)
      import :: compas_ghosts
      type(compas_ghosts), intent(in) :: plan
      integer(8), intent(out), optional :: first
      integer, intent(out), optional :: n_owned, n_ghosts
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective (generic): every ghost of v gets its owner's entry; v real(8) (shown), real(4),
    ! integer(4) or integer(8), n_owned + n_ghosts elements (another size on any process:
    ! COMPAS_ERR_COLLECTIVE on every process before anything moves, naming that process, the
    ! size and the sizes needed). Cost: an agreement (an allreduce of 24 bytes), one put to each
    ! process owning some of this process's ghosts, g + s element copies (on the OpenMP team from
    ! 4096); the first call per element size makes a staging window (collective). At one process
    ! nothing is sent: the ghosts that are own indices are copied. A non-contiguous v is copied in
    ! and out by the compiler.
    subroutine compas_ghosts_update(plan, v, ierr)
      import :: compas_ghosts
      type(compas_ghosts), intent(in) :: plan
      real(8), contiguous, target, intent(inout) :: v(:)
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective (generic, as compas_ghosts_update's v): the reverse, every ghost's value added
    ! into its owner's entry, in source rank order (the same bits every run); the ghosts keep
    ! their values. Cost: as the update's, g copies leaving and s additions here.
    subroutine compas_ghosts_accumulate(plan, v, ierr)
      import :: compas_ghosts
      type(compas_ghosts), intent(in) :: plan
      real(8), contiguous, target, intent(inout) :: v(:)
      integer, intent(out), optional :: ierr
    end subroutine

    ! Collective once the plan was used by an update or an accumulation (its staging windows
    ! meet every process), else local: the plan is freed and becomes no plan (compas_finalize
    ! frees those left).
    subroutine compas_ghosts_destroy(plan, ierr)
      import :: compas_ghosts
      type(compas_ghosts), intent(inout) :: plan
      integer, intent(out), optional :: ierr
    end subroutine

  end interface
end module compas_interfaces
