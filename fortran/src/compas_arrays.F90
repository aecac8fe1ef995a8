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
                     create_i8_2, create_i8_3, like_r8_3, like_r4_3, like_i4_3, like_i8_3
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
            compas_begin_exchange, compas_wait, compas_test, compas_accumulate_halos, &
            compas_redistribute, compas_grid, compas_member, compas_block_of

contains

  ! Collective: the C array over the global box lo(d)..hi(d) (inclusive, Fortran order) with the
  ! options in Fortran order: halo widths and periodic flags (one entry for every dimension, or
  ! one per dimension; 1-D and 2-D arrays take one value for all), processes per dimension (grid,
  ! 0 = chosen; absent: a 2-D array is cut along its last dimension only), whether the threads
  ! that compute touch the memory first (first_touch: no zero fill), and whether dimension 1 is
  ! padded to whole 64-byte lines (padded; absent or .false.: contiguous, strides the extents).
  ! 3-D arrays also take split points (split1, split2, split3: each part's first index, then
  ! hi(d) + 1) and a group to lie on. Returns the registry slot, 0 on a failure.
  integer function create_array(ctype, rank, lo, hi, halo, periodic, grid, first_touch, padded, &
                                ierr, split1, split2, split3, group) result(slot)
    integer, intent(in) :: ctype, rank, lo(:), hi(:)
    integer, intent(in), optional :: halo(:), grid(:), split1(:), split2(:), split3(:)
    logical, intent(in), optional :: periodic(:), first_touch, padded
    integer, intent(out), optional :: ierr
    type(compas_group), intent(in), optional :: group
    type(c_array_options) :: o
    integer(c_int64_t) :: clo(3), chi(3)
    type(c_ptr) :: handle
    character(:), allocatable :: wrong
    integer :: d, code, layout
    logical :: split
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
    split = present(split1) .or. present(split2) .or. present(split3)
    if (wrong == '' .and. (split .or. present(group)) .and. rank /= 3) &
      wrong = 'compas_create: split points and groups are for 3-D arrays'
    if (wrong == '' .and. split) wrong = split_error(lo, hi, split1, split2, split3)
    if (wrong /= '') then
      if (failed(COMPAS_ERR_ARG, ierr, wrong)) return
    end if
    if (split .or. present(group)) then
      code = create_split(ctype, clo, chi, o, layout, handle, split1, split2, split3, group)
    else
      code = c_array_create_with_layout(runtime, int(ctype, c_int), int(rank, c_int), clo, chi, &
                                        o, int(layout, c_int), handle)
    end if
    if (failed(code, ierr)) return
    slot = new_record(handle, ctype, rank)
    if (failed(refresh_array(slot), ierr)) slot = 0
  end function

  ! The C call of a 3-D array from split points (Fortran dimension 3 is C's first) and/or on a
  ! group.
  integer(c_int) function create_split(ctype, clo, chi, o, layout, handle, split1, split2, &
                                       split3, group) result(code)
    integer, intent(in) :: ctype, layout
    integer(c_int64_t), intent(in) :: clo(3), chi(3)
    type(c_array_options), intent(in) :: o
    type(c_ptr), intent(out) :: handle
    integer, intent(in), optional :: split1(:), split2(:), split3(:)
    type(compas_group), intent(in), optional :: group
    integer(c_int64_t), allocatable, target :: splits(:)
    integer(c_int), target :: counts(3)
    type(c_ptr) :: g
    g = c_null_ptr
    if (present(group)) g = group_handle(group)
    if (.not. present(split1)) then
      code = c_array_create_split(runtime, g, int(ctype, c_int), clo, chi, c_null_ptr, &
                                  c_null_ptr, o, int(layout, c_int), handle)
      return
    end if
    counts = int([size(split3), size(split2), size(split1)], c_int)
    allocate(splits(sum(counts)))
    splits(:) = [int(split3, c_int64_t), int(split2, c_int64_t), int(split1, c_int64_t)]
    code = c_array_create_split(runtime, g, int(ctype, c_int), clo, chi, c_loc(splits), &
                                c_loc(counts), o, int(layout, c_int), handle)
  end function

  ! Split points for every dimension, each from lo(d) to hi(d) + 1: "" when they are, else what
  ! is wrong (whether they rise, C checks: the message names C's dimensions, planes = 3).
  function split_error(lo, hi, split1, split2, split3) result(text)
    integer, intent(in) :: lo(:), hi(:)
    integer, intent(in), optional :: split1(:), split2(:), split3(:)
    character(:), allocatable :: text
    text = ''
    if (.not. (present(split1) .and. present(split2) .and. present(split3))) then
      text = 'compas_create: split1, split2 and split3 go together (one per dimension)'
      return
    end if
    text = ends(split1, 1)
    if (text == '') text = ends(split2, 2)
    if (text == '') text = ends(split3, 3)
  contains
    function ends(s, d) result(t)
      integer, intent(in) :: s(:), d
      character(:), allocatable :: t
      character(160) :: line
      t = ''
      line = ''
      if (size(s) < 2) then
        write (line, '(a, i0, a, i0, a)') 'compas_create: split', d, ' has ', size(s), &
          ' entries: 2 or more (the first index of each part, then the end hi + 1)'
      else if (s(1) /= lo(d)) then
        write (line, '(3(a, i0))') 'compas_create: split', d, '(1) = ', s(1), &
          ': the first split point is lo(d) = ', lo(d)
      else if (s(size(s)) /= hi(d) + 1) then
        write (line, '(a, i0, a, i0, a, i0, a, i0)') 'compas_create: split', d, '(', size(s), &
          ') = ', s(size(s)), ': the last split point is hi(d) + 1 = ', hi(d) + 1
      end if
      t = trim(line)
    end function
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

  ! The registry slot of a new array made from the one in slot `from` (compas_array_create_like);
  ! 0 on a failure.
  integer function like_array(from, coarsen, group, ierr) result(slot)
    integer, intent(in) :: from
    integer, intent(in), optional :: coarsen
    type(compas_group), intent(in), optional :: group
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: factor
    type(c_ptr) :: g, handle
    slot = 0
    factor = 1
    if (present(coarsen)) factor = coarsen
    g = c_null_ptr
    if (present(group)) g = group_handle(group)
    if (failed(c_array_create_like(arrays(from)%handle, factor, g, handle), ierr)) return
    slot = new_record(handle, arrays(from)%ctype, 3)
    if (failed(refresh_array(slot), ierr)) slot = 0
  end function

  ! Collective over the whole job: every owned cell of `to` gets that cell's value in `from`, two
  ! 3-D arrays of one domain and type, any partitions, on the job or on groups (agglomeration onto
  ! a group and back). Every process calls it, holding cells of either or of neither (then it
  ! passes its empty pointers). Halo cells of `to` are left as they were.
  subroutine compas_redistribute(from, to, ierr)
    type(*), dimension(..), target, intent(in) :: from
    type(*), dimension(..), target, intent(inout) :: to
    integer, intent(out), optional :: ierr
    integer :: a, b
    a = find_piece(c_loc(from), rank(from), int(size(from)), is_contiguous(from), &
                   'compas_redistribute', ierr)
    if (a == 0) return
    b = find_piece(c_loc(to), rank(to), int(size(to)), is_contiguous(to), 'compas_redistribute', &
                   ierr)
    if (b == 0) return
    if (failed(c_array_redistribute(arrays(a)%handle, arrays(b)%handle), ierr)) return
  end subroutine

  ! The processes per dimension of a 3-D array's grid (over its members), Fortran order.
  subroutine compas_grid(u, grid, ierr)
    type(*), dimension(..), target, intent(in) :: u
    integer, intent(out) :: grid(3)
    integer, intent(out), optional :: ierr
    integer(c_int) :: g(3)
    integer :: slot
    grid = 0
    slot = find_piece(c_loc(u), rank(u), int(size(u)), is_contiguous(u), 'compas_grid', ierr)
    if (slot == 0) return
    if (failed(c_array_grid(arrays(slot)%handle, g), ierr)) return
    grid = int(g(3:1:-1))
  end subroutine

  ! Whether this process holds a part of u (.false. only for an array on a group it is not in).
  logical function compas_member(u, ierr)
    type(*), dimension(..), target, intent(in) :: u
    integer, intent(out), optional :: ierr
    integer(c_int) :: m
    integer :: slot
    compas_member = .false.
    slot = find_piece(c_loc(u), rank(u), int(size(u)), is_contiguous(u), 'compas_member', ierr)
    if (slot == 0) return
    if (failed(c_array_member(arrays(slot)%handle, m), ierr)) return
    compas_member = m /= 0
  end function

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
#define LIKE like_r8_3
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
#define LIKE like_r4_3
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
#define LIKE like_i4_3
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
#define LIKE like_i8_3
#include "array_specifics.inc"
  ! Block `part` (0 .. parts - 1) of lo..hi (inclusive) cut in `parts`: block_lo..block_hi,
  ! inclusive, empty (block_hi = block_lo - 1) when the range has fewer cells than parts. The split
  ! of every array's dimension over its processes: n = hi - lo + 1 cells, the first mod(n, parts)
  ! blocks one cell longer. Not collective, no job needed (before compas_init too). Bad values,
  ! lo = -huge(0) - 1 and hi = huge(0) among them (an empty block's bounds would not fit):
  ! COMPAS_ERR_ARG naming the value and what is allowed, block_lo = 1 and block_hi = 0.
  subroutine compas_block_of(lo, hi, parts, part, block_lo, block_hi, ierr)
    integer, intent(in) :: lo, hi, parts, part
    integer, intent(out) :: block_lo, block_hi
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: first, past
    block_lo = 1
    block_hi = 0
    if (failed_argument(block_of_refusal(int(lo, c_int64_t), int(hi, c_int64_t), parts, part), &
                        ierr)) return
    if (failed(c_block_of(int(lo, c_int64_t), int(hi, c_int64_t) + 1, int(parts, c_int64_t), &
                          int(part, c_int64_t), first, past), ierr)) return
    block_lo = int(first)
    block_hi = int(past) - 1
  end subroutine

  ! Why compas_block_of refuses its arguments, or "" (64-bit arithmetic: no bound overflows here).
  function block_of_refusal(lo, hi, parts, part) result(why)
    integer(c_int64_t), intent(in) :: lo, hi
    integer, intent(in) :: parts, part
    character(:), allocatable :: why
    character(96) :: text
    why = ''
    if (lo <= -int(huge(0), c_int64_t) - 1) then
      write (text, '("lo ",i0,": ",i0," or more is allowed")') lo, -huge(0)
    else if (hi >= huge(0)) then
      write (text, '("hi ",i0,": ",i0," or less is allowed")') hi, huge(0) - 1
    else if (hi < lo - 1) then
      write (text, '("range ",i0,"..",i0,": hi >= lo - 1 is allowed (lo..hi inclusive, empty at ", &
             &"hi = lo - 1)")') lo, hi
    else if (parts < 1) then
      write (text, '("parts ",i0,": 1 or more are allowed")') parts
    else if (part < 0 .or. part >= parts) then
      write (text, '("part ",i0," of ",i0,": 0 to ",i0," is allowed")') part, parts, parts - 1
    else
      return
    end if
    why = 'compas_block_of: ' // trim(text)
  end function

  ! failed() for an argument the module refuses itself: `why` "" is success.
  logical function failed_argument(why, ierr)
    character(*), intent(in) :: why
    integer, intent(out), optional :: ierr
    if (len(why) == 0) then
      failed_argument = failed(COMPAS_OK, ierr)
    else
      failed_argument = failed(COMPAS_ERR_ARG, ierr, why)
    end if
  end function

end module compas_arrays
