! A collective on more elements than a default integer counts, on every process of a job: a
! pointer of 2**40 integer(4) values over a buffer of 4 (c_f_pointer; never read, since the calls
! refuse it: 4 TiB). The module passes size() as a 64-bit count, so compas_allreduce,
! compas_broadcast and compas_exscan (the job's and a group's) return COMPAS_ERR_ARG naming
! 1099511627776, instead of a count wrapped to 0 and COMPAS_OK having done nothing; the buffer
! keeps its values. Run by tests/apps (fortran.counts) under compas-run at 1 and 2 processes;
! exits non-zero on a failure, prints PASS on process 0.
! An assumed-size dummy (x(*), F77 style) has no size the module can pass: the three calls refuse
! it with a message naming the assumed-size array and the section to pass instead, not a count
! of -1.
program counts
  use, intrinsic :: iso_c_binding
  use compas
  implicit none
  integer(c_int32_t), target :: small(4)
  integer(c_int32_t), pointer :: huge(:)
  type(compas_group) :: g
  integer :: ierr, me

  call compas_init()
  me = compas_rank()
  small = [1, 2, 3, 4]
  call c_f_pointer(c_loc(small), huge, [2_c_int64_t**40])
  call compas_group_split(0, 0, g)

  call compas_allreduce(huge, COMPAS_SUM, ierr=ierr)
  call expect_refused(ierr, 'compas_allreduce')
  call compas_broadcast(huge, 0, ierr=ierr)
  call expect_refused(ierr, 'compas_broadcast')
  call compas_exscan(huge, COMPAS_SUM, ierr=ierr)
  call expect_refused(ierr, 'compas_exscan')
  call compas_allreduce(huge, COMPAS_MAX, group=g, ierr=ierr)
  call expect_refused(ierr, 'compas_allreduce on a group')
  call compas_broadcast(huge, 0, group=g, ierr=ierr)
  call expect_refused(ierr, 'compas_broadcast on a group')
  call compas_exscan(huge, COMPAS_MIN, group=g, ierr=ierr)
  call expect_refused(ierr, 'compas_exscan on a group')

  call through_assumed_size(small)

  call compas_group_destroy(g)
  call compas_finalize()
  if (me == 0) print '(a)', 'PASS'

contains

  subroutine through_assumed_size(x)
    integer(c_int32_t) :: x(*)
    character(*), parameter :: assumed_size = &
      'assumed-size (x(*)), so its size is unknown: pass a section of its n elements, x(1:n)'
    call compas_allreduce(x, COMPAS_SUM, ierr=ierr)
    call expect_refused(ierr, 'compas_allreduce of x(*)', assumed_size)
    call compas_broadcast(x, 0, ierr=ierr)
    call expect_refused(ierr, 'compas_broadcast of x(*)', assumed_size)
    call compas_exscan(x, COMPAS_SUM, group=g, ierr=ierr)
    call expect_refused(ierr, 'compas_exscan of x(*) on a group', assumed_size)
  end subroutine

  ! COMPAS_ERR_ARG with a message holding `text` (by default the huge count), the buffer as it was.
  subroutine expect_refused(code, what, text)
    integer, intent(in) :: code
    character(*), intent(in) :: what
    character(*), intent(in), optional :: text
    character(:), allocatable :: want
    want = 'count 1099511627776'
    if (present(text)) want = text
    if (code == COMPAS_ERR_ARG .and. index(compas_error_message(), want) > 0 &
        .and. all(small == [1, 2, 3, 4])) return
    write (*, '(a, i0, 3a, i0, 2a)') 'FAIL on process ', me, ': ', what, ' returned ', code, &
      ': ', compas_error_message()
    error stop 1
  end subroutine
end program counts
