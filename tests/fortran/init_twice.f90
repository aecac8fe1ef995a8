! compas_init a second time from Fortran, on every process of a job (tests/apps:
! fortran.init_twice, compas-run at 1 and 2 processes): while the runtime is alive, ierr is
! COMPAS_ERR_STATE and the runtime still works; after compas_finalize, in a job of several
! processes, ierr is COMPAS_ERR_STATE with compas's message on every process at once, and alone
! compas_init joins again. No runtime error of the module's own (its argument copies are made
! anew). Exits non-zero on a failure, prints PASS on process 0.
program init_twice
  use compas
  implicit none
  integer :: ierr, me, np

  call compas_init(ierr)
  call check(ierr == COMPAS_OK, 'the first compas_init')
  me = compas_rank()
  np = compas_processes()
  call compas_init(ierr)
  call check(ierr == COMPAS_ERR_STATE, 'compas_init while the runtime is alive')
  call check(index(compas_error_message(), 'runtime is alive') > 0, 'its message')
  call check(compas_rank() == me, 'compas_rank after it')
  call compas_finalize(ierr)
  call check(ierr == COMPAS_OK, 'compas_finalize')

  call compas_init(ierr)
  if (np > 1) then
    call check(ierr == COMPAS_ERR_STATE, 'compas_init after compas_finalize')
    call check(index(compas_error_message(), 'a second Runtime in this process') > 0, &
               'its message')
  else
    call check(ierr == COMPAS_OK, 'compas_init after compas_finalize, alone')
    call compas_finalize()
  end if
  if (me == 0) print '(a)', 'PASS'

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (ok) return
    write (*, '(a, i0, 3a, i0, 2a)') 'FAIL on process ', me, ': ', what, ': ierr ', ierr, ': ', &
      compas_error_message()
    error stop 1
  end subroutine
end program init_twice
