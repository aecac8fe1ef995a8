c f77_halos.f: compas arrays through the dummies of FORTRAN 77 style
c routines, on every process of a job (tests/apps: fortran.f77_halos,
c compas-run at 1, 2 and 3 processes, and 1 process of 2 threads).
c The main program makes each array with compas_create and passes the
c pointer to routines whose dummies are explicit-shape, halos included
c (u(0:m1+1, 0:m2+1) and u(m1+2, m2+2) styles), or assumed-size
c (u(0:m1+1, 0:*)), or given only the owned columns (an address inside
c the array); those routines fill the owned cells with the global
c function, exchange (compas_exchange, compas_begin_exchange with
c compas_wait) or accumulate, and check every halo cell against the
c function at its image (periodic dimensions wrap; past a non-periodic
c boundary the cell keeps -1). 2-D arrays cut along dimension 2 and
c along dimension 1 (grid: every process's extents differ at 3), 3-D
c ones over the chosen grid, periodic and not. The arrays are contiguous
c by default (is_contiguous), so the compiler passes their address and
c the module finds them by it. Prints PASS on process 0.
      program f77halos
      use compas
      implicit none
      integer me, np, iper
      common /job/ me, np
      call compas_init()
      me = compas_rank()
      np = compas_processes()
      do iper = 0, 1
         call test2(iper == 1, .false.)
         call test2(iper == 1, .true.)
         call test3(iper == 1)
      end do
      call compas_finalize()
      if (me == 0) print '(a)', 'PASS'
      end

c FAIL and the job's end when ok is false.
      subroutine check(ok, what)
      implicit none
      logical ok
      character(*) what
      integer me, np
      common /job/ me, np
      if (ok) return
      write (*, '(a, i0, 2a)') 'FAIL on process ', me, ': ', what
      error stop 1
      end

c The global function: what owned cell (x, y, z) holds.
      double precision function f(x, y, z)
      implicit none
      integer x, y, z
      f = x + 100.0d0 * y + 10000.0d0 * z
      end

c The value halo cell x of a dimension [1, n] holds after an exchange:
c its image (periodic), or -1 (past a non-periodic boundary), in w.
      logical function image(x, n, per, w)
      implicit none
      integer x, n, w
      logical per
      w = x
      image = x >= 1 .and. x <= n
      if (image .or. .not. per) return
      w = 1 + modulo(x - 1, n)
      image = .true.
      end

c A 2-D array n1 x n2 (cut along dimension 1 over a grid when cut1),
c periodic or not: exchanged through each style of dummy, accumulated
c through one (the same result as through the pointer itself).
      subroutine test2(per, cut1)
      use compas
      implicit none
      logical per, cut1
      integer me, np
      common /job/ me, np
      double precision, pointer :: u(:, :), v(:, :)
      integer lo(2), hi(2), m1, m2, n1, n2
      n1 = 10
      n2 = 7
      if (cut1) then
         call compas_create(u, [1, 1], [n1, n2], periodic=[per],
     &                      grid=[np, 1])
         call compas_create(v, [1, 1], [n1, n2], periodic=[per],
     &                      grid=[np, 1])
      else
         call compas_create(u, [1, 1], [n1, n2], periodic=[per])
         call compas_create(v, [1, 1], [n1, n2], periodic=[per])
      end if
      call check(is_contiguous(u), '2-D array not contiguous')
      call compas_bounds(u, lo, hi)
      m1 = hi(1) - lo(1) + 1
      m2 = hi(2) - lo(2) + 1
      call set2(u, m1, m2, lo)
      call exch2a(u, m1, m2)
      call check2(u, m1, m2, lo, n1, n2, per, 'exch2a: u(0:m1+1, ...)')
      call set2(u, m1, m2, lo)
      call exch2b(u, m1, m2)
      call check2(u, m1, m2, lo, n1, n2, per, 'exch2b: u(m1+2, ...)')
      call set2(u, m1, m2, lo)
      call exch2c(u, m1)
      call check2(u, m1, m2, lo, n1, n2, per, 'exch2c: u(0:m1+1, 0:*)')
      call set2(u, m1, m2, lo)
      call exch2d(u(:, lo(2):hi(2)), m1, m2)
      call check2(u, m1, m2, lo, n1, n2, per,
     &            'exch2d: the owned columns')
      call set2(u, m1, m2, lo)
      call set2(v, m1, m2, lo)
      u = u + 1
      v = v + 1
      call accum2(u, m1, m2)
      call compas_accumulate_halos(v)
      call check(all(u == v), '2-D accumulation through a dummy')
      call compas_destroy(u)
      call compas_destroy(v)
      end

c Owned cells the function, halo cells -1 (global (lo1, lo2) at (1, 1)).
      subroutine set2(u, m1, m2, lo)
      implicit none
      integer m1, m2, lo(2), i, j
      double precision u(0:m1 + 1, 0:m2 + 1), f
      u = -1
      do j = 1, m2
         do i = 1, m1
            u(i, j) = f(lo(1) - 1 + i, lo(2) - 1 + j, 0)
         end do
      end do
      end

      subroutine exch2a(u, m1, m2)
      use compas
      implicit none
      integer m1, m2
      double precision u(0:m1 + 1, 0:m2 + 1)
      call compas_exchange(u)
      end

      subroutine exch2b(u, m1, m2)
      use compas
      implicit none
      integer m1, m2
      double precision u(m1 + 2, m2 + 2)
      type(compas_exchange_handle) x
      call compas_begin_exchange(u, x)
      call compas_wait(x)
      end

      subroutine exch2c(u, m1)
      use compas
      implicit none
      integer m1
      double precision u(0:m1 + 1, 0:*)
      call compas_exchange(u)
      end

c Given the owned columns only (u(:, lo2:hi2)): an address inside the
c array, which names the whole of it.
      subroutine exch2d(u, m1, m2)
      use compas
      implicit none
      integer m1, m2
      double precision u(0:m1 + 1, m2)
      call compas_exchange(u)
      end

      subroutine accum2(u, m1, m2)
      use compas
      implicit none
      integer m1, m2
      double precision u(m1 + 2, m2 + 2)
      call compas_accumulate_halos(u)
      end

c Every cell against the function at its image, or -1.
      subroutine check2(u, m1, m2, lo, n1, n2, per, what)
      implicit none
      integer m1, m2, lo(2), n1, n2, i, j, x, y
      double precision u(0:m1 + 1, 0:m2 + 1), f, want
      logical per, image, ok, inx, iny
      character(*) what
      ok = .true.
      do j = 0, m2 + 1
         do i = 0, m1 + 1
            want = -1
            inx = image(lo(1) - 1 + i, n1, per, x)
            iny = image(lo(2) - 1 + j, n2, per, y)
            if (inx .and. iny) want = f(x, y, 0)
            ok = ok .and. u(i, j) == want
         end do
      end do
      call check(ok, what)
      end

c A 3-D array 6 x 5 x 7 over the chosen grid, periodic or not,
c exchanged through each style of dummy, accumulated through one.
      subroutine test3(per)
      use compas
      implicit none
      logical per
      double precision, pointer :: u(:, :, :), v(:, :, :)
      integer lo(3), hi(3), m(3), n(3)
      n = [6, 5, 7]
      call compas_create(u, [1, 1, 1], n, periodic=[per])
      call compas_create(v, [1, 1, 1], n, periodic=[per])
      call check(is_contiguous(u), '3-D array not contiguous')
      call compas_bounds(u, lo, hi)
      m = hi - lo + 1
      call set3(u, m(1), m(2), m(3), lo)
      call exch3a(u, m(1), m(2), m(3))
      call check3(u, m, lo, n, per, 'exch3a: u(0:m1+1, ...)')
      call set3(u, m(1), m(2), m(3), lo)
      call exch3b(u, m(1), m(2), m(3))
      call check3(u, m, lo, n, per, 'exch3b: u(m1+2, ...)')
      call set3(u, m(1), m(2), m(3), lo)
      call exch3c(u, m(1), m(2))
      call check3(u, m, lo, n, per, 'exch3c: u(0:m1+1, 0:m2+1, 0:*)')
      call set3(u, m(1), m(2), m(3), lo)
      call set3(v, m(1), m(2), m(3), lo)
      u = u + 1
      v = v + 1
      call accum3(u, m(1), m(2), m(3))
      call compas_accumulate_halos(v)
      call check(all(u == v), '3-D accumulation through a dummy')
      call compas_destroy(u)
      call compas_destroy(v)
      end

      subroutine set3(u, m1, m2, m3, lo)
      implicit none
      integer m1, m2, m3, lo(3), i, j, k
      double precision u(0:m1 + 1, 0:m2 + 1, 0:m3 + 1), f
      u = -1
      do k = 1, m3
         do j = 1, m2
            do i = 1, m1
               u(i, j, k) = f(lo(1) - 1 + i, lo(2) - 1 + j,
     &                        lo(3) - 1 + k)
            end do
         end do
      end do
      end

      subroutine exch3a(u, m1, m2, m3)
      use compas
      implicit none
      integer m1, m2, m3
      double precision u(0:m1 + 1, 0:m2 + 1, 0:m3 + 1)
      call compas_exchange(u)
      end

      subroutine exch3b(u, m1, m2, m3)
      use compas
      implicit none
      integer m1, m2, m3
      double precision u(m1 + 2, m2 + 2, m3 + 2)
      type(compas_exchange_handle) x
      call compas_begin_exchange(u, x)
      call compas_wait(x)
      end

      subroutine exch3c(u, m1, m2)
      use compas
      implicit none
      integer m1, m2
      double precision u(0:m1 + 1, 0:m2 + 1, 0:*)
      call compas_exchange(u)
      end

      subroutine accum3(u, m1, m2, m3)
      use compas
      implicit none
      integer m1, m2, m3
      double precision u(m1 + 2, m2 + 2, m3 + 2)
      call compas_accumulate_halos(u)
      end

      subroutine check3(u, m, lo, n, per, what)
      implicit none
      integer m(3), lo(3), n(3), i, j, k, x, y, z
      double precision u(0:m(1) + 1, 0:m(2) + 1, 0:m(3) + 1), f, want
      logical per, image, ok, inx, iny, inz
      character(*) what
      ok = .true.
      do k = 0, m(3) + 1
         do j = 0, m(2) + 1
            do i = 0, m(1) + 1
               want = -1
               inx = image(lo(1) - 1 + i, n(1), per, x)
               iny = image(lo(2) - 1 + j, n(2), per, y)
               inz = image(lo(3) - 1 + k, n(3), per, z)
               if (inx .and. iny .and. inz) want = f(x, y, z)
               ok = ok .and. u(i, j, k) == want
            end do
         end do
      end do
      call check(ok, what)
      end
