c mg_openmp.f: NAS MG's V-cycle multigrid on a periodic n^3 grid,
c OpenMP (the original the MPI version and later ports are checked
c against; README.md gives the definition).
c
c Usage: mg_openmp [CLASS]          CLASS = S, W, A, B or C (default S)
c        mg_openmp N NIT [REF]      N = 2^k (4..1024) cells per side,
c                                   NIT iterations, REF the expected
c                                   final residual norm (optional)
c Prints the residual norm after each iteration, the time and one
c verification line; exits 1 when the verification fails, 2 on bad
c input. mg_common.f holds the command line, the coefficients, the
c verification and the random numbers.
c
c Levels k = 1..lt hold (2^k+2)^3 points: 2^k cells per side and one
c halo layer each side (filled by comm3, the grid is periodic). The
c levels of u and r lie one after the other in one work array each,
c level k at offset ou(k); every operator takes a level as an
c explicit-shape array u(n1,n2,n3).

      program mgomp
      implicit none
      integer lm, omp_get_max_threads
      double precision omp_get_wtime
      parameter (lm = 11)
      integer n, nit, lt, k, it, m(lm), ou(lm), nw, nv
      double precision ref, rnm, t0, t1, a(0:3), c(0:3)
      character cls
      character(200) msg
      double precision, allocatable :: u(:), r(:), v(:)
      double precision rnorm
      logical verok
      common /coef/ a, c

      call getcfg('mg_openmp', n, nit, ref, cls, msg)
      if (msg .ne. ' ') then
         write(0, '(a)') trim(msg)
         stop 2
      endif
      call setcoef(cls)
      lt = nint(log(dble(n)) / log(2d0))
      nw = 0
      do k = 1, lt
         m(k) = 2**k + 2
         ou(k) = nw + 1
         nw = nw + m(k)**3
      enddo
      nv = m(lt)**3
      allocate(u(nw), r(nw), v(nv))
      write(*, '(a,a,a,i4,a,i4,a,i3,a)') ' mg_openmp: class ', cls,
     >   ', ', n, '^3 cells, ', nit, ' iterations, ',
     >   omp_get_max_threads(), ' threads'

      call zran3(v, m(lt), m(lt), m(lt))

      t0 = omp_get_wtime()
      call zero3(u(ou(lt)), m(lt), m(lt), m(lt))
      call copy3(v, r(ou(lt)), m(lt), m(lt), m(lt))
      call resid(u(ou(lt)), r(ou(lt)), m(lt), m(lt), m(lt))
      call comm3(r(ou(lt)), m(lt), m(lt), m(lt))
      do it = 1, nit
         call mg3p(u, r, v, m, ou, lt)
         call copy3(v, r(ou(lt)), m(lt), m(lt), m(lt))
         call resid(u(ou(lt)), r(ou(lt)), m(lt), m(lt), m(lt))
         call comm3(r(ou(lt)), m(lt), m(lt), m(lt))
         rnm = sqrt(rnorm(r(ou(lt)), m(lt), m(lt), m(lt))
     >              / dble(n)**3)
         write(*, '(a,i5,a,es24.16)') ' iter', it,
     >      '  residual norm = ', rnm
      enddo
      t1 = omp_get_wtime()
      write(*, '(a,f12.4,a)') ' time = ', t1 - t0, ' s'
      deallocate(u, r, v)
      if (.not. verok(rnm, ref, n, nit, .true.)) stop 1
      end

c The V-cycle u = u + M^k r (NPB's mg3P): restrict r down to level 1,
c smooth there, then on the way up interpolate the correction, take
c the level's residual and smooth. At the top, r = v - A u.
      subroutine mg3p(u, r, v, m, ou, lt)
      implicit none
      integer lt, m(lt), ou(lt), k
      double precision u(*), r(*), v(*)
      do k = lt, 2, -1
         call rprj3(r(ou(k)), m(k), m(k), m(k),
     >              r(ou(k-1)), m(k-1), m(k-1), m(k-1))
         call comm3(r(ou(k-1)), m(k-1), m(k-1), m(k-1))
      enddo
      call zero3(u(ou(1)), m(1), m(1), m(1))
      call psinv(r(ou(1)), u(ou(1)), m(1), m(1), m(1))
      call comm3(u(ou(1)), m(1), m(1), m(1))
      do k = 2, lt
         if (k .lt. lt) then
            call zero3(u(ou(k)), m(k), m(k), m(k))
         else
            call copy3(v, r(ou(k)), m(k), m(k), m(k))
         endif
         call interp(u(ou(k-1)), m(k-1), m(k-1), m(k-1),
     >               u(ou(k)), m(k), m(k), m(k))
         call comm3(u(ou(k)), m(k), m(k), m(k))
         call resid(u(ou(k)), r(ou(k)), m(k), m(k), m(k))
         call comm3(r(ou(k)), m(k), m(k), m(k))
         call psinv(r(ou(k)), u(ou(k)), m(k), m(k), m(k))
         call comm3(u(ou(k)), m(k), m(k), m(k))
      enddo
      end

c r = r - A u on the interior (A: 27 points, a(0) at the centre, a(1)
c the 6 faces, a(2) the 12 edges, a(3) the 8 corners). u1 and u2 sum,
c for each i1 of a line, the 4 face and the 4 corner neighbours in the
c (i2, i3) plane.
      subroutine resid(u, r, n1, n2, n3)
      implicit none
      integer n1, n2, n3, i1, i2, i3
      double precision u(n1,n2,n3), r(n1,n2,n3), u1(n1), u2(n1)
      double precision a(0:3), c(0:3)
      common /coef/ a, c
!$omp parallel do private(i1, i2, u1, u2)
      do i3 = 2, n3-1
         do i2 = 2, n2-1
            do i1 = 1, n1
               u1(i1) = u(i1,i2-1,i3) + u(i1,i2+1,i3)
     >                + u(i1,i2,i3-1) + u(i1,i2,i3+1)
               u2(i1) = u(i1,i2-1,i3-1) + u(i1,i2+1,i3-1)
     >                + u(i1,i2-1,i3+1) + u(i1,i2+1,i3+1)
            enddo
            do i1 = 2, n1-1
               r(i1,i2,i3) = r(i1,i2,i3) - a(0)*u(i1,i2,i3)
     >            - a(1)*(u(i1-1,i2,i3) + u(i1+1,i2,i3) + u1(i1))
     >            - a(2)*(u2(i1) + u1(i1-1) + u1(i1+1))
     >            - a(3)*(u2(i1-1) + u2(i1+1))
            enddo
         enddo
      enddo
      end

c u = u + S r on the interior (S: the same 27 points with c(0:3)).
      subroutine psinv(r, u, n1, n2, n3)
      implicit none
      integer n1, n2, n3, i1, i2, i3
      double precision u(n1,n2,n3), r(n1,n2,n3), r1(n1), r2(n1)
      double precision a(0:3), c(0:3)
      common /coef/ a, c
!$omp parallel do private(i1, i2, r1, r2)
      do i3 = 2, n3-1
         do i2 = 2, n2-1
            do i1 = 1, n1
               r1(i1) = r(i1,i2-1,i3) + r(i1,i2+1,i3)
     >                + r(i1,i2,i3-1) + r(i1,i2,i3+1)
               r2(i1) = r(i1,i2-1,i3-1) + r(i1,i2+1,i3-1)
     >                + r(i1,i2-1,i3+1) + r(i1,i2+1,i3+1)
            enddo
            do i1 = 2, n1-1
               u(i1,i2,i3) = u(i1,i2,i3) + c(0)*r(i1,i2,i3)
     >            + c(1)*(r(i1-1,i2,i3) + r(i1+1,i2,i3) + r1(i1))
     >            + c(2)*(r2(i1) + r1(i1-1) + r1(i1+1))
     >            + c(3)*(r2(i1-1) + r2(i1+1))
            enddo
         enddo
      enddo
      end

c s = P r: the coarse point j sits on the fine point i = 2j-1 (coarse
c cell k on fine cell 2k+1, 0-based): the fine point weighted 1/2, its
c 6 faces 1/4, 12 edges 1/8 and 8 corners 1/16.
      subroutine rprj3(r, m1, m2, m3, s, n1, n2, n3)
      implicit none
      integer m1, m2, m3, n1, n2, n3, i1, i2, i3, j1, j2, j3
      double precision r(m1,m2,m3), s(n1,n2,n3), x1(m1), y1(m1)
!$omp parallel do private(i1, i2, i3, j1, j2, x1, y1)
      do j3 = 2, n3-1
         i3 = 2*j3 - 1
         do j2 = 2, n2-1
            i2 = 2*j2 - 1
            do i1 = 1, m1
               x1(i1) = r(i1,i2-1,i3) + r(i1,i2+1,i3)
     >                + r(i1,i2,i3-1) + r(i1,i2,i3+1)
               y1(i1) = r(i1,i2-1,i3-1) + r(i1,i2+1,i3-1)
     >                + r(i1,i2-1,i3+1) + r(i1,i2+1,i3+1)
            enddo
            do j1 = 2, n1-1
               i1 = 2*j1 - 1
               s(j1,j2,j3) = 0.5d0*r(i1,i2,i3)
     >            + 0.25d0*(r(i1-1,i2,i3) + r(i1+1,i2,i3) + x1(i1))
     >            + 0.125d0*(y1(i1) + x1(i1-1) + x1(i1+1))
     >            + 0.0625d0*(y1(i1-1) + y1(i1+1))
            enddo
         enddo
      enddo
      end

c u = u + Q z, trilinear: the fine point 2j-1 takes the coarse value
c at j, the fine points between coarse points the mean of their 2, 4
c or 8 coarse neighbours. From the coarse halos (j = 1 and n) it
c writes the fine halos too, which comm3 then sets to the same.
      subroutine interp(z, n1, n2, n3, u, m1, m2, m3)
      implicit none
      integer m1, m2, m3, n1, n2, n3, i1, i2, i3, j1, j2, j3
      double precision z(n1,n2,n3), u(m1,m2,m3)
      double precision z1(n1), z2(n1), z3(n1)
!$omp parallel do private(i1, i2, i3, j1, j2, z1, z2, z3)
      do j3 = 1, n3-1
         i3 = 2*j3 - 1
         do j2 = 1, n2-1
            i2 = 2*j2 - 1
            do j1 = 1, n1
               z1(j1) = z(j1,j2+1,j3) + z(j1,j2,j3)
               z2(j1) = z(j1,j2,j3+1) + z(j1,j2,j3)
               z3(j1) = z(j1,j2+1,j3+1) + z(j1,j2,j3+1) + z1(j1)
            enddo
            do j1 = 1, n1-1
               i1 = 2*j1 - 1
               u(i1,i2,i3) = u(i1,i2,i3) + z(j1,j2,j3)
               u(i1+1,i2,i3) = u(i1+1,i2,i3)
     >            + 0.5d0*(z(j1+1,j2,j3) + z(j1,j2,j3))
               u(i1,i2+1,i3) = u(i1,i2+1,i3) + 0.5d0*z1(j1)
               u(i1+1,i2+1,i3) = u(i1+1,i2+1,i3)
     >            + 0.25d0*(z1(j1) + z1(j1+1))
               u(i1,i2,i3+1) = u(i1,i2,i3+1) + 0.5d0*z2(j1)
               u(i1+1,i2,i3+1) = u(i1+1,i2,i3+1)
     >            + 0.25d0*(z2(j1) + z2(j1+1))
               u(i1,i2+1,i3+1) = u(i1,i2+1,i3+1) + 0.25d0*z3(j1)
               u(i1+1,i2+1,i3+1) = u(i1+1,i2+1,i3+1)
     >            + 0.125d0*(z3(j1) + z3(j1+1))
            enddo
         enddo
      enddo
      end

c The periodic halos: axis 1 on the interior, then axis 2 and axis 3
c over the halos already filled (so edges and corners are right).
      subroutine comm3(u, n1, n2, n3)
      implicit none
      integer n1, n2, n3, i1, i2, i3
      double precision u(n1,n2,n3)
!$omp parallel do private(i2)
      do i3 = 2, n3-1
         do i2 = 2, n2-1
            u(1,i2,i3) = u(n1-1,i2,i3)
            u(n1,i2,i3) = u(2,i2,i3)
         enddo
      enddo
!$omp parallel do private(i1)
      do i3 = 2, n3-1
         do i1 = 1, n1
            u(i1,1,i3) = u(i1,n2-1,i3)
            u(i1,n2,i3) = u(i1,2,i3)
         enddo
      enddo
!$omp parallel do private(i1)
      do i2 = 1, n2
         do i1 = 1, n1
            u(i1,i2,1) = u(i1,i2,n3-1)
            u(i1,i2,n3) = u(i1,i2,2)
         enddo
      enddo
      end

      subroutine zero3(u, n1, n2, n3)
      implicit none
      integer n1, n2, n3, i1, i2, i3
      double precision u(n1,n2,n3)
!$omp parallel do private(i1, i2)
      do i3 = 1, n3
         do i2 = 1, n2
            do i1 = 1, n1
               u(i1,i2,i3) = 0d0
            enddo
         enddo
      enddo
      end

      subroutine copy3(v, u, n1, n2, n3)
      implicit none
      integer n1, n2, n3, i1, i2, i3
      double precision v(n1,n2,n3), u(n1,n2,n3)
!$omp parallel do private(i1, i2)
      do i3 = 1, n3
         do i2 = 1, n2
            do i1 = 1, n1
               u(i1,i2,i3) = v(i1,i2,i3)
            enddo
         enddo
      enddo
      end

c The sum of r^2 over the interior.
      double precision function rnorm(r, n1, n2, n3)
      implicit none
      integer n1, n2, n3, i1, i2, i3
      double precision r(n1,n2,n3), s
      s = 0d0
!$omp parallel do private(i1, i2) reduction(+:s)
      do i3 = 2, n3-1
         do i2 = 2, n2-1
            do i1 = 2, n1-1
               s = s + r(i1,i2,i3)**2
            enddo
         enddo
      enddo
      rnorm = s
      end

c The right-hand side v: zero but for +1 at the 10 largest and -1 at
c the 10 smallest of NPB's pseudo-random field, which gives cell
c (i1, i2, i3) (0-based) the number x_k 2^-46 of the sequence x_0 =
c 314159265, x_{k+1} = 5^13 x_k mod 2^46 with k = 1 + i1 + n i2 +
c n^2 i3 (the cells in Fortran order).
      subroutine zran3(v, n1, n2, n3)
      implicit none
      integer n1, n2, n3, i1, i2, i3, k, n, ib(10), is(10), g
      double precision v(n1,n2,n3), x, big(10), sml(10), randlc, t
      call zero3(v, n1, n2, n3)
      n = n1 - 2
      do k = 1, 10
         big(k) = -1d0
         sml(k) = 2d0
      enddo
      x = 314159265d0
      do i3 = 0, n-1
         do i2 = 0, n-1
            do i1 = 0, n-1
               t = randlc(x, 1220703125d0)
               g = i1 + n*(i2 + n*i3)
               call keep10(t, g, big, ib, sml, is)
            enddo
         enddo
      enddo
      do k = 1, 10
         g = ib(k)
         v(2+mod(g,n), 2+mod(g/n,n), 2+g/(n*n)) = 1d0
         g = is(k)
         v(2+mod(g,n), 2+mod(g/n,n), 2+g/(n*n)) = -1d0
      enddo
      call comm3(v, n1, n2, n3)
      end
