c mg_mpi.h: the process grid (the periodic communicator, this
c process's rank and coordinates, its lower and upper neighbour on
c each axis) and the levels of mg_mpi.f: m(1:3,k) the sizes of level
c k with halos, lg the coarsest distributed one, bs(1:3) the first
c cell of this process's block of lg and mw(1:3) its sizes.
      integer lm
      parameter (lm = 11)
      integer comm, me, np, dims(3), crd(3), nbr(2,3), lg, bs(3),
     >   mw(3), m(3,lm)
      common /grid/ comm, me, np, dims, crd, nbr, lg, bs, mw, m
