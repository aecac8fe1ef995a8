! example_format: what the Fortran examples share to print their result line as the C and C++
! examples do.
module example_format
  implicit none
  private
  public :: e15

contains

  ! x as C's printf("%.15e") writes it: 'e', and at least two exponent digits.
  function e15(x) result(text)
    real(kind(1.0d0)), intent(in) :: x
    character(:), allocatable :: text
    character(32) :: buffer
    integer :: e
    write (buffer, '(es32.15e3)') x
    text = trim(adjustl(buffer))
    e = index(text, 'E')
    if (text(e + 2:e + 2) == '0') text = text(:e + 1) // text(e + 3:)
    text(e:e) = 'e'
  end function
end module example_format
