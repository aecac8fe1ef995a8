! jacobi2d_openmp.f90 ported to hybrid mode with compas's Fortran module: the same 2-D heat
! equation on P processes x T threads; every !$omp line and every loop body is kept. Run it alone
! (1 x T), or `compas-run -n P -t T jacobi2d_compas_f N STEPS`, or under mpirun / srun. What
! changed (diff -u jacobi2d_openmp.f90 jacobi2d_compas.f90), and why:
!
!  1. compas_init joins the job and pins the threads; compas_get_argument gives the program's
!     own arguments (compas's flags taken out).
!  2. The arrays become distributed arrays over 1..n x 1..n, cut along the last dimension (j, the
!     one the !$omp loop runs over): each process holds the columns lo(2)..hi(2) and a halo of
!     one all around, u(lo(1) - 1:hi(1) + 1, lo(2) - 1:hi(2) + 1), in global indices; the halo
!     of dimension 1 is the boundary (zeros). The loops over j take the owned bounds.
!  3. compas_exchange before each sweep brings the neighbours' edge columns into the halos.
!  4. compas_allreduce combines the processes' maxima; process 0 prints the original's line.
program jacobi2d_compas
  use omp_lib
  use example_format
  use compas
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  real(dp), parameter :: pi = 3.14159265358979323846_dp, r = 0.2_dp
  real(dp), pointer :: u(:, :), v(:, :), t(:, :)
  real(dp) :: h, top, g, peak, exact
  integer :: n, steps, s, i, j, lo(2), hi(2)

  call compas_init()  ! (1)
  n = argument(1, 2000)  ! interior points per side
  steps = argument(2, 100)
  h = 1 / (n + 1.0_dp)

  call compas_create(u, [1, 1], [n, n])  ! (2)
  call compas_create(v, [1, 1], [n, n])
  call compas_bounds(u, lo, hi)
  !$omp parallel do
  do j = lo(2), hi(2)
    do i = 1, n
      u(i, j) = sin(pi * j * h) * sin(pi * i * h)
    end do
  end do

  do s = 1, steps
    call compas_exchange(u)  ! (3)
    !$omp parallel do
    do j = lo(2), hi(2)
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
  do j = lo(2), hi(2)
    do i = 1, n
      top = max(top, u(i, j))
    end do
  end do
  call compas_allreduce(top, COMPAS_MAX)  ! (4)

  g = 1 - 4 * r * (1 - cos(pi * h))
  peak = sin(pi * ((n + 1) / 2) * h)
  exact = g**real(steps, dp) * peak * peak
  if (compas_rank() == 0) write (*, '(a, i0, a, i0, a, i0, 4a)') 'n ', n, ' steps ', steps, &
    ' threads ', omp_get_max_threads(), ': result = ', e15(top), ', exact ', e15(exact)
  call compas_finalize()
  if (abs(top - exact) > 1e-12_dp) error stop 1

contains

  ! The program's argument i as an integer, or `default` when there is none.
  integer function argument(i, default)
    integer, intent(in) :: i, default
    character(32) :: text
    argument = default
    if (compas_argument_count() < i) return
    call compas_get_argument(i, text)
    read (text, *) argument
  end function
end program jacobi2d_compas
