c mg_compas.f: mg_openmp.f ported to compas (P processes x T
c threads): the operators and their !$omp lines are the original's,
c each level a compas array they take as u(n1,n2,n3).
c
c Usage: compas-run -n P -t T mg_compas [CLASS] | N NIT [REF]  (as
c mg_openmp; exit 2 also when N is too small for the process grid)
c
c Distribution (README.md, "the compas port"): level lg, the coarsest
c with 2^lg cells >= g(d), the processes of dimension d (2 g(d) if a
c g(d) is no power of 2), is cut in near-equal blocks, every finer
c level refines it (split points): coarse cell c lives with fine cells
c 2c-1, 2c (like=, coarsen=2). A group of 2, 4 or 8 processes solves
c lg..1 again: residual down, correction up, one redistribute each.

      module mglev
      implicit none
      type lev
         double precision, pointer, contiguous :: a(:,:,:)
      end type
c cu, cr: the levels computed on; dr, su: where the restriction goes
c and interp reads (the job's level lg when a group solves it).
      type(lev) cu(11), cr(11), dr(11), su(11), v
      integer mc(3,11), md(3,11), lt, lg
      end module

      program mgcomp
      use compas
      use mglev
      implicit none
      integer n, nit, k, d, p, it, g(3), s(0:1024,3), lo(3), hi(3)
      integer me, np, ng, omp_get_max_threads
      double precision omp_get_wtime
      double precision ref, rnm, t0, t1, a(0:3), c(0:3), sum
      character cls
      character(200) msg
      type(compas_group) grp
      double precision rnorm
      logical verok, ok
      common /coef/ a, c

      call compas_init()
      me = compas_rank()
      np = compas_processes()
      call getcfg('mg_compas', n, nit, ref, cls, msg)
      call compas_create(v%a, [1,1,1], [np,np,np])
      call compas_grid(v%a, g)
      call compas_destroy(v%a)
      lt = nint(log(dble(max(n, 1))) / log(2d0))
      lg = max(1, ceiling(log(maxval(g) - 0.5d0) / log(2d0)))
      if (any(iand(g, g-1) .ne. 0)) lg = lg + 1
      if (msg .eq. ' ' .and. lg .gt. 1 .and. lg .ge. lt) write(msg,
     >   '(a,i0,a,i0,a,2(i0,'' x ''),i0,a,i0)') 'mg_compas: N = ', n,
     >   ' is too small for ', np, ' processes (grid ', g,
     >   '): need N >= ', 2**(lg+1)
      if (msg .ne. ' ') then
         if (me .eq. 0) write(0, '(a)') trim(msg)
         call compas_finalize()
         stop 2
      endif
      call setcoef(cls)

c Level lt's split points: level lg's block split (boundary p of g
c parts of 2^lg cells: p*(2^lg/g) + min(p, mod(2^lg, g))), refined.
      forall (d = 1:3, p = 0:1024, p .le. g(d)) s(p,d) = 1 + 2**(lt-lg)
     >   * (p*(2**lg/g(d)) + min(p, mod(2**lg, g(d))))
      call compas_create(cu(lt)%a, [1,1,1], [n,n,n],
     >   periodic=[.true.], split1=s(0:g(1),1), split2=s(0:g(2),2),
     >   split3=s(0:g(3),3))
      call compas_create(cr(lt)%a, like=cu(lt)%a)
      call compas_create(v%a, like=cu(lt)%a)
      do k = lt-1, lg, -1
         call compas_create(cu(k)%a, like=cu(k+1)%a, coarsen=2)
         call compas_create(cr(k)%a, like=cr(k+1)%a, coarsen=2)
      enddo
      dr = cr
      su = cu
      ng = merge(2**int(log(min(np, 8) + 0.5) / log(2.)), np, lg .gt. 1)
      if (lg .gt. 1) then
         call compas_group_split(merge(0, -1, me .lt. ng), 0, grp)
         call compas_create(cu(lg)%a, like=su(lg)%a, group=grp)
         call compas_create(cr(lg)%a, like=dr(lg)%a, group=grp)
         do k = lg-1, 1, -1
            call compas_create(cu(k)%a, like=cu(k+1)%a, coarsen=2)
            call compas_create(cr(k)%a, like=cr(k+1)%a, coarsen=2)
            dr(k) = cr(k)
            su(k) = cu(k)
         enddo
      endif
      do k = 1, lt
         mc(:,k) = shape(cu(k)%a)
         md(:,k) = shape(dr(k)%a)
      enddo
      if (me .eq. 0) write(*, '(3a,3(i4,a),i3,a,2(i0,'' x ''),i0,a,
     >   i0,a,i0,a)') ' mg_compas: class ', cls, ', ', n, '^3 cells, ',
     >  nit, ' iterations, ', np, ' processes x', omp_get_max_threads(),
     >   ' threads (grid ', g, ', levels 1..', lg, ' on ', ng, ')'

      call compas_bounds(v%a, lo, hi)
      call zran3(v%a, mc(1,lt), mc(2,lt), mc(3,lt), n, lo)

      call compas_barrier()
      t0 = omp_get_wtime()
      call zero3(cu(lt)%a, mc(1,lt), mc(2,lt), mc(3,lt))
      call copy3(v%a, cr(lt)%a, mc(1,lt), mc(2,lt), mc(3,lt))
      call resid(cu(lt)%a, cr(lt)%a, mc(1,lt), mc(2,lt), mc(3,lt))
      call comm3(cr(lt)%a, mc(1,lt), mc(2,lt), mc(3,lt))
      do it = 1, nit
         call mg3p()
         call copy3(v%a, cr(lt)%a, mc(1,lt), mc(2,lt), mc(3,lt))
         call resid(cu(lt)%a, cr(lt)%a, mc(1,lt), mc(2,lt),
     >              mc(3,lt))
         call comm3(cr(lt)%a, mc(1,lt), mc(2,lt), mc(3,lt))
         sum = rnorm(cr(lt)%a, mc(1,lt), mc(2,lt), mc(3,lt))
         call compas_allreduce(sum, COMPAS_SUM)
         rnm = sqrt(sum / dble(n)**3)
         if (me .eq. 0) write(*, '(a,i5,a,es24.16)') ' iter', it,
     >      '  residual norm = ', rnm
      enddo
      t1 = omp_get_wtime()
      if (me .eq. 0) write(*, '(a,f12.4,a)') ' time = ', t1 - t0, ' s'
      ok = verok(rnm, ref, n, nit, me .eq. 0)
      call compas_finalize()
      if (.not. ok) stop 1
      end

c mg_openmp.f's V-cycle on cu, cr; at level lg, when a group solves
c lg..1, the residual moves down to it and the correction back up.
      subroutine mg3p()
      use compas
      use mglev
      implicit none
      integer k
      do k = lt, 2, -1
         call rprj3(cr(k)%a, mc(1,k), mc(2,k), mc(3,k),
     >              dr(k-1)%a, md(1,k-1), md(2,k-1), md(3,k-1))
         if (k-1 .eq. lg .and. lg .gt. 1)
     >      call compas_redistribute(dr(lg)%a, cr(lg)%a)
         call comm3(cr(k-1)%a, mc(1,k-1), mc(2,k-1), mc(3,k-1))
      enddo
      call zero3(cu(1)%a, mc(1,1), mc(2,1), mc(3,1))
      call psinv(cr(1)%a, cu(1)%a, mc(1,1), mc(2,1), mc(3,1))
      call comm3(cu(1)%a, mc(1,1), mc(2,1), mc(3,1))
      do k = 2, lt
         if (k .lt. lt) then
            call zero3(cu(k)%a, mc(1,k), mc(2,k), mc(3,k))
         else
            call copy3(v%a, cr(k)%a, mc(1,k), mc(2,k), mc(3,k))
         endif
         if (k-1 .eq. lg .and. lg .gt. 1) then
            call compas_redistribute(cu(lg)%a, su(lg)%a)
            call comm3(su(lg)%a, md(1,lg), md(2,lg), md(3,lg))
         endif
         call interp(su(k-1)%a, md(1,k-1), md(2,k-1), md(3,k-1),
     >               cu(k)%a, mc(1,k), mc(2,k), mc(3,k))
         call comm3(cu(k)%a, mc(1,k), mc(2,k), mc(3,k))
         call resid(cu(k)%a, cr(k)%a, mc(1,k), mc(2,k), mc(3,k))
         call comm3(cr(k)%a, mc(1,k), mc(2,k), mc(3,k))
         call psinv(cr(k)%a, cu(k)%a, mc(1,k), mc(2,k), mc(3,k))
         call comm3(cu(k)%a, mc(1,k), mc(2,k), mc(3,k))
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

c The periodic halos, by the processes holding a part of the level.
      subroutine comm3(u, n1, n2, n3)
      use compas
      implicit none
      integer n1, n2, n3
      double precision u(n1,n2,n3)
      if (compas_member(u)) call compas_exchange(u)
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

c The right-hand side v of mg_openmp.f: every process runs NPB's
c sequence over the n^3 cells (g = i1 + n*(i2 + n*i3), 0-based) and
c sets the cells of its part (from lo) among the 10 largest (+1) and
c the 10 smallest (-1).
      subroutine zran3(v, n1, n2, n3, n, lo)
      implicit none
      integer n1, n2, n3, n, lo(3), k, ib(20), g, i(3)
      double precision v(n1,n2,n3), x, big(10), sml(10), randlc, t
      call zero3(v, n1, n2, n3)
      big = -1d0
      sml = 2d0
      x = 314159265d0
      do g = 0, n**3 - 1
         t = randlc(x, 1220703125d0)
         call keep10(t, g, big, ib, sml, ib(11))
      enddo
      do k = 1, 20
         i = [mod(ib(k), n), mod(ib(k)/n, n), ib(k)/(n*n)] + 3 - lo
         if (all(i .ge. 2 .and. i .lt. [n1, n2, n3]))
     >      v(i(1), i(2), i(3)) = sign(1d0, 10.5d0 - k)
      enddo
      call comm3(v, n1, n2, n3)
      end
