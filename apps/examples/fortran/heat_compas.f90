! heat_openmp.f90 ported to hybrid mode with compas's Fortran module: the same 1-D heat equation
! on P processes x T threads; every !$omp line and every loop body is kept. Run it alone (1 x T),
! or `compas-run -n P -t T heat_compas_f N STEPS`, or under mpirun / srun. What changed
! (diff -u heat_openmp.f90 heat_compas.f90), and why:
!
!  1. compas_init joins the job and pins this process's T threads, OpenMP's included, inside the
!     cores the launcher gave it (--threads, --bind, COMPAS_*, or OMP_NUM_THREADS); it takes
!     compas's flags off the command line, and compas_get_argument gives the program's own. A
!     failing call ends the job with its message, status 2 for bad input such as a bad flag.
!  2. The two allocated arrays become distributed arrays over the global indices 1..n: each
!     process holds its part lo..hi and one halo point on each side, and u is an ordinary pointer
!     with those global bounds, u(lo - 1:hi + 1), so the loops keep their bodies and only their
!     bounds change. The pointers swap as before: calls find an array by its address.
!  3. compas_exchange before each step puts the edge points into the neighbours' halos.
!  4. The OpenMP reduction gives this process's maximum; compas_allreduce combines the
!     processes'; process 0 prints the original's line; compas_finalize frees the arrays.
program heat_compas
  use omp_lib
  use example_format
  use compas
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  real(dp), parameter :: pi = 3.14159265358979323846_dp, r = 0.25_dp
  real(dp), pointer :: u(:), v(:), t(:)
  real(dp) :: h, top, g, exact
  integer :: n, steps, s, i, lo(1), hi(1)

  call compas_init()  ! (1)
  n = argument(1, 1000000)  ! interior points
  steps = argument(2, 200)
  h = 1 / (n + 1.0_dp)

  call compas_create(u, [1], [n])  ! (2)
  call compas_create(v, [1], [n])
  call compas_bounds(u, lo, hi)
  !$omp parallel do
  do i = lo(1), hi(1)
    u(i) = sin(pi * i * h)
  end do

  do s = 1, steps
    call compas_exchange(u)  ! (3)
    !$omp parallel do
    do i = lo(1), hi(1)
      v(i) = u(i) + r * (u(i - 1) - 2 * u(i) + u(i + 1))
    end do
    t => u
    u => v
    v => t
  end do

  top = 0
  !$omp parallel do reduction(max:top)
  do i = lo(1), hi(1)
    top = max(top, u(i))
  end do
  call compas_allreduce(top, COMPAS_MAX)  ! (4)

  g = 1 - 2 * r * (1 - cos(pi * h))
  exact = g**real(steps, dp) * sin(pi * ((n + 1) / 2) * h)
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
end program heat_compas
