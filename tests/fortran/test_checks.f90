! What the Fortran test programs share (tests/fortran/): check(ok, what) ends the program with
! "FAIL on process R: what" when ok is false (R this process's rank, -1 before compas_init);
! expect(got, want, text) checks a refused call's code and that compas_error_message() names
! text, and process 0 prints the message it saw.
module test_checks
  use compas
  implicit none
  private
  public :: check, expect

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (ok) return
    write (*, '(a, i0, 2a)') 'FAIL on process ', rank(), ': ', what
    error stop 1
  end subroutine

  subroutine expect(got, want, text)
    integer, intent(in) :: got, want
    character(*), intent(in) :: text
    call check(got == want .and. index(compas_error_message(), text) > 0, &
               'expected "' // text // '", got: ' // compas_error_message())
    if (rank() == 0) print '(2a)', 'ok: ', compas_error_message()
  end subroutine

  ! This process's rank, or -1 when the job has not started (or has ended).
  integer function rank()
    integer :: ierr
    rank = compas_rank(ierr)
  end function
end module test_checks
