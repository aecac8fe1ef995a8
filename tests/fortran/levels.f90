! The module's 3-D levels under compas-run (1 to 4 processes), through explicit-shape dummies as an
! F77-style program passes its levels:
!  - compas_create with split points (split3: parts of 2 and 4 planes by rank): every process's
!    bounds are the part the split points give it, the grid 1 x 1 x P, and the periodic exchange
!    (called inside a routine on u(n1, n2, n3)) fills the halos with the wrapped cells' values;
!  - compas_create(uc, like=u, coarsen=2): aligned, so injection from the fine cell 2c (1-based:
!    coarse c over fine 2c - 1 and 2c) reads this process's own block;
!  - the coarse level onto a group of the first two processes (like=uc, group=g) and back, one
!    compas_redistribute each way: every owned cell holds the value computed here; a non-member
!    holds nothing (compas_member .false., an empty pointer) and passes its empty pointer;
!  - errors with ierr, naming the value: split points that do not end at hi + 1, split points of a
!    2-D array, a factor that misaligns a boundary, a factor of 0, arrays of two domains, a group
!    with arrays on it. Prints PASS on process 0.
program levels
  use compas
  use test_checks
  implicit none
  integer :: me, np, p, ierr, lo(3), hi(3), clo(3), chi(3), g(3), nz
  integer, allocatable :: s3(:)
  real(8), pointer :: u(:,:,:), uc(:,:,:), ug(:,:,:), bad(:,:,:), flat(:,:)
  type(compas_group) :: few

  call compas_init()
  me = compas_rank()
  np = compas_processes()
  allocate (s3(np + 1))
  do p = 0, np
    s3(p + 1) = first(p)
  end do
  nz = first(np) - 1
  call compas_create(u, [1, 1, 1], [6, 4, nz], periodic=[.true.], split1=[1, 7], split2=[1, 5], &
                     split3=s3)
  call compas_bounds(u, lo, hi)
  call check(all(lo == [1, 1, first(me)]) .and. all(hi == [6, 4, first(me + 1) - 1]), 'bounds')
  call compas_grid(u, g)
  call check(all(g == [1, 1, np]), 'grid')
  call fill(u, size(u, 1), size(u, 2), size(u, 3), lo, hi)
  call halo(u, size(u, 1), size(u, 2), size(u, 3))
  call check(wrong(u, lbound(u), ubound(u), [6, 4, nz], 1, 1d0) == 0, 'halos after the exchange')

  call compas_create(uc, like=u, coarsen=2)
  call compas_bounds(uc, clo, chi)
  call check(all(clo == (lo + 1) / 2) .and. all(chi == hi / 2), 'coarse bounds')
  call inject(u, size(u, 1), size(u, 2), size(u, 3), uc, size(uc, 1), size(uc, 2), size(uc, 3))
  call check(wrong(uc, clo, chi, [3, 2, nz / 2], 2, 1d0) == 0, 'injection onto the aligned level')

  call compas_group_split(merge(0, -1, me < 2), me, few)
  call compas_create(ug, like=uc, group=few)
  call check(compas_member(ug) .eqv. me < 2, 'membership')
  call check(me < 2 .or. size(ug) == 0, 'a non-member holds no cell')
  call compas_redistribute(uc, ug)
  call compas_bounds(ug, lo, hi)
  call check(wrong(ug, lo, hi, [3, 2, nz / 2], 2, 1d0) == 0, 'the level on the group')
  ug = -ug
  call compas_redistribute(ug, uc)
  call check(wrong(uc, clo, chi, [3, 2, nz / 2], 2, -1d0) == 0, 'the level back on every process')

  call compas_create(bad, [1, 1, 1], [6, 4, nz], split1=[1, 7], split2=[1, 5], &
                     split3=[s3(1:np), nz + 3], ierr=ierr)
  call expect(ierr, COMPAS_ERR_ARG, 'the last split point is hi(d) + 1 = ')
  deallocate (s3)
  call compas_create(flat, [1, 1], [6, 4], split1=[1, 7], split2=[1, 5], ierr=ierr)
  call expect(ierr, COMPAS_ERR_ARG, 'split points and groups are for 3-D arrays')
  call compas_create(bad, like=u, coarsen=4, ierr=ierr)
  call expect(ierr, COMPAS_ERR_ARG, 'not a multiple of 4')
  call compas_create(bad, like=u, coarsen=0, ierr=ierr)
  call expect(ierr, COMPAS_ERR_ARG, 'factor 0')
  call compas_redistribute(u, uc, ierr=ierr)
  call expect(ierr, COMPAS_ERR_COLLECTIVE, 'one domain')
  call compas_group_destroy(few, ierr=ierr)
  call expect(ierr, COMPAS_ERR_STATE, 'lie on the group')
  call compas_destroy(ug)
  call compas_group_destroy(few)
  call compas_finalize()
  if (me == 0) print '(a)', 'PASS'

contains

  ! The first plane of part p: parts of 2 planes (p even) and 4 (p odd) from plane 1.
  integer function first(p)
    integer, intent(in) :: p
    integer :: q
    first = 1
    do q = 0, p - 1
      first = first + merge(4, 2, mod(q, 2) == 1)
    end do
  end function

  real(8) function f(i, j, k)
    integer, intent(in) :: i, j, k
    f = 10007d0 * k + 101 * j + i
  end function

  ! The cells of u in lo..hi that do not hold sgn * f at c times the index wrapped into 1..n (c 2
  ! for the coarse level: injection from the fine cell 2c).
  integer function wrong(u, lo, hi, n, c, sgn)
    real(8), pointer, intent(in) :: u(:,:,:)
    integer, intent(in) :: lo(3), hi(3), n(3), c
    real(8), intent(in) :: sgn
    integer :: i, j, k, w(3)
    wrong = 0
    do k = lo(3), hi(3)
      do j = lo(2), hi(2)
        do i = lo(1), hi(1)
          w = c * (modulo([i, j, k] - 1, n) + 1)
          if (u(i, j, k) /= sgn * f(w(1), w(2), w(3))) wrong = wrong + 1
        end do
      end do
    end do
  end function

  ! F77-style routines: the local block as an explicit-shape array, 1-based.
  subroutine fill(u, n1, n2, n3, lo, hi)
    integer, intent(in) :: n1, n2, n3, lo(3), hi(3)
    real(8), intent(inout) :: u(n1, n2, n3)
    integer :: i, j, k
    do k = 2, n3 - 1
      do j = 2, n2 - 1
        do i = 2, n1 - 1
          u(i, j, k) = f(lo(1) + i - 2, lo(2) + j - 2, lo(3) + k - 2)
        end do
      end do
    end do
    call check(n1 == hi(1) - lo(1) + 3, 'extent')
  end subroutine

  subroutine halo(u, n1, n2, n3)
    integer, intent(in) :: n1, n2, n3
    real(8), intent(inout) :: u(n1, n2, n3)
    call compas_exchange(u)
  end subroutine

  ! s(c) = r(2c) in local indices: coarse interior j over fine interior 2j - 2 + 1 (halo 1).
  subroutine inject(r, m1, m2, m3, s, n1, n2, n3)
    integer, intent(in) :: m1, m2, m3, n1, n2, n3
    real(8), intent(in) :: r(m1, m2, m3)
    real(8), intent(inout) :: s(n1, n2, n3)
    integer :: i, j, k
    call check(m1 - 2 == 2 * (n1 - 2) .and. m3 - 2 == 2 * (n3 - 2), 'aligned extents')
    do k = 2, n3 - 1
      do j = 2, n2 - 1
        do i = 2, n1 - 1
          s(i, j, k) = r(2 * i - 1, 2 * j - 1, 2 * k - 1)
        end do
      end do
    end do
  end subroutine
end program levels
