! The module's halo calls beyond compas_exchange, on every process of the job:
! compas_accumulate_halos on a 3-D array (periodic in dimensions 1 and 3) against a brute-force
! sum over every process's halo cells that image each owned cell (halo values depend on the
! process and the position); the exchange in two halves with compas_test polled on process 0
! until done (a begin meets every process first), then compas_wait and the halos right; misuse with ierr (accumulating while an exchange is pending, testing a
! finished exchange). Run by tests/apps (fortran.halos) under compas-run at 1 to 4 processes.
! Prints PASS on process 0.
program halos
  use compas
  use test_checks
  implicit none
  integer :: me, np

  call compas_init()
  me = compas_rank()
  np = compas_processes()
  call check_accumulate()
  call check_test()
  call check_misuse()
  call compas_finalize()
  if (me == 0) print '(a)', 'PASS'

contains

  integer function own_value(x)
    integer, intent(in) :: x(3)
    own_value = 7 + 1009 * x(1) + 101 * x(2) + 3 * x(3)
  end function

  ! What process q writes into its halo cell x (unwrapped: 0, not n).
  integer function halo_value(q, x)
    integer, intent(in) :: q, x(3)
    halo_value = 100003 * (q + 1) + 10007 * (x(1) + 5) + 211 * (x(2) + 5) + 13 * (x(3) + 5)
  end function

  ! The global cell halo cell x images, in w (periodic dimensions wrap); .false. past a
  ! non-periodic boundary.
  logical function image(x, glo, ghi, periodic, w)
    integer, intent(in) :: x(3), glo(3), ghi(3)
    logical, intent(in) :: periodic(3)
    integer, intent(out) :: w(3)
    integer :: d
    image = .true.
    w = x
    do d = 1, 3
      if (x(d) >= glo(d) .and. x(d) <= ghi(d)) cycle
      if (.not. periodic(d)) image = .false.
      w(d) = glo(d) + modulo(x(d) - glo(d), ghi(d) - glo(d) + 1)
    end do
  end function

  ! Every process's owned and halo boxes (inclusive): parts(1:3, 1:4, q) = lo, hi, hlo, hhi.
  subroutine gather_parts(u, parts)
    integer(4), pointer, intent(in) :: u(:, :, :)
    integer, intent(out) :: parts(3, 4, 0:np - 1)
    integer :: lo(3), hi(3)
    call compas_bounds(u, lo, hi)
    parts = 0
    parts(:, 1, me) = lo
    parts(:, 2, me) = hi
    parts(:, 3, me) = lbound(u)
    parts(:, 4, me) = ubound(u)
    call compas_allreduce(parts, COMPAS_SUM)
  end subroutine

  logical function inside(x, lo, hi)
    integer, intent(in) :: x(3), lo(3), hi(3)
    inside = all(x >= lo) .and. all(x <= hi)
  end function

  ! Owned cell x after accumulating: its value plus every halo cell of every process imaging it.
  integer function reference(x, parts, glo, ghi, periodic) result(want)
    integer, intent(in) :: x(3), parts(3, 4, 0:np - 1), glo(3), ghi(3)
    logical, intent(in) :: periodic(3)
    integer :: q, i, j, k, y(3), w(3)
    want = own_value(x)
    do q = 0, np - 1
      do k = parts(3, 3, q), parts(3, 4, q)
        do j = parts(2, 3, q), parts(2, 4, q)
          do i = parts(1, 3, q), parts(1, 4, q)
            y = [i, j, k]
            if (inside(y, parts(:, 1, q), parts(:, 2, q))) cycle
            if (.not. image(y, glo, ghi, periodic, w)) cycle
            if (all(w == x)) want = want + halo_value(q, y)
          end do
        end do
      end do
    end do
  end function

  subroutine check_accumulate()
    integer(4), pointer :: u(:, :, :)
    integer, parameter :: glo(3) = [1, 1, 1]
    logical, parameter :: periodic(3) = [.true., .false., .true.]
    integer :: ghi(3), lo(3), hi(3), i, j, k, x(3), wrong
    integer, allocatable :: parts(:, :, :)
    ghi = [4, 5, 2 * np + 2]
    allocate (parts(3, 4, 0:np - 1))
    call compas_create(u, glo, ghi, periodic=periodic)
    call compas_bounds(u, lo, hi)
    call gather_parts(u, parts)
    do k = lbound(u, 3), ubound(u, 3)
      do j = lbound(u, 2), ubound(u, 2)
        do i = lbound(u, 1), ubound(u, 1)
          x = [i, j, k]
          u(i, j, k) = merge(own_value(x), halo_value(me, x), inside(x, lo, hi))
        end do
      end do
    end do
    call compas_accumulate_halos(u)
    wrong = 0
    do k = lbound(u, 3), ubound(u, 3)
      do j = lbound(u, 2), ubound(u, 2)
        do i = lbound(u, 1), ubound(u, 1)
          x = [i, j, k]
          if (inside(x, lo, hi)) then
            if (u(i, j, k) /= reference(x, parts, glo, ghi, periodic)) wrong = wrong + 1
          else
            if (u(i, j, k) /= halo_value(me, x)) wrong = wrong + 1
          end if
        end do
      end do
    end do
    if (wrong > 0) write (*, '(a, i0, a, i0, a)') 'process ', me, ': ', wrong, ' wrong cells'
    call check(wrong == 0, 'compas_accumulate_halos: sums against the reference')
    call compas_destroy(u)
  end subroutine

  subroutine check_test()
    real(8), pointer :: v(:, :)
    type(compas_exchange_handle) :: x
    integer, parameter :: n = 6, polls = 5000000
    integer :: lo(2), hi(2), i, j, m, tries
    logical :: done
    m = 3 * np + 1
    call compas_create(v, [1, 1], [n, m], periodic=[.true.])
    call compas_bounds(v, lo, hi)
    v = -1
    do j = lo(2), hi(2)
      do i = lo(1), hi(1)
        v(i, j) = 100 * i + j
      end do
    end do
    done = .true.
    call compas_begin_exchange(v, x)
    if (me == 0) then
      done = .false.
      tries = 0
      do while (.not. done .and. tries < polls)
        call compas_test(x, done)
        tries = tries + 1
      end do
      print '(a, i0, a)', 'compas_test: done after ', tries, ' polls'
    end if
    call compas_wait(x)
    call check(done, 'compas_test never said done')
    do j = lo(2) - 1, hi(2) + 1
      do i = lo(1), hi(1)
        call check(v(i, j) == 100 * i + 1 + modulo(j - 1, m), 'halo after compas_test, compas_wait')
      end do
    end do
    call compas_destroy(v)
  end subroutine

  subroutine check_misuse()
    real(8), pointer :: v(:, :)
    type(compas_exchange_handle) :: x
    integer :: ierr
    logical :: done
    call compas_create(v, [1, 1], [5, 2 * np])
    call compas_begin_exchange(v, x)
    call compas_accumulate_halos(v, ierr)
    call check(ierr == COMPAS_ERR_STATE, 'accumulate while an exchange is pending: code')
    call check(index(compas_error_message(), 'exchange pending') > 0, 'pending: message')
    call compas_wait(x)
    call compas_test(x, done, ierr)
    call check(ierr == COMPAS_ERR_HANDLE, 'compas_test of a finished exchange: code')
    call check(index(compas_error_message(), 'compas_exchange_test') > 0, 'finished: message')
    call compas_accumulate_halos(v, ierr)
    call check(ierr == COMPAS_OK, 'accumulate after the exchange')
    call compas_destroy(v)
  end subroutine
end program halos
