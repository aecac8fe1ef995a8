! capi_halo_f: what the Fortran module adds to a halo exchange. Under a launcher (compas-run -n 2
! capi_halo_f ROWS COLS EXCHANGES REPEATS) every rank makes a ROWS x COLS array of real(8), halo 1,
! rows over the processes, twice: through the module (u(1:COLS, 1:ROWS), Fortran's order, cut
! along its last dimension: the same memory, packed, and cut as C's ROWS x COLS) and as a
! compas::DistArray<double, 2> of Layout::contiguous on the same Runtime (capi_halo_cxx.cpp).
! Each repeat times EXCHANGES exchanges of one, then of the other (alternating, so that a drift
! of the machine weighs on both); rank 0 prints the medians in microseconds per exchange and the ratio
! Fortran / C++. Not a test: a measurement.
program capi_halo_f
  use, intrinsic :: iso_c_binding
  use omp_lib, only: omp_get_wtime
  use compas
  use compas_core, only: runtime  ! the handle the C++ half runs on
  implicit none
  interface
    subroutine cxx_create(rt, rows, cols) bind(C, name="capi_halo_cxx_create")
      import :: c_ptr, c_long
      type(c_ptr), value :: rt
      integer(c_long), value :: rows, cols
    end subroutine
    real(c_double) function cxx_time(calls) bind(C, name="capi_halo_cxx_time")
      import :: c_int, c_double
      integer(c_int), value :: calls
    end function
    subroutine cxx_destroy() bind(C, name="capi_halo_cxx_destroy")
    end subroutine
  end interface
  real(8), pointer :: u(:, :)
  real(8), allocatable :: fortran(:), cxx(:)
  integer :: rows, cols, calls, repeats, r
  integer :: given(4) = [1024, 1024, 200, 5]  ! ROWS COLS EXCHANGES REPEATS, the defaults
  character(32) :: text

  call compas_init()
  do r = 1, min(4, compas_argument_count())
    call compas_get_argument(r, text)
    read (text, *) given(r)
  end do
  rows = given(1)
  cols = given(2)
  calls = given(3)
  repeats = given(4)
  if (rows < 2 * compas_processes() .or. cols < 1 .or. calls < 1 .or. repeats < 1) then
    call compas_abort(2, 'capi_halo_f: at least 2 rows per process, 1 column, 1 exchange and ' &
                      // '1 repeat')
  end if
  call compas_create(u, [1, 1], [cols, rows])
  call cxx_create(runtime, int(rows, c_long), int(cols, c_long))
  allocate (fortran(repeats), cxx(repeats))
  do r = 1, repeats
    fortran(r) = us_per_call()
    cxx(r) = cxx_time(int(calls, c_int))
  end do
  if (compas_rank() == 0) print '(a, i0, a, i0, a, i0, a, i0, a, i0, 2(a, f7.2), a, f6.3)', &
    'capi_halo_f: ', compas_processes(), ' processes, ', rows, ' x ', cols, &
    ' doubles, halo 1, rows cut, median of ', repeats, ' x ', calls, ' exchanges: Fortran ', &
    median(fortran), ' us, C++ ', median(cxx), ' us per exchange, Fortran / C++ ', &
    median(fortran) / median(cxx)
  call cxx_destroy()
  call compas_finalize()

contains

  ! Microseconds per exchange of u over `calls` exchanges, the slowest process's.
  real(8) function us_per_call()
    integer :: k
    real(8) :: t0, s
    call compas_barrier()
    t0 = omp_get_wtime()
    do k = 1, calls
      call compas_exchange(u)
    end do
    s = omp_get_wtime() - t0
    call compas_allreduce(s, COMPAS_MAX)
    us_per_call = s / calls * 1e6_8
  end function

  real(8) function median(x)
    real(8), intent(in) :: x(:)
    real(8) :: s(size(x)), t
    integer :: i, j
    s = x
    do i = 2, size(s)  ! insertion sort: a handful of values
      t = s(i)
      j = i - 1
      do while (j >= 1)
        if (s(j) <= t) exit
        s(j + 1) = s(j)
        j = j - 1
      end do
      s(j + 1) = t
    end do
    median = s((size(s) + 1) / 2)
    if (mod(size(s), 2) == 0) median = (s(size(s) / 2) + s(size(s) / 2 + 1)) / 2
  end function
end program capi_halo_f
