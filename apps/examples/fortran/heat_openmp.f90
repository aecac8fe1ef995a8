! The Fortran original of heat_compas.f90: heat_openmp.cpp in Fortran 2008, the same 1-D heat
! equation, explicit in time, parallelised with OpenMP on one shared-memory node; it prints the
! same result line as heat_openmp.cpp. Compare (diff -u heat_openmp.f90 heat_compas.f90):
! heat_compas.f90's header explains each change.
!
! u_t = u_xx on (0, 1), u = 0 at both ends, u(x, 0) = sin(pi x): the exact discrete solution
! after s steps is sin(pi x) * g^s with g = 1 - 2 r (1 - cos(pi h)), printed beside the result.
program heat_openmp
  use omp_lib
  use example_format
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  real(dp), parameter :: pi = 3.14159265358979323846_dp, r = 0.25_dp
  real(dp), pointer :: u(:), v(:), t(:)
  real(dp) :: h, top, g, exact
  integer :: n, steps, s, i

  n = argument(1, 1000000)  ! interior points
  steps = argument(2, 200)
  h = 1 / (n + 1.0_dp)

  allocate (u(0:n + 1), v(0:n + 1), source=0.0_dp)
  !$omp parallel do
  do i = 1, n
    u(i) = sin(pi * i * h)
  end do

  do s = 1, steps
    !$omp parallel do
    do i = 1, n
      v(i) = u(i) + r * (u(i - 1) - 2 * u(i) + u(i + 1))
    end do
    t => u
    u => v
    v => t
  end do

  top = 0
  !$omp parallel do reduction(max:top)
  do i = 1, n
    top = max(top, u(i))
  end do

  g = 1 - 2 * r * (1 - cos(pi * h))
  exact = g**real(steps, dp) * sin(pi * ((n + 1) / 2) * h)
  write (*, '(a, i0, a, i0, a, i0, 4a)') 'n ', n, ' steps ', steps, ' threads ', &
    omp_get_max_threads(), ': result = ', e15(top), ', exact ', e15(exact)
  deallocate (u, v)
  if (abs(top - exact) > 1e-12_dp) error stop 1

contains

  ! Command-line argument i as an integer, or `default` when there is none.
  integer function argument(i, default)
    integer, intent(in) :: i, default
    character(32) :: text
    argument = default
    if (command_argument_count() < i) return
    call get_command_argument(i, text)
    read (text, *) argument
  end function
end program heat_openmp
