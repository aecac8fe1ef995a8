! compas_arrays: distributed arrays as Fortran array pointers with the program's global bounds.
!
!   real(8), pointer :: u(:,:)
!   integer :: lo(2), hi(2)
!   call compas_create(u, [1, 1], [n, m])   ! global bounds 1..n x 1..m, halo 1: u(lo1-1:hi1+1, ...)
!   call compas_bounds(u, lo, hi)           ! this process's part, lo(d) <= i <= hi(d) (inclusive)
!   call compas_exchange(u)                 ! the neighbours' edges into the halos
!
! Dimension 1 is contiguous, as in any Fortran array; the C API's last (contiguous) dimension is
! Fortran's first, so the module reverses the order of the dimensions when it calls C. The local
! block is contiguous (is_contiguous(u)): the halo box packed, strides exactly its extents, so u
! passes to explicit-shape and assumed-size dummies without a copy; padded=.true. pads dimension
! 1 to whole 64-byte lines instead (C's compas_array_create layout). A 2-D array is cut along its
! last dimension (the columns), or over a process grid when `grid` is given. The pointer u is an
! ordinary pointer: the program may copy it, swap it with another (t => u; u => v; v => t) and
! pass it on; calls find the array by the address of the first element they get (compas_find):
! compas_swap and compas_destroy the whole pointer compas_create gave, the others that or any
! contiguous piece of it (what an explicit-shape dummy u(n1, n2) of a routine gets).
module compas_arrays
  use, intrinsic :: iso_c_binding
  use compas_c_api
  use compas_core
  use compas_find
  implicit none
  private

  ! A pending exchange (compas_begin_exchange, compas_wait).
  type, public :: compas_exchange_handle
    type(c_ptr), private :: handle = c_null_ptr
  end type

  interface compas_create
    module procedure create_r8_1, create_r8_2, create_r8_3, create_r4_1, create_r4_2, &
                     create_r4_3, create_i4_1, create_i4_2, create_i4_3, create_i8_1, &
                     create_i8_2, create_i8_3
  end interface
  interface compas_swap
    module procedure swap_r8_1, swap_r8_2, swap_r8_3, swap_r4_1, swap_r4_2, swap_r4_3, &
                     swap_i4_1, swap_i4_2, swap_i4_3, swap_i8_1, swap_i8_2, swap_i8_3
  end interface
  interface compas_destroy
    module procedure destroy_r8_1, destroy_r8_2, destroy_r8_3, destroy_r4_1, destroy_r4_2, &
                     destroy_r4_3, destroy_i4_1, destroy_i4_2, destroy_i4_3, destroy_i8_1, &
                     destroy_i8_2, destroy_i8_3
  end interface

  public :: compas_create, compas_swap, compas_destroy, compas_bounds, compas_exchange, &
            compas_begin_exchange, compas_wait, compas_test, compas_accumulate_halos

contains

  ! Collective: the C array over the global box lo(d)..hi(d) (inclusive, Fortran order) with the
  ! options in Fortran order: halo widths and periodic flags (one entry for every dimension, or
  ! one per dimension; 1-D and 2-D arrays take one value for all), processes per dimension (grid,
  ! 0 = chosen; absent: a 2-D array is cut along its last dimension only), whether the threads
  ! that compute touch the memory first (first_touch: no zero fill), and whether dimension 1 is
  ! padded to whole 64-byte lines (padded; absent or .false.: contiguous, strides the extents).
  ! Returns the registry slot, 0 on a failure.
  integer function create_array(ctype, rank, lo, hi, halo, periodic, grid, first_touch, padded, &
                                ierr) result(slot)
    integer, intent(in) :: ctype, rank, lo(:), hi(:)
    integer, intent(in), optional :: halo(:), grid(:)
    logical, intent(in), optional :: periodic(:), first_touch, padded
    integer, intent(out), optional :: ierr
    type(c_array_options) :: o
    integer(c_int64_t) :: clo(3), chi(3)
    type(c_ptr) :: handle
    character(:), allocatable :: wrong
    integer :: d, code, layout
    slot = 0
    layout = LAYOUT_CONTIGUOUS
    if (present(padded)) layout = merge(LAYOUT_PADDED, LAYOUT_CONTIGUOUS, padded)
    code = c_options_init(o)
    do d = 1, rank  ! Fortran dimension d is C dimension rank - d (counted from 0)
      clo(rank + 1 - d) = lo(d)
      chi(rank + 1 - d) = int(hi(d), c_int64_t) + 1
      if (present(halo)) o%halo(rank + 1 - d) = pick(halo, d)
      if (present(periodic)) o%periodic(rank + 1 - d) = merge(1, 0, periodic(min(d, size(periodic))))
      if (present(grid)) o%grid(rank + 1 - d) = pick(grid, d)
    end do
    if (present(grid) .and. rank == 2) o%decomposition = DECOMP_GRID
    if (present(first_touch)) o%fill = merge(FILL_NONE, FILL_ZERO, first_touch)
    wrong = ''
    if (present(halo)) wrong = size_error(size(halo), rank, 'halo')
    if (present(periodic) .and. wrong == '') wrong = size_error(size(periodic), rank, 'periodic')
    if (present(grid) .and. wrong == '') wrong = size_error(size(grid), rank, 'grid')
    if (wrong /= '') then
      if (failed(COMPAS_ERR_ARG, ierr, wrong)) return
    end if
    if (failed(c_array_create_with_layout(runtime, int(ctype, c_int), int(rank, c_int), clo, chi, &
                                          o, int(layout, c_int), handle), ierr)) return
    slot = new_record(handle, ctype, rank)
    if (failed(refresh_array(slot), ierr)) slot = 0
  end function

  integer function pick(values, d)
    integer, intent(in) :: values(:), d
    pick = values(min(d, size(values)))
  end function

  ! An option's array has one entry, or one per dimension: "" when it does, else what is wrong.
  function size_error(n, rank, what) result(text)
    integer, intent(in) :: n, rank
    character(*), intent(in) :: what
    character(:), allocatable :: text
    character(100) :: line
    text = ''
    if (n == 1 .or. n == rank) return
    write (line, '(4a, i0, a, i0, a)') 'compas_create: ', what, ' has ', '', n, &
      ' entries (1, or one per dimension: ', rank, ')'
    text = trim(line)
  end function

  ! The C arrays of two slots trade contents and addresses; the slots follow.
  logical function swap_records(a, b, ierr) result(ok)
    integer, intent(in) :: a, b
    integer, intent(out), optional :: ierr
    ok = .not. failed(c_array_swap(arrays(a)%handle, arrays(b)%handle), ierr)
    if (ok) ok = .not. failed(refresh_array(a), ierr)
    if (ok) ok = .not. failed(refresh_array(b), ierr)
  end function

  ! This process's part of u in global indices: lo(d) <= i <= hi(d), INCLUSIVE, per Fortran
  ! dimension (size(lo) >= rank(u)); u itself spans lo(d) - halo .. hi(d) + halo.
  subroutine compas_bounds(u, lo, hi, ierr)
    type(*), dimension(..), target, intent(in) :: u
    integer, intent(out) :: lo(:), hi(:)
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: clo(3), chi(3)
    integer :: slot, d, r
    r = rank(u)
    slot = find_piece(c_loc(u), r, int(size(u)), is_contiguous(u), 'compas_bounds', ierr)
    if (slot == 0) return
    if (size(lo) < r .or. size(hi) < r) then
      if (failed(COMPAS_ERR_ARG, ierr, 'compas_bounds: lo and hi need one entry per dimension')) return
    end if
    if (failed(c_array_bounds(arrays(slot)%handle, clo, chi), ierr)) return
    do d = 1, r
      lo(d) = int(clo(r + 1 - d))
      hi(d) = int(chi(r + 1 - d)) - 1
    end do
  end subroutine

  ! Collective: every halo cell whose source exists gets its neighbour's value.
  subroutine compas_exchange(u, ierr)
    type(*), dimension(..), target, intent(inout) :: u
    integer, intent(out), optional :: ierr
    integer :: slot
    slot = find_piece(c_loc(u), rank(u), int(size(u)), is_contiguous(u), 'compas_exchange', ierr)
    if (slot == 0) return
    if (failed(c_array_exchange(arrays(slot)%handle), ierr)) return
  end subroutine

  ! The exchange in two halves: after begin, do not write owned cells nor read halos until wait.
  subroutine compas_begin_exchange(u, exchange, ierr)
    type(*), dimension(..), target, intent(inout) :: u
    type(compas_exchange_handle), intent(out) :: exchange
    integer, intent(out), optional :: ierr
    integer :: slot
    slot = find_piece(c_loc(u), rank(u), int(size(u)), is_contiguous(u), 'compas_begin_exchange', ierr)
    if (slot == 0) return
    if (failed(c_array_begin_exchange(arrays(slot)%handle, exchange%handle), ierr)) return
  end subroutine

  subroutine compas_wait(exchange, ierr)
    type(compas_exchange_handle), intent(inout) :: exchange
    integer, intent(out), optional :: ierr
    if (failed(c_exchange_wait(exchange%handle), ierr)) return
  end subroutine

  ! Pushes a begun exchange along and returns at once (MPI_Test): done is .true. once compas_wait
  ! would not block. The halos are in place only after compas_wait, which must still be called.
  subroutine compas_test(exchange, done, ierr)
    type(compas_exchange_handle), intent(in) :: exchange
    logical, intent(out) :: done
    integer, intent(out), optional :: ierr
    integer(c_int) :: flag
    done = .false.
    if (failed(c_exchange_test(exchange%handle, flag), ierr)) return
    done = flag /= 0
  end subroutine

  ! Collective, the reverse of compas_exchange: every halo cell's value is added into the owned
  ! cell it mirrors at the process that owns it (periodic dimensions wrap; halo cells past a
  ! non-periodic boundary are ignored); halo cells keep their values.
  subroutine compas_accumulate_halos(u, ierr)
    type(*), dimension(..), target, intent(inout) :: u
    integer, intent(out), optional :: ierr
    integer :: slot
    slot = find_piece(c_loc(u), rank(u), int(size(u)), is_contiguous(u), 'compas_accumulate_halos', ierr)
    if (slot == 0) return
    if (failed(c_array_accumulate_halos(arrays(slot)%handle), ierr)) return
  end subroutine

  ! The specifics: array_specifics.inc for each element type and rank.

#define FT real(c_double)
#define CT COMPAS_DOUBLE
#define RK 1
#define CREATE create_r8_1
#define POINT point_r8_1
#define SWAP swap_r8_1
#define DESTROY destroy_r8_1
#include "array_specifics.inc"

#define FT real(c_double)
#define CT COMPAS_DOUBLE
#define RK 2
#define CREATE create_r8_2
#define POINT point_r8_2
#define SWAP swap_r8_2
#define DESTROY destroy_r8_2
#include "array_specifics.inc"

#define FT real(c_double)
#define CT COMPAS_DOUBLE
#define RK 3
#define CREATE create_r8_3
#define POINT point_r8_3
#define SWAP swap_r8_3
#define DESTROY destroy_r8_3
#include "array_specifics.inc"

#define FT real(c_float)
#define CT COMPAS_FLOAT
#define RK 1
#define CREATE create_r4_1
#define POINT point_r4_1
#define SWAP swap_r4_1
#define DESTROY destroy_r4_1
#include "array_specifics.inc"

#define FT real(c_float)
#define CT COMPAS_FLOAT
#define RK 2
#define CREATE create_r4_2
#define POINT point_r4_2
#define SWAP swap_r4_2
#define DESTROY destroy_r4_2
#include "array_specifics.inc"

#define FT real(c_float)
#define CT COMPAS_FLOAT
#define RK 3
#define CREATE create_r4_3
#define POINT point_r4_3
#define SWAP swap_r4_3
#define DESTROY destroy_r4_3
#include "array_specifics.inc"

#define FT integer(c_int32_t)
#define CT COMPAS_INT32
#define RK 1
#define CREATE create_i4_1
#define POINT point_i4_1
#define SWAP swap_i4_1
#define DESTROY destroy_i4_1
#include "array_specifics.inc"

#define FT integer(c_int32_t)
#define CT COMPAS_INT32
#define RK 2
#define CREATE create_i4_2
#define POINT point_i4_2
#define SWAP swap_i4_2
#define DESTROY destroy_i4_2
#include "array_specifics.inc"

#define FT integer(c_int32_t)
#define CT COMPAS_INT32
#define RK 3
#define CREATE create_i4_3
#define POINT point_i4_3
#define SWAP swap_i4_3
#define DESTROY destroy_i4_3
#include "array_specifics.inc"

#define FT integer(c_int64_t)
#define CT COMPAS_INT64
#define RK 1
#define CREATE create_i8_1
#define POINT point_i8_1
#define SWAP swap_i8_1
#define DESTROY destroy_i8_1
#include "array_specifics.inc"

#define FT integer(c_int64_t)
#define CT COMPAS_INT64
#define RK 2
#define CREATE create_i8_2
#define POINT point_i8_2
#define SWAP swap_i8_2
#define DESTROY destroy_i8_2
#include "array_specifics.inc"

#define FT integer(c_int64_t)
#define CT COMPAS_INT64
#define RK 3
#define CREATE create_i8_3
#define POINT point_i8_3
#define SWAP swap_i8_3
#define DESTROY destroy_i8_3
#include "array_specifics.inc"
end module compas_arrays
