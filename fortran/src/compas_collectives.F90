! compas_collectives: the job's collectives on scalars and arrays (in place), the barrier, and
! process groups (MPI_Comm_split). Funneled: called by the thread that called compas_init,
! outside OpenMP parallel regions, by every process (every member of the group) in the same order.
module compas_collectives
  use, intrinsic :: iso_c_binding
  use compas_c_api
  use compas_core
  implicit none
  private

  integer, parameter :: ALLREDUCE_CALL = 1, BROADCAST_CALL = 2, EXSCAN_CALL = 3

  interface compas_allreduce
    module procedure allreduce_r8, allreduce_r4, allreduce_i4, allreduce_i8
  end interface
  interface compas_broadcast
    module procedure broadcast_r8, broadcast_r4, broadcast_i4, broadcast_i8
  end interface
  ! Element by element, op over the values of the processes before this one in rank order;
  ! process 0 gets op's identity (0 for a sum, 1 for a product, the type's largest for min, its
  ! lowest for max).
  interface compas_exscan
    module procedure exscan_r8, exscan_r4, exscan_i4, exscan_i8
  end interface

  public :: compas_allreduce, compas_broadcast, compas_exscan, compas_barrier, &
            compas_group_split, compas_group_destroy, compas_group_rank, compas_group_size

contains

  ! The C call of `what` on `count` elements at data. count is 64-bit, as size(x, kind=c_int64_t)
  ! gives it: a default integer would wrap past 2**31 - 1 elements (2**40 to 0, a call that did
  ! nothing), where C checks the whole count against what a buffer can hold.
  subroutine collective(what, data, count, contiguous, ctype, arg, group, ierr)
    integer, intent(in) :: what, ctype, arg
    integer(c_int64_t), intent(in) :: count
    type(c_ptr), intent(in) :: data
    logical, intent(in) :: contiguous
    type(compas_group), intent(in), optional :: group
    integer, intent(out), optional :: ierr
    integer(c_int) :: t, a, code
    if (.not. contiguous) then
      if (failed(COMPAS_ERR_ARG, ierr, 'compas collective: the array is not contiguous')) return
    end if
    ! size() of an assumed-size array (x(*)) seen through an assumed-rank dummy is -1 or less.
    if (count < 0) then
      if (failed(COMPAS_ERR_ARG, ierr, 'compas collective: the array is assumed-size (x(*)), ' &
                 // 'so its size is unknown: pass a section of its n elements, x(1:n)')) return
    end if
    t = int(ctype, c_int)
    a = int(arg, c_int)
    if (present(group)) then
      select case (what)
      case (ALLREDUCE_CALL); code = c_group_allreduce(group_handle(group), data, data, count, t, a)
      case (BROADCAST_CALL); code = c_group_broadcast(group_handle(group), data, count, t, a)
      case default; code = c_group_exscan(group_handle(group), data, data, count, t, a)
      end select
    else
      select case (what)
      case (ALLREDUCE_CALL); code = c_allreduce(runtime, data, data, count, t, a)
      case (BROADCAST_CALL); code = c_broadcast(runtime, data, count, t, a)
      case default; code = c_exscan(runtime, data, data, count, t, a)
      end select
    end if
    if (failed(code, ierr)) return
  end subroutine

  ! Returns when every process (of the group) has called it.
  subroutine compas_barrier(group, ierr)
    type(compas_group), intent(in), optional :: group
    integer, intent(out), optional :: ierr
    integer(c_int) :: code
    if (present(group)) then
      code = c_group_barrier(group_handle(group))
    else
      code = c_barrier(runtime)
    end if
    if (failed(code, ierr)) return
  end subroutine

  ! Collective over the job: the processes passing one colour form a group ordered by key, then
  ! by rank; a colour < 0 puts this process in no group (rank -1, size 0).
  subroutine compas_group_split(colour, key, group, ierr)
    integer, intent(in) :: colour, key
    type(compas_group), intent(out) :: group
    integer, intent(out), optional :: ierr
    type(c_ptr) :: handle
    integer(c_int) :: code
    handle = c_null_ptr
    code = c_group_split(runtime, int(colour, c_int), int(key, c_int), handle)
    call set_group_handle(group, handle)
    if (failed(code, ierr)) return
  end subroutine

  ! Collective over the job.
  subroutine compas_group_destroy(group, ierr)
    type(compas_group), intent(inout) :: group
    integer, intent(out), optional :: ierr
    type(c_ptr) :: handle
    integer(c_int) :: code
    handle = group_handle(group)
    code = c_group_destroy(handle)
    call set_group_handle(group, handle)
    if (failed(code, ierr)) return
  end subroutine

  ! This process's rank in the group (-1 when it is in none); -1 on failure (ierr set: a group
  ! never made, or destroyed).
  integer function compas_group_rank(group, ierr)
    type(compas_group), intent(in) :: group
    integer, intent(out), optional :: ierr
    integer(c_int) :: r
    if (failed(c_group_rank(group_handle(group), r), ierr)) r = -1
    compas_group_rank = r
  end function

  ! The group's number of processes (0 when this process is in none); -1 on failure.
  integer function compas_group_size(group, ierr)
    type(compas_group), intent(in) :: group
    integer, intent(out), optional :: ierr
    integer(c_int) :: s
    if (failed(c_group_size(group_handle(group), s), ierr)) s = -1
    compas_group_size = s
  end function

  ! The specifics: collective_specifics.inc for each element type.
#define FT real(c_double)
#define CT COMPAS_DOUBLE
#define ALLREDUCE allreduce_r8
#define BROADCAST broadcast_r8
#define EXSCAN exscan_r8
#include "collective_specifics.inc"

#define FT real(c_float)
#define CT COMPAS_FLOAT
#define ALLREDUCE allreduce_r4
#define BROADCAST broadcast_r4
#define EXSCAN exscan_r4
#include "collective_specifics.inc"

#define FT integer(c_int32_t)
#define CT COMPAS_INT32
#define ALLREDUCE allreduce_i4
#define BROADCAST broadcast_i4
#define EXSCAN exscan_i4
#include "collective_specifics.inc"

#define FT integer(c_int64_t)
#define CT COMPAS_INT64
#define ALLREDUCE allreduce_i8
#define BROADCAST broadcast_i8
#define EXSCAN exscan_i8
#include "collective_specifics.inc"
end module compas_collectives
