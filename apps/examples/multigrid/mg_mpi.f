c mg_mpi.f: mg_openmp.f on MPI processes (no threads): the grid split
c over a periodic 3-D process grid (MPI_Dims_create), halos exchanged
c with MPI_Sendrecv, norms summed with MPI_Allreduce (README.md).
c
c Usage: mpirun -n P mg_mpi [CLASS] | mg_mpi N NIT [REF]  (as
c mg_openmp; exit 2 also when N is too small for the process grid)
c
c Distribution: level lg is the coarsest where every process still
c owns at least 2 cells per dimension (the 2^lg cells of each axis in
c near-equal blocks); a finer level k owns 2^(k-lg) times that block,
c so a coarse cell and the fine cells under it live on one process.
c The residual restricted to level lg is gathered onto every process
c (MPI_Allgatherv), and levels lg..1 are computed whole, redundantly,
c by every process, as mg_openmp.f does: each process then takes its
c block of level lg (with halos) to interpolate to level lg+1. So
c every value is the same, bit for bit, as mg_openmp.f's at any P.

      program mgmpi
      use mpi
      implicit none
      include 'mg_mpi.h'
      integer n, nit, lt, k, d, it, nw, ou(lm), ierr, cnt
      double precision ref, rnm, t0, t1, a(0:3), c(0:3), s, sg
      character cls
      character(200) msg
      logical periods(3), verok
      double precision, allocatable :: u(:), r(:), v(:), w(:)
      double precision rnorm
      common /coef/ a, c

      call MPI_Init(ierr)
      call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
      call getcfg('mg_mpi', n, nit, ref, cls, msg)
      do d = 1, 3
         dims(d) = 0
         periods(d) = .true.
      enddo
      call MPI_Dims_create(np, 3, dims, ierr)
      call MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, .false.,
     >   comm, ierr)
      call MPI_Comm_rank(comm, me, ierr)
      call MPI_Cart_coords(comm, me, 3, crd, ierr)
      do d = 1, 3
         call MPI_Cart_shift(comm, d-1, 1, nbr(1,d), nbr(2,d), ierr)
      enddo
      lt = 0
      if (msg .eq. ' ') lt = nint(log(dble(n)) / log(2d0))
      lg = 1
      do while (2**lg .lt. 2*max(dims(1), dims(2), dims(3)))
         lg = lg + 1
      enddo
      if (msg .eq. ' ' .and. lg .ge. lt) write(msg, '(a,i0,a,i0,a,
     >   i0,a,i0,a,i0,a,i0,a)') 'mg_mpi: N = ', n, ' is too small '
     >   // 'for ', np, ' processes (grid ', dims(1), ' x ', dims(2),
     >   ' x ', dims(3), '): need N >= ', 2**(lg+1), ' (2 cells or'
     >   // ' more per process and dimension at N/2)'
      if (msg .ne. ' ') then
         if (me .eq. 0) write(0, '(a)') trim(msg)
         call MPI_Finalize(ierr)
         stop 2
      endif
      call setcoef(cls)

c Level sizes with halos: whole up to lg, the process's block above.
      nw = 0
      do k = 1, lt
         do d = 1, 3
            call part(2**lg, dims(d), crd(d), cnt, bs(d))
            m(d,k) = 2**k + 2
            if (k .gt. lg) m(d,k) = cnt * 2**(k-lg) + 2
            if (k .eq. lg) mw(d) = cnt + 2
         enddo
         ou(k) = nw + 1
         nw = nw + m(1,k)*m(2,k)*m(3,k)
      enddo
      allocate(u(nw), r(nw), v(m(1,lt)*m(2,lt)*m(3,lt)),
     >   w(mw(1)*mw(2)*mw(3)))
      if (me .eq. 0) write(*, '(a,a,a,i4,a,i4,a,i4,a,3(i0,a))')
     >   ' mg_mpi: class ', cls, ', ', n, '^3 cells, ', nit,
     >   ' iterations, ', np, ' processes (', dims(1), ' x ',
     >   dims(2), ' x ', dims(3), ')'

      call zran3(v, m(1,lt), m(2,lt), m(3,lt), n, lt)

      call MPI_Barrier(comm, ierr)
      t0 = MPI_Wtime()
      call zero3(u(ou(lt)), m(1,lt), m(2,lt), m(3,lt))
      call copy3(v, r(ou(lt)), m(1,lt), m(2,lt), m(3,lt))
      call resid(u(ou(lt)), r(ou(lt)), m(1,lt), m(2,lt), m(3,lt))
      call halo(r(ou(lt)), m(1,lt), m(2,lt), m(3,lt), lt)
      do it = 1, nit
         call mg3p(u, r, v, w, ou, lt)
         call copy3(v, r(ou(lt)), m(1,lt), m(2,lt), m(3,lt))
         call resid(u(ou(lt)), r(ou(lt)), m(1,lt), m(2,lt), m(3,lt))
         call halo(r(ou(lt)), m(1,lt), m(2,lt), m(3,lt), lt)
         s = rnorm(r(ou(lt)), m(1,lt), m(2,lt), m(3,lt))
         call MPI_Allreduce(s, sg, 1, MPI_DOUBLE_PRECISION, MPI_SUM,
     >      comm, ierr)
         rnm = sqrt(sg / dble(n)**3)
         if (me .eq. 0) write(*, '(a,i5,a,es24.16)') ' iter', it,
     >      '  residual norm = ', rnm
      enddo
      t1 = MPI_Wtime()
      if (me .eq. 0) write(*, '(a,f12.4,a)') ' time = ', t1 - t0, ' s'
      deallocate(u, r, v, w)
      k = 0
      if (.not. verok(rnm, ref, n, nit, me .eq. 0)) k = 1
      call MPI_Finalize(ierr)
      if (k .ne. 0) stop 1
      end

c The V-cycle of mg_openmp.f: the levels above lg distributed, the
c restriction to lg gathered, the interpolation from lg taken from
c the process's block of the whole level.
      subroutine mg3p(u, r, v, w, ou, lt)
      implicit none
      include 'mg_mpi.h'
      integer lt, ou(lt), k
      double precision u(*), r(*), v(*), w(*)
      do k = lt, 2, -1
         if (k-1 .eq. lg) then
            call rprj3(r(ou(k)), m(1,k), m(2,k), m(3,k),
     >                 w, mw(1), mw(2), mw(3))
            call gathr(w, mw(1), mw(2), mw(3),
     >                 r(ou(lg)), m(1,lg), m(2,lg), m(3,lg))
         else
            call rprj3(r(ou(k)), m(1,k), m(2,k), m(3,k),
     >                 r(ou(k-1)), m(1,k-1), m(2,k-1), m(3,k-1))
            call halo(r(ou(k-1)), m(1,k-1), m(2,k-1), m(3,k-1), k-1)
         endif
      enddo
      call zero3(u(ou(1)), m(1,1), m(2,1), m(3,1))
      call psinv(r(ou(1)), u(ou(1)), m(1,1), m(2,1), m(3,1))
      call comm3(u(ou(1)), m(1,1), m(2,1), m(3,1))
      do k = 2, lt
         if (k .lt. lt) then
            call zero3(u(ou(k)), m(1,k), m(2,k), m(3,k))
         else
            call copy3(v, r(ou(k)), m(1,k), m(2,k), m(3,k))
         endif
         if (k-1 .eq. lg) then
            call getblk(u(ou(lg)), m(1,lg), m(2,lg), m(3,lg),
     >                  w, mw(1), mw(2), mw(3))
            call interp(w, mw(1), mw(2), mw(3),
     >                  u(ou(k)), m(1,k), m(2,k), m(3,k))
         else
            call interp(u(ou(k-1)), m(1,k-1), m(2,k-1), m(3,k-1),
     >                  u(ou(k)), m(1,k), m(2,k), m(3,k))
         endif
         call halo(u(ou(k)), m(1,k), m(2,k), m(3,k), k)
         call resid(u(ou(k)), r(ou(k)), m(1,k), m(2,k), m(3,k))
         call halo(r(ou(k)), m(1,k), m(2,k), m(3,k), k)
         call psinv(r(ou(k)), u(ou(k)), m(1,k), m(2,k), m(3,k))
         call halo(u(ou(k)), m(1,k), m(2,k), m(3,k), k)
      enddo
      end

c Part q (0..p-1) of nc cells split in p near-equal blocks: its cnt
c cells from cell st (0-based).
      subroutine part(nc, p, q, cnt, st)
      implicit none
      integer nc, p, q, cnt, st
      cnt = nc / p
      st = q*cnt + min(q, mod(nc, p))
      if (q .lt. mod(nc, p)) cnt = cnt + 1
      end

c The halos of level k: exchanged above lg, periodic copies below.
      subroutine halo(u, n1, n2, n3, k)
      implicit none
      include 'mg_mpi.h'
      integer n1, n2, n3, k
      double precision u(n1,n2,n3)
      if (k .gt. lg) then
         call exch(u, n1, n2, n3)
      else
         call comm3(u, n1, n2, n3)
      endif
      end

c The halo exchange: axis by axis, each process sends its first
c interior plane to the lower neighbour and its last to the upper
c one; axes 2 and 3 send the planes with the halos already received,
c so edges and corners arrive too.
      subroutine exch(u, n1, n2, n3)
      use mpi
      implicit none
      include 'mg_mpi.h'
      integer n1, n2, n3, ax, nn(3), cnt, ierr
      integer st(MPI_STATUS_SIZE)
      double precision u(n1,n2,n3)
      double precision sb(max(n1*n2, n1*n3, n2*n3))
      double precision rb(max(n1*n2, n1*n3, n2*n3))
      nn(1) = n1
      nn(2) = n2
      nn(3) = n3
      do ax = 1, 3
         call face(u, n1, n2, n3, ax, 2, sb, cnt, .false.)
         call MPI_Sendrecv(sb, cnt, MPI_DOUBLE_PRECISION, nbr(1,ax),
     >      1, rb, cnt, MPI_DOUBLE_PRECISION, nbr(2,ax), 1, comm, st,
     >      ierr)
         call face(u, n1, n2, n3, ax, nn(ax), rb, cnt, .true.)
         call face(u, n1, n2, n3, ax, nn(ax)-1, sb, cnt, .false.)
         call MPI_Sendrecv(sb, cnt, MPI_DOUBLE_PRECISION, nbr(2,ax),
     >      2, rb, cnt, MPI_DOUBLE_PRECISION, nbr(1,ax), 2, comm, st,
     >      ierr)
         call face(u, n1, n2, n3, ax, 1, rb, cnt, .true.)
      enddo
      end

c Plane i of axis ax (over the interior of the later axes and the
c whole of the earlier ones) into buf (put false) or from it (true).
      subroutine face(u, n1, n2, n3, ax, i, buf, cnt, put)
      implicit none
      integer n1, n2, n3, ax, i, cnt, lo(3), hi(3), i1, i2, i3
      double precision u(n1,n2,n3), buf(*)
      logical put
      lo(1) = 2
      lo(2) = 2
      lo(3) = 2
      hi(1) = n1 - 1
      hi(2) = n2 - 1
      hi(3) = n3 - 1
      if (ax .ge. 2) lo(1) = 1
      if (ax .ge. 2) hi(1) = n1
      if (ax .eq. 3) lo(2) = 1
      if (ax .eq. 3) hi(2) = n2
      lo(ax) = i
      hi(ax) = i
      cnt = 0
      do i3 = lo(3), hi(3)
         do i2 = lo(2), hi(2)
            do i1 = lo(1), hi(1)
               cnt = cnt + 1
               if (put) then
                  u(i1,i2,i3) = buf(cnt)
               else
                  buf(cnt) = u(i1,i2,i3)
               endif
            enddo
         enddo
      enddo
      end

c Every process's block w of level lg into the whole level g (on
c every process), then g's periodic halos.
      subroutine gathr(w, b1, b2, b3, g, n1, n2, n3)
      use mpi
      implicit none
      include 'mg_mpi.h'
      integer b1, b2, b3, n1, n2, n3, q, d, i1, i2, i3, k, ierr
      integer cnt(3), st(3), qc(3), rc(np), ds(np)
      double precision w(b1,b2,b3), g(n1,n2,n3)
      double precision sb((b1-2)*(b2-2)*(b3-2))
      double precision rb((n1-2)*(n2-2)*(n3-2))
      k = 0
      do i3 = 2, b3-1
         do i2 = 2, b2-1
            do i1 = 2, b1-1
               k = k + 1
               sb(k) = w(i1,i2,i3)
            enddo
         enddo
      enddo
      do q = 1, np
         call MPI_Cart_coords(comm, q-1, 3, qc, ierr)
         rc(q) = 1
         do d = 1, 3
            call part(n1-2, dims(d), qc(d), cnt(d), st(d))
            rc(q) = rc(q) * cnt(d)
         enddo
      enddo
      ds(1) = 0
      do q = 2, np
         ds(q) = ds(q-1) + rc(q-1)
      enddo
      call MPI_Allgatherv(sb, k, MPI_DOUBLE_PRECISION, rb, rc, ds,
     >   MPI_DOUBLE_PRECISION, comm, ierr)
      do q = 1, np
         call MPI_Cart_coords(comm, q-1, 3, qc, ierr)
         do d = 1, 3
            call part(n1-2, dims(d), qc(d), cnt(d), st(d))
         enddo
         k = ds(q)
         do i3 = st(3)+2, st(3)+cnt(3)+1
            do i2 = st(2)+2, st(2)+cnt(2)+1
               do i1 = st(1)+2, st(1)+cnt(1)+1
                  k = k + 1
                  g(i1,i2,i3) = rb(k)
               enddo
            enddo
         enddo
      enddo
      call comm3(g, n1, n2, n3)
      end

c The process's block of the whole level g (halos included) into w.
      subroutine getblk(g, n1, n2, n3, w, b1, b2, b3)
      implicit none
      include 'mg_mpi.h'
      integer n1, n2, n3, b1, b2, b3, i1, i2, i3
      double precision g(n1,n2,n3), w(b1,b2,b3)
      do i3 = 1, b3
         do i2 = 1, b2
            do i1 = 1, b1
               w(i1,i2,i3) = g(bs(1)+i1, bs(2)+i2, bs(3)+i3)
            enddo
         enddo
      enddo
      end

c The operators of mg_openmp.f, on the process's block.
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
      do i3 = 2, n3-1
         do i2 = 2, n2-1
            u(1,i2,i3) = u(n1-1,i2,i3)
            u(n1,i2,i3) = u(2,i2,i3)
         enddo
      enddo
      do i3 = 2, n3-1
         do i1 = 1, n1
            u(i1,1,i3) = u(i1,n2-1,i3)
            u(i1,n2,i3) = u(i1,2,i3)
         enddo
      enddo
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
      do i3 = 2, n3-1
         do i2 = 2, n2-1
            do i1 = 2, n1-1
               s = s + r(i1,i2,i3)**2
            enddo
         enddo
      enddo
      rnorm = s
      end


c The right-hand side of mg_openmp.f on the process's block (cells
c gs(1:3).. of the top level): each line of cells starts NPB's
c sequence at its first cell's number (apow), the 10 largest and 10
c smallest of every block are gathered and every process keeps the
c 10 largest and smallest of those.
      subroutine zran3(v, n1, n2, n3, n, lt)
      use mpi
      implicit none
      include 'mg_mpi.h'
      integer n1, n2, n3, n, lt, i1, i2, i3, k, q, ib(10), is(10), g
      integer gs(3), i(3), ierr, gg(20)
      double precision v(n1,n2,n3), x, big(10), sml(10), t, mine(40)
      double precision tt(20)
      double precision all(40*np), randlc, apow
      call zero3(v, n1, n2, n3)
      do k = 1, 3
         gs(k) = bs(k) * 2**(lt-lg)
      enddo
      do k = 1, 10
         big(k) = -1d0
         sml(k) = 2d0
      enddo
      do i3 = gs(3), gs(3)+n3-3
         do i2 = gs(2), gs(2)+n2-3
            g = gs(1) + n*(i2 + n*i3)
            x = 314159265d0
            t = randlc(x, apow(g))
            do i1 = 0, n1-3
               t = randlc(x, 1220703125d0)
               call keep10(t, g+i1, big, ib, sml, is)
            enddo
         enddo
      enddo
      do k = 1, 10
         mine(k) = big(k)
         mine(10+k) = ib(k)
         mine(20+k) = sml(k)
         mine(30+k) = is(k)
         big(k) = -1d0
         sml(k) = 2d0
      enddo
      call MPI_Allgather(mine, 40, MPI_DOUBLE_PRECISION, all, 40,
     >   MPI_DOUBLE_PRECISION, comm, ierr)
      do q = 0, np-1
         do k = 1, 10
            call keep10(all(40*q+k), nint(all(40*q+10+k)), big, ib,
     >         sml, is)
            call keep10(all(40*q+20+k), nint(all(40*q+30+k)), big, ib,
     >         sml, is)
         enddo
      enddo
      do k = 1, 10
         gg(k) = ib(k)
         gg(10+k) = is(k)
         tt(k) = 1d0
         tt(10+k) = -1d0
      enddo
      do k = 1, 20
         g = gg(k)
         i(1) = mod(g, n) - gs(1) + 2
         i(2) = mod(g/n, n) - gs(2) + 2
         i(3) = g/(n*n) - gs(3) + 2
         if (i(1) .ge. 2 .and. i(1) .le. n1-1 .and. i(2) .ge. 2 .and.
     >       i(2) .le. n2-1 .and. i(3) .ge. 2 .and. i(3) .le. n3-1)
     >      v(i(1), i(2), i(3)) = tt(k)
      enddo
      end
