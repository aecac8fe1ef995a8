! The module's queries when they fail, on every process of a job: compas_rank, compas_processes,
! compas_threads (before compas_init and after compas_finalize), compas_group_rank and
! compas_group_size (of a group never made) return -1 with ierr set to COMPAS_ERR_HANDLE, not
! whatever their result held. A process in no group (colour < 0) is no failure: rank -1, size 0,
! ierr 0. Run by tests/apps (fortran.failed_queries) under compas-run at 1 and 2 processes; exits
! non-zero on a failure, prints PASS on process 0.
program failed_queries
  use compas
  use test_checks
  implicit none
  type(compas_group) :: never, none
  integer :: ierr, me, np, v, grank, gsize

  me = -1
  v = compas_rank(ierr)
  call expect_failure(v, ierr, 'compas_rank before compas_init')
  v = compas_processes(ierr)
  call expect_failure(v, ierr, 'compas_processes before compas_init')
  v = compas_threads(ierr)
  call expect_failure(v, ierr, 'compas_threads before compas_init')

  call compas_init()
  me = compas_rank(ierr)
  call check(ierr == 0 .and. me >= 0, 'compas_rank after compas_init')
  np = compas_processes(ierr)
  call check(ierr == 0 .and. np >= 1 .and. me < np, 'compas_processes after compas_init')
  v = compas_threads(ierr)
  call check(ierr == 0 .and. v >= 1, 'compas_threads after compas_init')
  v = compas_group_rank(never, ierr)
  call expect_failure(v, ierr, 'compas_group_rank of a group never made')
  v = compas_group_size(never, ierr)
  call expect_failure(v, ierr, 'compas_group_size of a group never made')

  call compas_group_split(merge(-1, 0, me == 0), 0, none)
  grank = compas_group_rank(none, ierr)
  call check(ierr == 0, 'compas_group_rank of a split group')
  gsize = compas_group_size(none, ierr)
  call check(ierr == 0, 'compas_group_size of a split group')
  if (me == 0) then
    call check(grank == -1 .and. gsize == 0, 'a process in no group: rank -1, size 0')
  else
    call check(grank == me - 1 .and. gsize == np - 1, 'the group of the processes but 0')
  end if
  call compas_group_destroy(none)
  call compas_finalize()

  v = compas_rank(ierr)
  call expect_failure(v, ierr, 'compas_rank after compas_finalize')
  v = compas_processes(ierr)
  call expect_failure(v, ierr, 'compas_processes after compas_finalize')
  v = compas_threads(ierr)
  call expect_failure(v, ierr, 'compas_threads after compas_finalize')
  v = compas_group_rank(none, ierr)
  call expect_failure(v, ierr, 'compas_group_rank of a destroyed group')
  v = compas_group_size(none, ierr)
  call expect_failure(v, ierr, 'compas_group_size of a destroyed group')
  if (me == 0) print '(a)', 'PASS'

contains

  ! A failed query: -1, and ierr the code of a bad handle.
  subroutine expect_failure(value, code, what)
    integer, intent(in) :: value, code
    character(*), intent(in) :: what
    if (value == -1 .and. code == COMPAS_ERR_HANDLE) return
    write (*, '(a, i0, 3a, i0, a, i0)') 'FAIL on process ', me, ': ', what, ' returned ', value, &
      ' with ierr ', code
    error stop 1
  end subroutine
end program failed_queries
