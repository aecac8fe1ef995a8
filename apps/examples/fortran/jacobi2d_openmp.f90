! The Fortran original of jacobi2d_compas.f90: jacobi2d_openmp.cpp in Fortran 2008, the 2-D heat
! equation, explicit in time (a Jacobi sweep of the 5-point stencil per step), parallelised with
! OpenMP on one shared-memory node; it prints the same result line as jacobi2d_openmp.cpp (u(i, j)
! here is u[j * w + i] there: dimension 1 is the contiguous one, the sums run in the same order).
!
! u_t = u_xx + u_yy on the unit square, u = 0 on the boundary, u(x, y, 0) = sin(pi x) sin(pi y):
! the exact discrete solution after s steps is sin(pi x) sin(pi y) g^s with
! g = 1 - 4 r (1 - cos(pi h)), printed beside the result.
program jacobi2d_openmp
  use omp_lib
  use example_format
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  real(dp), parameter :: pi = 3.14159265358979323846_dp, r = 0.2_dp
  real(dp), pointer :: u(:, :), v(:, :), t(:, :)
  real(dp) :: h, top, g, peak, exact
  integer :: n, steps, s, i, j

  n = argument(1, 2000)  ! interior points per side
  steps = argument(2, 100)
  h = 1 / (n + 1.0_dp)

  allocate (u(0:n + 1, 0:n + 1), v(0:n + 1, 0:n + 1), source=0.0_dp)
  !$omp parallel do
  do j = 1, n
    do i = 1, n
      u(i, j) = sin(pi * j * h) * sin(pi * i * h)
    end do
  end do

  do s = 1, steps
    !$omp parallel do
    do j = 1, n
      do i = 1, n
        v(i, j) = u(i, j) + r * (u(i, j - 1) + u(i, j + 1) + u(i - 1, j) + u(i + 1, j) - 4 * u(i, j))
      end do
    end do
    t => u
    u => v
    v => t
  end do

  top = 0
  !$omp parallel do reduction(max:top)
  do j = 1, n
    do i = 1, n
      top = max(top, u(i, j))
    end do
  end do

  g = 1 - 4 * r * (1 - cos(pi * h))
  peak = sin(pi * ((n + 1) / 2) * h)
  exact = g**real(steps, dp) * peak * peak
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
end program jacobi2d_openmp
