c mg_common.f: what every version of the multigrid program shares and
c none parallelises: the command line, the coefficients, the
c verification and NPB's random numbers (README.md).

c The command line: a class, or N NIT [REF]. Sets cls to the class
c whose size and iteration count these are ('U' for none) and ref to
c its published final norm (-1 for none; REF replaces it). Bad input:
c msg names the value (blank when the input is good).
      subroutine getcfg(prog, n, nit, ref, cls, msg)
      implicit none
      character*(*) prog, msg
      integer n, nit, na, ios, k
      double precision ref
      character cls
      character(64) arg
      character(5) names
      integer cn(5), cit(5)
      double precision cref(5)
      data names /'SWABC'/, cn /32, 128, 256, 256, 512/
      data cit /4, 4, 4, 20, 20/
      data cref /0.5307707005734d-04, 0.6467329375339d-05,
     >           0.2433365309069d-05, 0.1800564401355d-05,
     >           0.5706732285740d-06/
      msg = ' '
      na = command_argument_count()
      arg = 'S'
      if (na .ge. 1) call get_command_argument(1, arg)
      k = index(names, arg(1:1))
      if (na .le. 1 .and. len_trim(arg) .eq. 1 .and. k .gt. 0) then
         n = cn(k)
         nit = cit(k)
      else if (na .eq. 1) then
         msg = prog // ': bad class ''' // trim(arg) //
     >      ''': need S, W, A, B or C (or N NIT [REF])'
         return
      else if (na .gt. 3) then
         msg = 'usage: ' // prog // ' [S|W|A|B|C] or '
     >      // prog // ' N NIT [REF]'
         return
      else
         call getint(prog, 1, 4, 1024, n, 'N', msg)
         if (msg .ne. ' ') return
         if (iand(n, n-1) .ne. 0) then
            call get_command_argument(1, arg)
            msg = prog // ': bad N ''' // trim(arg) //
     >         ''': need a power of 2'
            return
         endif
         call getint(prog, 2, 1, 100000, nit, 'NIT', msg)
         if (msg .ne. ' ') return
      endif
      ref = -1d0
      cls = 'U'
      do k = 1, 5
         if (n .eq. cn(k) .and. nit .eq. cit(k)) then
            cls = names(k:k)
            ref = cref(k)
         endif
      enddo
      if (na .eq. 3) then
         call get_command_argument(3, arg)
         read(arg, *, iostat=ios) ref
         if (ios .ne. 0 .or. .not. (ref .gt. 0d0)) msg = prog //
     >      ': bad REF ''' // trim(arg) // ''': need a positive number'
      endif
      end

c Argument k as a whole number in lo..hi, or msg naming it.
      subroutine getint(prog, k, lo, hi, val, what, msg)
      implicit none
      character*(*) prog, what, msg
      integer k, lo, hi, val, ios
      character(64) arg
      call get_command_argument(k, arg)
      ios = 1
      if (len_trim(arg) .ge. 1 .and. len_trim(arg) .le. 9 .and.
     >    verify(trim(arg), '0123456789') .eq. 0)
     >   read(arg, '(i9)', iostat=ios) val
      if (ios .ne. 0 .or. val .lt. lo .or. val .gt. hi) then
         write(msg, '(7a,i0,a,i0)') prog, ': bad ', what, ' ''',
     >      trim(arg), '''', ': need a whole number from ', lo,
     >      ' to ', hi
      endif
      end

c The coefficients: A's a(0:3) (centre, 6 faces, 12 edges, 8
c corners); S's c(0:3) those of classes S, W and A for every size but
c classes B's and C's.
      subroutine setcoef(cls)
      implicit none
      character cls
      double precision a(0:3), c(0:3)
      common /coef/ a, c
      a(0) = -8d0/3d0
      a(1) = 0d0
      a(2) = 1d0/6d0
      a(3) = 1d0/12d0
      if (cls .eq. 'B' .or. cls .eq. 'C') then
         c(0) = -3d0/17d0
         c(1) = 1d0/33d0
         c(2) = -1d0/61d0
      else
         c(0) = -3d0/8d0
         c(1) = 1d0/32d0
         c(2) = -1d0/64d0
      endif
      c(3) = 0d0
      end

c The final norm against the reference (relative error 1e-8): prints
c the verification line (when talk) and returns false on a failure.
      logical function verok(rnm, ref, n, nit, talk)
      implicit none
      integer n, nit
      logical talk
      double precision rnm, ref, err
      character*(*) fmt
      parameter (fmt = '(a,es9.2,a,es20.13,a)')
      verok = .true.
      if (ref .le. 0d0) then
         if (talk) write(*, '(a,i0,a,i0,a)') ' verification NOT '
     >      // 'PERFORMED (no reference for N = ', n, ', NIT = ',
     >      nit, ')'
         return
      endif
      err = abs(rnm - ref) / ref
      verok = err .le. 1d-8
      if (talk .and. verok) write(*, fmt) ' verification SUCCESSFUL'
     >   // ' (relative error ', err, ' against ', ref, ')'
      if (talk .and. .not. verok) write(*, fmt) ' verification '
     >   // 'FAILED (relative error ', err, ' against ', ref, ')'
      end

c Keeps big (descending) the 10 largest values seen, sml (ascending)
c the 10 smallest, ib and is their cells.
      subroutine keep10(t, g, big, ib, sml, is)
      implicit none
      integer g, ib(10), is(10), k
      double precision t, big(10), sml(10)
      if (t .gt. big(10)) then
         do k = 10, 2, -1
            if (t .le. big(k-1)) exit
            big(k) = big(k-1)
            ib(k) = ib(k-1)
         enddo
         big(k) = t
         ib(k) = g
      endif
      if (t .lt. sml(10)) then
         do k = 10, 2, -1
            if (t .ge. sml(k-1)) exit
            sml(k) = sml(k-1)
            is(k) = is(k-1)
         enddo
         sml(k) = t
         is(k) = g
      endif
      end

c x = a x mod 2^46, returned as x 2^-46 (x, a < 2^46 whole numbers):
c with x = x1 2^23 + x2 and a = a1 2^23 + a2, a x mod 2^46 = ((a1 x2
c + a2 x1) mod 2^23) 2^23 + a2 x2 mod 2^46, every product exact in
c double precision.
      double precision function randlc(x, a)
      implicit none
      double precision x, a, t23, t46, a1, a2, x1, x2, t1, t2
      parameter (t23 = 2d0**23, t46 = 2d0**46)
      a1 = aint(a / t23)
      a2 = a - t23*a1
      x1 = aint(x / t23)
      x2 = x - t23*x1
      t1 = a1*x2 + a2*x1
      t2 = aint(t1 / t23)
      t1 = t23*(t1 - t23*t2) + a2*x2
      t2 = aint(t1 / t46)
      x = t1 - t46*t2
      randlc = x / t46
      end

c 5^13^e mod 2^46 (e >= 0): the multiplier that moves NPB's sequence
c e numbers on.
      double precision function apow(e)
      implicit none
      integer e, k
      double precision p, q, q2, t, randlc
      p = 1d0
      q = 1220703125d0
      k = e
      do while (k .gt. 0)
         if (mod(k, 2) .eq. 1) t = randlc(p, q)
         q2 = q
         t = randlc(q, q2)
         k = k / 2
      enddo
      apow = p
      end
