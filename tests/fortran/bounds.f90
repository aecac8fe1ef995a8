! The module compas's arrays have the program's bounds, on every process of the job: for 1-D,
! 2-D and 3-D arrays of each type, lbound/ubound are the owned bounds (compas_bounds, inclusive)
! minus/plus the halo in every dimension; the owned parts tile the global box; an exchange fills
! each halo cell that has a source with its neighbour's value (periodic too); compas_swap and the
! program's own pointer swap keep the pointers right; the collectives, groups and the program's
! arguments (compas's flags taken out) work. Run by tests/apps (fortran.bounds) under compas-run
! at 1, 2 and 3 processes with the arguments --threads 1 alpha "b c". Prints PASS on process 0.
program bounds
  use compas
  use test_checks
  implicit none
  integer :: me, np

  call compas_init()
  me = compas_rank()
  np = compas_processes()
  call check_arguments()
  call check_1d()
  call check_2d()
  call check_3d()
  call check_swap()
  call check_collectives()
  call check_errors()
  call compas_finalize()
  if (me == 0) print '(a)', 'PASS'

contains

  ! The value every test array holds at a global index.
  integer function f(i, j, k)
    integer, intent(in) :: i, j, k
    f = 10000 * i + 100 * j + k
  end function

  ! Owned cells of every process together: the global box, each once.
  subroutine check_tiles(lo, hi, glo, ghi)
    integer, intent(in) :: lo(:), hi(:), glo(:), ghi(:)
    integer(8) :: cells
    cells = product(int(hi - lo + 1, 8))
    call compas_allreduce(cells, COMPAS_SUM)
    call check(cells == product(int(ghi - glo + 1, 8)), 'the owned parts do not tile the box')
    call check(all(lo >= glo) .and. all(hi <= ghi), 'an owned part outside the global box')
  end subroutine

  subroutine check_arguments()
    character(8) :: value
    integer :: length, status
    call check(compas_argument_count() == 2, 'argument count is not 2 (compas flags left?)')
    call compas_get_argument(1, value, length, status)
    call check(value == 'alpha' .and. length == 5 .and. status == 0, 'argument 1 is not alpha')
    call compas_get_argument(2, value)
    call check(value == 'b c', 'argument 2 is not "b c"')
    call compas_get_argument(3, value, status=status)
    call check(status == 1 .and. value == '', 'argument 3 exists')
  end subroutine

  subroutine check_1d()
    integer(4), pointer :: u(:)
    integer :: lo(1), hi(1), i, n
    n = 7 * np + 3
    call compas_create(u, [0], [n - 1], halo=[2], periodic=[.true.])
    call compas_bounds(u, lo, hi)
    call check(lbound(u, 1) == lo(1) - 2 .and. ubound(u, 1) == hi(1) + 2, '1-D bounds')
    call check_tiles(lo, hi, [0], [n - 1])
    do i = lo(1), hi(1)
      u(i) = f(i, 0, 0)
    end do
    call compas_exchange(u)
    do i = lo(1) - 2, hi(1) + 2
      call check(u(i) == f(modulo(i, n), 0, 0), '1-D periodic halo')
    end do
    call compas_destroy(u)
    call check(.not. associated(u), 'compas_destroy left the pointer associated')
  end subroutine

  subroutine check_2d()
    real(8), pointer :: u(:, :)
    real(4), pointer :: w(:, :)
    integer :: lo(2), hi(2), i, j
    type(compas_exchange_handle) :: x
    call compas_create(u, [1, -2], [5, 3 * np])
    call compas_bounds(u, lo, hi)
    call check(all(lbound(u) == lo - 1) .and. all(ubound(u) == hi + 1), '2-D bounds')
    call check(lo(1) == 1 .and. hi(1) == 5, '2-D: dimension 1 is cut (only the last should be)')
    call check_tiles(lo, hi, [1, -2], [5, 3 * np])
    do j = lo(2), hi(2)
      do i = lo(1), hi(1)
        u(i, j) = f(i, j + 50, 0)
      end do
    end do
    call compas_begin_exchange(u, x)
    call compas_wait(x)
    do j = max(lo(2) - 1, -2), min(hi(2) + 1, 3 * np)
      do i = lo(1), hi(1)
        call check(u(i, j) == f(i, j + 50, 0), '2-D halo')
      end do
    end do
    call compas_create(w, [1, 1], [4 * np, 6], grid=[np, 1], first_touch=.true.)
    call compas_bounds(w, lo, hi)
    call check(all(lbound(w) == lo - 1) .and. all(ubound(w) == hi + 1), '2-D grid bounds')
    call check(lo(2) == 1 .and. hi(2) == 6, '2-D grid [np, 1]: dimension 2 is cut')
    call check_tiles(lo, hi, [1, 1], [4 * np, 6])
  end subroutine

  subroutine check_3d()
    integer(8), pointer :: u(:, :, :)
    integer :: lo(3), hi(3), i, j, k
    integer, parameter :: h(3) = [1, 2, 1]
    call compas_create(u, [1, 1, 1], [3, 4, 2 * np + 1], halo=h)
    call compas_bounds(u, lo, hi)
    call check(all(lbound(u) == lo - h) .and. all(ubound(u) == hi + h), '3-D bounds')
    call check_tiles(lo, hi, [1, 1, 1], [3, 4, 2 * np + 1])
    do k = lo(3), hi(3)
      do j = lo(2), hi(2)
        do i = lo(1), hi(1)
          u(i, j, k) = f(i, j, k)
        end do
      end do
    end do
    call compas_exchange(u)
    do k = max(lo(3) - h(3), 1), min(hi(3) + h(3), 2 * np + 1)
      do j = max(lo(2) - h(2), 1), min(hi(2) + h(2), 4)
        do i = max(lo(1) - h(1), 1), min(hi(1) + h(1), 3)
          call check(u(i, j, k) == f(i, j, k), '3-D halo')
        end do
      end do
    end do
  end subroutine

  ! compas_swap trades the arrays and re-points both pointers; after the program's own pointer
  ! swap, the calls still find each array by its pointer.
  subroutine check_swap()
    real(8), pointer :: a(:, :), b(:, :), t(:, :)
    integer :: lo(2), hi(2)
    call compas_create(a, [1, 1], [4, 2 * np])
    call compas_create(b, [1, 1], [4, 2 * np])
    call compas_bounds(a, lo, hi)
    a(lo(1):hi(1), lo(2):hi(2)) = 1
    b(lo(1):hi(1), lo(2):hi(2)) = 2
    call compas_swap(a, b)
    call check(all(lbound(a) == lo - 1) .and. all(ubound(b) == hi + 1), 'bounds after swap')
    call check(all(a(lo(1):hi(1), lo(2):hi(2)) == 2), 'a after compas_swap')
    call check(all(b(lo(1):hi(1), lo(2):hi(2)) == 1), 'b after compas_swap')
    t => a
    a => b
    b => t
    call compas_exchange(a)
    call compas_exchange(b)
    if (hi(2) < 2 * np) call check(all(a(lo(1):hi(1), hi(2) + 1) == 1), 'halo of a after swaps')
  end subroutine

  subroutine check_collectives()
    integer :: r, v(3)
    real(8) :: x
    type(compas_group) :: g
    r = me
    call compas_allreduce(r, COMPAS_SUM)
    call check(r == np * (np - 1) / 2, 'allreduce sum')
    v = [me, 1, -me]
    call compas_allreduce(v, COMPAS_MAX)
    call check(all(v == [np - 1, 1, 0]), 'allreduce max of an array')
    x = merge(2.5d0, 0d0, me == np - 1)
    call compas_broadcast(x, np - 1)
    call check(x == 2.5d0, 'broadcast')
    r = 1
    call compas_exscan(r, COMPAS_SUM)
    call check(r == me, 'exscan')
    call compas_group_split(mod(me, 2), me, g)
    call check(compas_group_size(g) == (np + 1 - mod(me, 2)) / 2, 'group size')
    call check(compas_group_rank(g) == me / 2, 'group rank')
    r = 1
    call compas_allreduce(r, COMPAS_SUM, group=g)
    call check(r == compas_group_size(g), 'group allreduce')
    call compas_barrier(group=g)
    call compas_group_destroy(g)
    call compas_barrier()
  end subroutine

  ! With ierr, a failure returns its code and message.
  subroutine check_errors()
    real(8), pointer :: u(:), s(:)
    integer :: ierr
    allocate (u(10))
    call compas_exchange(u, ierr)
    call check(ierr == COMPAS_ERR_HANDLE, 'exchange of a foreign array: code')
    call check(index(compas_error_message(), 'compas_exchange') > 0, 'exchange: message')
    deallocate (u)
    call compas_create(u, [1], [10 * np])
    s => u(::2)  ! not contiguous (a contiguous piece names the whole array: f77_halos.f)
    call compas_exchange(s, ierr)
    call check(ierr == COMPAS_ERR_HANDLE, 'exchange of a section: code')
    call check(index(compas_error_message(), 'section') > 0, 'exchange of a section: message')
    call compas_create(u, [1], [10 * np], halo=[1, 1], ierr=ierr)
    call check(ierr == COMPAS_ERR_ARG, 'halo with 2 entries for 1 dimension: code')
    call check(index(compas_error_message(), 'halo has 2 entries') > 0, 'halo entries: message')
    call compas_abort(0, 'not a status', ierr)
    call check(ierr == COMPAS_ERR_ARG, 'abort with status 0: code')
  end subroutine
end program bounds
