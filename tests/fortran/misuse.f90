! A misused call from Fortran, on every process of a job (tests/apps: fortran.misuse, compas-run
! -n 2): a 1-D array of 2 points with halo 3, wider than each process's part.
!   misuse ierr  - with ierr: the call returns COMPAS_ERR_COLLECTIVE and compas_error_message()
!                  names the halo; the program goes on, prints "returned CODE: MESSAGE", exits 0.
!   misuse stop  - without ierr: the call ends the job with the message, a non-zero status.
program misuse
  use compas
  implicit none
  real(8), pointer :: u(:)
  character(8) :: mode
  integer :: ierr

  call compas_init()
  call compas_get_argument(1, mode)
  if (mode == 'ierr') then
    call compas_create(u, [1], [2], halo=[3], ierr=ierr)
    print '(a, i0, 2a)', 'returned ', ierr, ': ', compas_error_message()
    if (ierr /= COMPAS_ERR_COLLECTIVE .or. index(compas_error_message(), 'halo') == 0) error stop 1
  else
    call compas_create(u, [1], [2], halo=[3])
    print '(a)', 'went on after a failed call without ierr'
  end if
  call compas_finalize()
end program misuse
