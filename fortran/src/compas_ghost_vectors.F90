! compas_ghost_vectors: ghosted vectors (PETSc's VecGhost) over the C API's compas_ghosts_*. A
! vector is an ordinary Fortran array v(1:n_owned + n_ghosts) laid out [owned | ghosts]: v(k),
! k <= n_owned, is global index first + k - 1; v(n_owned + k) is ghost k, a copy of the entry at
! the k-th index of the list the plan was made from.
!
!   type(compas_ghosts) :: plan
!   real(8), allocatable :: x(:)
!   call compas_ghosts_create_columns(plan, n_rows, col)  ! col: global -> local positions
!   call compas_ghosts_sizes(plan, n_ghosts=ng)
!   allocate (x(n_rows + ng))
!   call compas_ghosts_update(plan, x)                    ! the owners' entries into the ghosts
!   ... y(i) = y(i) + a(e) * x(col(e))                    ! local positions, no lookups
!
! Every index is 1-based, as a Fortran program numbers its rows: the global indices of a list
! run from 1 to the sum of the processes' n_local, local positions from 1 to n_owned + n_ghosts.
! The C API counts from 0, so the module shifts each list by one on its way to C and back (and an
! error's index, position and domain in the message): a copy of a ghost list (compas_ghosts_create
! takes it intent(in)), the column list in place (compas_ghosts_create_columns rewrites it
! anyway). Collective calls, funneled as the C API's: the thread that called compas_init,
! outside OpenMP parallel regions, every process in the same order.
module compas_ghost_vectors
  use, intrinsic :: iso_c_binding
  use compas_c_api
  use compas_core
  implicit none
  private

  ! A plan of ghosts and the partition of its vectors (the C handle; c_null_ptr: never made or
  ! destroyed).
  type, public :: compas_ghosts
    type(c_ptr), private :: handle = c_null_ptr
  end type

  integer, parameter :: UPDATE_CALL = 1, ACCUMULATE_CALL = 2

  interface compas_ghosts_create
    module procedure create_i4, create_i8
  end interface
  interface compas_ghosts_create_columns
    module procedure columns_i4, columns_i8
  end interface
  interface compas_ghosts_update
    module procedure update_r8, update_r4, update_i4, update_i8
  end interface
  interface compas_ghosts_accumulate
    module procedure accumulate_r8, accumulate_r4, accumulate_i4, accumulate_i8
  end interface

  public :: compas_ghosts_create, compas_ghosts_create_columns, compas_ghosts_sizes, &
            compas_ghosts_update, compas_ghosts_accumulate, compas_ghosts_destroy

contains

  ! Collective: the C plan of `count` 0-based indices at `list` (a CSR's columns, rewritten in
  ! place, when `columns`); returns C's code.
  integer(c_int) function make_plan(plan, n_local, list, count, index_type, columns) result(code)
    type(compas_ghosts), intent(inout) :: plan
    integer, intent(in) :: n_local, index_type
    type(c_ptr), intent(in) :: list
    integer(c_int64_t), intent(in) :: count
    logical, intent(in) :: columns
    integer(c_int64_t) :: n
    n = int(n_local, c_int64_t)
    if (columns) then
      code = c_ghosts_create_columns(runtime, n, list, count, int(index_type, c_int), plan%handle)
    else
      code = c_ghosts_create(runtime, n, list, count, int(index_type, c_int), plan%handle)
    end if
  end function

  ! After a call on indices: as `failed`, with C's message in the module's 1-based numbering.
  logical function failed_on_indices(code, ierr)
    integer(c_int), intent(in) :: code
    integer, intent(out), optional :: ierr
    if (code == COMPAS_OK) then
      failed_on_indices = failed(code, ierr)
    else
      failed_on_indices = failed(code, ierr, one_based(c_message(c_last_error())))
    end if
  end function

  ! A message of C's about an index list, 1-based: "index I at position K" (or "column I at
  ! position K") becomes "index I+1 at position K+1", and "[LO, HI)" after it "LO+1..HI". Any
  ! other message is returned as it is.
  function one_based(text) result(out)
    character(*), intent(in) :: text
    character(:), allocatable :: out
    integer :: at, s, e, lo_end, hi_end
    out = text
    at = index(out, ' at position ')
    if (at == 0) return
    s = number_start(out, at - 1)
    e = number_end(out, at + len(' at position '))
    if (s == 0 .or. e == 0) return
    ! The position first (it lies after the index, whose length may change).
    out = shift(out, at + len(' at position '), e, 1_c_int64_t)
    out = shift(out, s, at - 1, 1_c_int64_t)
    at = index(out, ' at position ')
    s = index(out(at:), '[')
    if (s == 0) return
    s = at + s - 1
    lo_end = number_end(out, s + 1)
    if (lo_end == 0) return
    if (out(lo_end + 1:min(lo_end + 2, len(out))) /= ', ') return
    hi_end = number_end(out, lo_end + 3)
    if (hi_end == 0 .or. hi_end == len(out)) return
    if (out(hi_end + 1:hi_end + 1) /= ')') return
    out = out(:s - 1) // decimal(read_number(out(s + 1:lo_end)) + 1) // '..' // &
          out(lo_end + 3:hi_end) // out(hi_end + 2:)
  end function

  ! Where the integer that ends at text(last:last) starts (a sign included); 0 when none ends there.
  integer function number_start(text, last) result(s)
    character(*), intent(in) :: text
    integer, intent(in) :: last
    s = last
    do while (s >= 1)
      if (verify(text(s:s), '0123456789') /= 0) exit
      s = s - 1
    end do
    if (s == last) then
      s = 0
      return
    end if
    if (s >= 1) then
      if (text(s:s) == '-') s = s - 1
    end if
    s = s + 1
  end function

  ! Where the integer that starts at text(first:first) ends (a sign included); 0 when none starts.
  integer function number_end(text, first) result(e)
    character(*), intent(in) :: text
    integer, intent(in) :: first
    integer :: d
    e = 0
    if (first > len(text)) return
    d = first
    if (text(d:d) == '-') d = d + 1
    if (d > len(text)) return
    e = verify(text(d:), '0123456789')
    if (e == 1) then
      e = 0
    else if (e == 0) then
      e = len(text)
    else
      e = d + e - 2
    end if
  end function

  ! text with its integer text(s:e) increased by `by`.
  function shift(text, s, e, by) result(out)
    character(*), intent(in) :: text
    integer, intent(in) :: s, e
    integer(c_int64_t), intent(in) :: by
    character(:), allocatable :: out
    out = text(:s - 1) // decimal(read_number(text(s:e)) + by) // text(e + 1:)
  end function

  integer(c_int64_t) function read_number(text) result(v)
    character(*), intent(in) :: text
    integer :: status
    read (text, *, iostat=status) v
    if (status /= 0) v = 0
  end function

  function decimal(v) result(text)
    integer(c_int64_t), intent(in) :: v
    character(:), allocatable :: text
    character(24) :: buffer
    write (buffer, '(i0)') v
    text = trim(buffer)
  end function

  ! Collective once the plan was used in an update or an accumulation (its staging windows meet
  ! the other processes); the handle becomes c_null_ptr.
  subroutine compas_ghosts_destroy(plan, ierr)
    type(compas_ghosts), intent(inout) :: plan
    integer, intent(out), optional :: ierr
    if (failed(c_ghosts_destroy(plan%handle), ierr)) return
  end subroutine

  ! This process's first global index (1-based), its owned entries and its ghosts; not
  ! collective. On a failure (a plan never made or destroyed) those present are -1.
  subroutine compas_ghosts_sizes(plan, first, n_owned, n_ghosts, ierr)
    type(compas_ghosts), intent(in) :: plan
    integer(c_int64_t), intent(out), optional :: first
    integer, intent(out), optional :: n_owned, n_ghosts
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: f, o, g
    if (present(first)) first = -1
    if (present(n_owned)) n_owned = -1
    if (present(n_ghosts)) n_ghosts = -1
    if (failed(c_ghosts_sizes(plan%handle, f, o, g), ierr)) return
    if (o + g > huge(0)) then
      if (failed(COMPAS_ERR_ARG, ierr, 'compas_ghosts_sizes: ' // decimal(o) // ' owned entries &
                 &and ' // decimal(g) // ' ghosts: more than a default integer holds')) return
    end if
    if (present(first)) first = f + 1
    if (present(n_owned)) n_owned = int(o)
    if (present(n_ghosts)) n_ghosts = int(g)
  end subroutine

  ! Collective: the C call of `what` on the `count` elements at v.
  subroutine vector_call(what, plan, v, count, ctype, ierr)
    integer, intent(in) :: what, ctype
    type(compas_ghosts), intent(in) :: plan
    type(c_ptr), intent(in) :: v
    integer(c_int64_t), intent(in) :: count
    integer, intent(out), optional :: ierr
    integer(c_int) :: code
    if (what == UPDATE_CALL) then
      code = c_ghosts_update(plan%handle, v, count, int(ctype, c_int))
    else
      code = c_ghosts_accumulate(plan%handle, v, count, int(ctype, c_int))
    end if
    if (failed(code, ierr)) return
  end subroutine

  ! The specifics: ghost_index_specifics.inc for each index kind, ghost_vector_specifics.inc for
  ! each element type.
#define IT integer(c_int32_t)
#define CT COMPAS_INT32
#define CREATE create_i4
#define COLUMNS columns_i4
#include "ghost_index_specifics.inc"

#define IT integer(c_int64_t)
#define CT COMPAS_INT64
#define CREATE create_i8
#define COLUMNS columns_i8
#include "ghost_index_specifics.inc"

#define FT real(c_double)
#define CT COMPAS_DOUBLE
#define UPDATE update_r8
#define ACCUMULATE accumulate_r8
#include "ghost_vector_specifics.inc"

#define FT real(c_float)
#define CT COMPAS_FLOAT
#define UPDATE update_r4
#define ACCUMULATE accumulate_r4
#include "ghost_vector_specifics.inc"

#define FT integer(c_int32_t)
#define CT COMPAS_INT32
#define UPDATE update_i4
#define ACCUMULATE accumulate_i4
#include "ghost_vector_specifics.inc"

#define FT integer(c_int64_t)
#define CT COMPAS_INT64
#define UPDATE update_i8
#define ACCUMULATE accumulate_i8
#include "ghost_vector_specifics.inc"
end module compas_ghost_vectors
