! A non-contiguous array passed through an explicit-shape dummy, on every process of a job
! (tests/apps: fortran.copy_error, with copy_error.sh, compas-run -n 2): the compiler passes a
! temporary copy, which is no array compas_create made, and the call's message names that cause.
!   copy_error ierr  - with ierr: an array made with padded=.true. (not contiguous, its exchange
!                      through the pointer itself right) and a section of a contiguous one, each
!                      passed to a routine whose dummy is u(m1+2, m2+2): compas_exchange returns
!                      COMPAS_ERR_HANDLE, the message names a temporary copy (and, for the padded
!                      array, that a padded array of that shape is alive); the section passed to
!                      compas_exchange itself: COMPAS_ERR_HANDLE naming a section. Prints
!                      "returned CODE: MESSAGE" for each and exits 0.
!   copy_error stop  - without ierr: the padded array's copy ends the job with its message,
!                      status 1.
program copy_error
  use compas
  use test_checks
  implicit none
  real(8), pointer :: p(:, :), u(:, :)
  integer :: lo(2), hi(2), m1, m2, ierr
  character(8) :: mode

  call compas_init()
  call compas_get_argument(1, mode)
  call compas_create(p, [1, 1], [10, 7], padded=.true.)
  call compas_create(u, [1, 1], [10, 7])
  call check(.not. is_contiguous(p), 'a padded array of 10 + 2 doubles per column is contiguous')
  call check(is_contiguous(u), 'an array made without padded is not contiguous')
  call compas_bounds(p, lo, hi)
  m1 = hi(1) - lo(1) + 1
  m2 = hi(2) - lo(2) + 1
  p = 1
  call compas_exchange(p)  ! through the pointer (assumed-shape): right, padded or not
  call check(all(p(lo(1):hi(1), lo(2):hi(2)) == 1), 'the padded array changed')
  if (mode == 'ierr') then
    call exchange_dummy(p, m1, m2, ierr)
    call report(ierr, 'padded array of that shape')
    call exchange_dummy(u(lo(1):hi(1), :), m1 - 2, m2, ierr)
    call report(ierr, 'temporary copy')
    call compas_exchange(u(lo(1):hi(1), :), ierr)
    call report(ierr, 'section')
  else
    call exchange_dummy(p, m1, m2)
    print '(a)', 'went on after a failed call without ierr'
  end if
  call compas_finalize()

contains

  ! The line copy_error.sh reads; the code must be COMPAS_ERR_HANDLE and the message hold `text`.
  subroutine report(code, text)
    integer, intent(in) :: code
    character(*), intent(in) :: text
    print '(a, i0, 2a)', 'returned ', code, ': ', compas_error_message()
    call check(code == COMPAS_ERR_HANDLE, 'the code is not COMPAS_ERR_HANDLE')
    call check(index(compas_error_message(), text) > 0, 'the message does not say ' // text)
  end subroutine

  ! An F77-style routine: its dummy is explicit-shape, halos included.
  subroutine exchange_dummy(u, m1, m2, ierr)
    integer, intent(in) :: m1, m2
    real(8), intent(inout) :: u(m1 + 2, m2 + 2)
    integer, intent(out), optional :: ierr
    call compas_exchange(u, ierr)
  end subroutine
end program copy_error
