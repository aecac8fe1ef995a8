! The module's ghosted vectors under compas-run (1 to 4 processes, and 2 threads): process r owns
! 3 + 2r entries (entry i, 1-based, holds f(i) = 3i + 1), so the parts differ.
!  - a ghost list (int64): every other process's first entry twice (a duplicate) and its last,
!    and this process's own first and last; the sizes (first 1-based), every ghost after an update
!    (real(8)), and the sums an accumulation adds into the owners (integer(8)); ghosts keep theirs;
!  - a ghost list (int32): the neighbours' nearest entries, cyclic (at one process its own): the
!    update in integer(4) and real(4);
!  - a CSR's columns (int32 and int64): each row's i-1, i, i+1 and the global first and last
!    column, one repeated: every column rewritten to its local position (owned c: c - first + 1,
!    off-process: n_owned + its rank among the distinct sorted off-process columns), and every
!    x(col(e)) the entry of the original column after an update;
!  - large ones, for the threads: a process's next neighbour's every entry as ghosts (copies of
!    4096 or more run on the OpenMP team) and 15 columns a row (65536 columns or more are split
!    over the team);
!  - errors, with ierr, the same on every process: an index 0 and one past the last (named
!    1-based, with the domain 1..N), an n_local of 0, a column out of range (cols as they were),
!    a vector of the wrong size, a plan never made and a destroyed one. Prints PASS on process 0.
program ghosts
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64
  use compas
  use test_checks
  implicit none
  integer :: me, np, total

  call compas_init()
  me = compas_rank()
  np = compas_processes()
  total = first_of(np) - 1
  call ghost_list()
  call neighbours()
  call columns32()
  call columns64()
  call large()
  call errors()
  call compas_finalize()
  if (me == 0) print '(a)', 'PASS'

contains

  integer function count_of(r)
    integer, intent(in) :: r
    count_of = 3 + 2 * r
  end function

  ! The first global index (1-based) of process r's entries; first_of(np) - 1 is the total.
  integer function first_of(r)
    integer, intent(in) :: r
    integer :: q
    first_of = 1
    do q = 0, r - 1
      first_of = first_of + count_of(q)
    end do
  end function

  real(real64) function f(i)
    integer(int64), intent(in) :: i
    f = 3d0 * i + 1d0
  end function

  function str(i) result(text)
    integer, intent(in) :: i
    character(:), allocatable :: text
    character(12) :: b
    write (b, '(i0)') i
    text = trim(b)
  end function

  ! The sizes of a plan of n_local entries and ng ghosts at this process.
  subroutine check_sizes(plan, ng, what)
    type(compas_ghosts), intent(in) :: plan
    integer, intent(in) :: ng
    character(*), intent(in) :: what
    integer(int64) :: first
    integer :: owned, n
    call compas_ghosts_sizes(plan, first, owned, n)
    call check(first == first_of(me) .and. owned == count_of(me) .and. n == ng, what // ' sizes')
  end subroutine

  subroutine ghost_list()
    type(compas_ghosts) :: plan
    integer(int64), allocatable :: g(:), w(:)
    real(real64), allocatable :: v(:)
    integer :: q, k, n, owned
    integer(int64) :: want
    allocate (g(0))
    do q = 0, np - 1
      if (q /= me) g = [g, int(first_of(q), int64), int(first_of(q), int64), &
                        int(first_of(q + 1) - 1, int64)]
    end do
    g = [g, int(first_of(me), int64), int(first_of(me + 1) - 1, int64)]
    n = size(g)
    owned = count_of(me)
    call compas_ghosts_create(plan, owned, g)
    call check_sizes(plan, n, 'ghost list')
    allocate (v(owned + n))
    v(1:owned) = [(f(int(first_of(me) + k - 1, int64)), k = 1, owned)]
    v(owned + 1:) = -1
    call compas_ghosts_update(plan, v)
    call check(all(v(owned + 1:) == [(f(g(k)), k = 1, n)]), 'every ghost holds its owner''s entry')
    call check(all(v(1:owned) == [(f(int(first_of(me) + k - 1, int64)), k = 1, owned)]), &
               'the owned entries are left as they were')
    ! Each process's ghosts add rank + 1 each into their owners, whose entries start at 7.
    allocate (w(owned + n))
    w(1:owned) = 7
    w(owned + 1:) = me + 1
    call compas_ghosts_accumulate(plan, w)
    call check(all(w(owned + 1:) == me + 1), 'the ghosts keep their values')
    do k = 1, owned
      want = 7
      if (k == 1) want = want + 2 * (others() - me - 1) + me + 1
      if (k == owned) want = want + (others() - me - 1) + me + 1
      call check(w(k) == want, 'entry ' // str(k) // ' after the accumulation')
    end do
    call compas_ghosts_destroy(plan)
  end subroutine

  ! The sum of q + 1 over every process (this one's included).
  integer function others()
    others = np * (np + 1) / 2
  end function

  subroutine neighbours()
    type(compas_ghosts) :: plan
    integer(int32) :: g(2)
    integer(int32), allocatable :: vi(:)
    real(real32), allocatable :: vr(:)
    integer :: owned, k
    g = [first_of(modulo(me - 1, np) + 1) - 1, first_of(modulo(me + 1, np))]
    owned = count_of(me)
    call compas_ghosts_create(plan, owned, g)
    call check_sizes(plan, 2, 'neighbours')
    allocate (vi(owned + 2), vr(owned + 2))
    vi = -1
    vr = -1
    do k = 1, owned
      vi(k) = 3 * (first_of(me) + k - 1) + 1
      vr(k) = real(vi(k), real32)
    end do
    call compas_ghosts_update(plan, vi)
    call compas_ghosts_update(plan, vr)
    call check(all(vi(owned + 1:) == 3 * g + 1), 'integer(4) ghosts of the neighbours')
    call check(all(vr(owned + 1:) == real(3 * g + 1, real32)), 'real(4) ghosts of the neighbours')
    call compas_ghosts_destroy(plan)
  end subroutine

  ! Each owned row's columns: i-1, i, i+1 (those in 1..total), 1 and total, i+1 once more.
  subroutine row_columns(cols)
    integer(int64), allocatable, intent(out) :: cols(:)
    integer :: i, j
    allocate (cols(0))
    do i = first_of(me), first_of(me + 1) - 1
      do j = i - 1, i + 1
        if (j >= 1 .and. j <= total) cols = [cols, int(j, int64)]
      end do
      cols = [cols, 1_int64, int(total, int64)]
      if (i < total) cols = [cols, int(i + 1, int64)]
    end do
  end subroutine

  ! The local position the module must give global column c: owned c - first + 1, off-process
  ! n_owned + its rank among the distinct off-process columns (sorted).
  integer function position(c, cols)
    integer(int64), intent(in) :: c, cols(:)
    integer(int64) :: lo, hi
    integer :: j
    logical :: seen
    lo = first_of(me)
    hi = first_of(me + 1) - 1
    if (c >= lo .and. c <= hi) then
      position = int(c - lo) + 1
      return
    end if
    position = count_of(me) + 1
    do j = 1, size(cols)  ! every distinct off-process column below c
      if (cols(j) >= c .or. (cols(j) >= lo .and. cols(j) <= hi)) cycle
      seen = any(cols(1:j - 1) == cols(j))
      if (.not. seen) position = position + 1
    end do
  end function

  ! The number of distinct off-process columns.
  integer function off_process(cols)
    integer(int64), intent(in) :: cols(:)
    integer :: j
    off_process = 0
    do j = 1, size(cols)
      if (cols(j) >= first_of(me) .and. cols(j) < first_of(me + 1)) cycle
      if (.not. any(cols(1:j - 1) == cols(j))) off_process = off_process + 1
    end do
  end function

  subroutine columns32()
    type(compas_ghosts) :: plan
    integer(int64), allocatable :: global(:)
    integer(int32), allocatable :: cols(:)
    real(real64), allocatable :: x(:)
    integer :: e, ng, owned
    call row_columns(global)
    cols = int(global, int32)
    owned = count_of(me)
    call compas_ghosts_create_columns(plan, owned, cols)
    ng = off_process(global)
    call check_sizes(plan, ng, 'columns (int32)')
    do e = 1, size(cols)
      call check(cols(e) == position(global(e), global), 'column ' // str(int(global(e))) // &
                 ' at ' // str(e) // ' rewritten to ' // str(int(cols(e))))
    end do
    call check(ng == 0 .or. maxval(cols) == owned + ng, 'the last local position')
    allocate (x(owned + ng))
    x = -1
    x(1:owned) = [(f(int(first_of(me) + e - 1, int64)), e = 1, owned)]
    call compas_ghosts_update(plan, x)
    call check(all(x(cols) == [(f(global(e)), e = 1, size(global))]), 'x(col(e)) after the update')
    call compas_ghosts_destroy(plan)
  end subroutine

  subroutine columns64()
    type(compas_ghosts) :: plan
    integer(int64), allocatable :: global(:), cols(:), y(:)
    integer :: e, ng, owned
    call row_columns(global)
    cols = global
    owned = count_of(me)
    call compas_ghosts_create_columns(plan, owned, cols)
    ng = off_process(global)
    call check_sizes(plan, ng, 'columns (int64)')
    call check(all(cols == [(int(position(global(e), global), int64), e = 1, size(global))]), &
               'int64 columns rewritten to local positions')
    allocate (y(owned + ng))
    y = 0
    y(owned + 1:) = 1
    call compas_ghosts_accumulate(plan, y)
    call check(all(y(1:owned) == [(accumulated(first_of(me) + e - 1), e = 1, owned)]), &
               'the owners'' sums from the columns'' ghosts')
    call compas_ghosts_destroy(plan)
  end subroutine

  ! How many processes hold global entry i as a column ghost (the rows' pattern): process q
  ! does when one of its rows' columns is i and i is not its own.
  integer(int64) function accumulated(i)
    integer, intent(in) :: i
    integer :: q
    accumulated = 0
    do q = 0, np - 1
      if (i >= first_of(q) .and. i < first_of(q + 1)) cycle
      if (i == 1 .or. i == total .or. i == first_of(q) - 1 .or. i == first_of(q + 1)) &
        accumulated = accumulated + 1
    end do
  end function

  subroutine large()
    type(compas_ghosts) :: plan
    integer, parameter :: base = 5000, width = 7
    integer(int64), allocatable :: g(:)
    integer(int32), allocatable :: cols(:), global(:)
    real(real64), allocatable :: v(:)
    integer :: owned, nxt, k, i, j, n, lo, hi, all_n
    owned = base + me
    nxt = modulo(me + 1, np)
    lo = 1 + base * me + me * (me - 1) / 2
    all_n = base * np + np * (np - 1) / 2
    allocate (g(base + nxt))
    do k = 1, base + nxt
      g(k) = 1 + base * nxt + nxt * (nxt - 1) / 2 + k - 1
    end do
    call compas_ghosts_create(plan, owned, g)
    allocate (v(owned + size(g)))
    v(1:owned) = [(f(int(lo + k - 1, int64)), k = 1, owned)]
    v(owned + 1:) = 0
    call compas_ghosts_update(plan, v)
    call check(all(v(owned + 1:) == [(f(g(k)), k = 1, size(g))]), 'the large update')
    call compas_ghosts_destroy(plan)
    ! 15 columns a row, the band i - 7 .. i + 7 (those in the domain).
    hi = lo + owned - 1
    allocate (global((2 * width + 1) * owned))
    n = 0
    do i = lo, hi
      do j = max(1, i - width), min(all_n, i + width)
        n = n + 1
        global(n) = j
      end do
    end do
    cols = global(1:n)
    call compas_ghosts_create_columns(plan, owned, cols)
    call check_large(plan, cols, global(1:n), lo, owned)
    call compas_ghosts_destroy(plan)
  end subroutine

  subroutine check_large(plan, cols, global, lo, owned)
    type(compas_ghosts), intent(in) :: plan
    integer(int32), intent(in) :: cols(:), global(:)
    integer, intent(in) :: lo, owned
    real(real64), allocatable :: x(:)
    integer :: ng, k
    call compas_ghosts_sizes(plan, n_ghosts=ng)
    call check(ng == merge(0, 7, me == 0) + merge(0, 7, me == np - 1), 'the band''s ghosts')
    allocate (x(owned + ng))
    x(1:owned) = [(f(int(lo + k - 1, int64)), k = 1, owned)]
    x(owned + 1:) = 0
    call compas_ghosts_update(plan, x)
    call check(all(x(cols) == [(f(int(global(k), int64)), k = 1, size(global))]), &
               'x(col(e)) over the band')
  end subroutine

  subroutine errors()
    type(compas_ghosts) :: plan, copy
    integer(int64) :: bad(2)
    integer(int32), allocatable :: cols(:), kept(:)
    real(real64), allocatable :: v(:)
    integer :: ierr, n
    ! Index 0: a valid index to C, not to the module.
    call compas_ghosts_create(plan, count_of(me), [0_int64], ierr=ierr)
    call expect(ierr, COMPAS_ERR_ARG, 'process 0: index 0 at position 1 is outside the &
                &partition''s domain 1..' // str(total))
    bad = [1_int64, int(total + 5, int64)]
    if (me /= np - 1) bad(2) = total
    call compas_ghosts_create(plan, count_of(me), bad, ierr=ierr)
    call expect(ierr, COMPAS_ERR_ARG, 'process ' // str(np - 1) // ': index ' // &
                str(total + 5) // ' at position 2 is outside the partition''s domain 1..' // &
                str(total))
    call expect_handle(plan, 'plan is NULL')
    ! A process with no entry (the last): refused on every process.
    call compas_ghosts_create(plan, merge(0, count_of(me), me == np - 1), [1_int64], ierr=ierr)
    call expect(ierr, COMPAS_ERR_COLLECTIVE, 'holds 0 indices')
    ! A column one past the last: the message 1-based, cols as they were.
    allocate (kept(4))
    kept = [int(first_of(me), int32), int(total, int32), 1_int32, &
            int(merge(total + 1, total, me == 0), int32)]
    cols = kept
    call compas_ghosts_create_columns(plan, count_of(me), cols, ierr=ierr)
    call expect(ierr, COMPAS_ERR_COLLECTIVE, 'column ' // str(total + 1) // ' at position 4 is &
                &outside the domain 1..' // str(total))
    call check(all(cols == kept), 'the columns as they were after the error')
    ! A vector of the wrong size (on the last process), then a destroyed plan.
    call compas_ghosts_create(plan, count_of(me), [1_int64])
    n = count_of(me) + 1 + merge(1, 0, me == np - 1)
    allocate (v(n))
    call compas_ghosts_update(plan, v, ierr=ierr)
    call expect(ierr, COMPAS_ERR_COLLECTIVE, 'a vector of ' // str(count_of(np - 1) + 2) // &
                ' elements, ' // str(count_of(np - 1) + 1) // ' are needed')
    ! The plan still serves the right size.
    v = 1
    call compas_ghosts_accumulate(plan, v(1:count_of(me) + 1), ierr=ierr)
    call check(ierr == COMPAS_OK .and. v(1) == 1 + merge(np, 0, me == 0), &
               'an accumulation after the refused update')
    copy = plan
    call compas_ghosts_destroy(plan)
    call expect_handle(plan, 'plan is NULL')
    call expect_handle(copy, 'plan is not a live compas_ghosts')
  end subroutine

  ! A plan never made or destroyed: the calls fail, the sizes are -1.
  subroutine expect_handle(plan, text)
    type(compas_ghosts), intent(in) :: plan
    character(*), intent(in) :: text
    integer(int64) :: first
    integer :: owned, ng, ierr
    real(real64) :: v(4)
    v = 0
    call compas_ghosts_sizes(plan, first, owned, ng, ierr=ierr)
    call check(first == -1 .and. owned == -1 .and. ng == -1, 'the sizes of no plan')
    call expect(ierr, COMPAS_ERR_HANDLE, text)
    call compas_ghosts_update(plan, v, ierr=ierr)
    call expect(ierr, COMPAS_ERR_HANDLE, text)
  end subroutine
end program ghosts
