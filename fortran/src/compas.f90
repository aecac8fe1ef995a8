! compas: the Fortran module of compas (Fortran 2008 with iso_c_binding; assumed-rank dummies
! from TS 29113), over the C API (include/compas/compas.h). A distributed array is an ordinary
! Fortran array pointer with the program's own global bounds, halos included, so loop bodies and
! !$omp lines stay as they were:
!
!   use compas
!   real(8), pointer :: u(:,:)
!   integer :: lo(2), hi(2)
!   call compas_init()                          ! joins the job, pins OpenMP's threads
!   call compas_create(u, [1, 1], [n, n])       ! u(lo(1)-1:hi(1)+1, lo(2)-1:hi(2)+1)
!   call compas_bounds(u, lo, hi)               ! the owned part, bounds INCLUSIVE
!   call compas_exchange(u)                     ! the neighbours' edges into the halos
!   call compas_allreduce(top, COMPAS_MAX)      ! in place, over the processes
!   call compas_finalize()
!
! Dimension 1 is contiguous (Fortran's order): the module gives C the dimensions reversed, and a
! 2-D array is cut along its last dimension unless `grid` says otherwise. The local block is
! contiguous (the halo box packed), so F77-style routines take u through explicit-shape and
! assumed-size dummies without a copy, and the calls inside them find the array by its address;
! compas_create(..., padded=.true.) pads dimension 1 to whole 64-byte lines instead (then pass u
! to assumed-shape dummies only). Ghosted vectors (compas_ghost_vectors: type(compas_ghosts),
! compas_ghosts_create ...) are plain arrays [owned | ghosts] with 1-based global indices. Every
! signature, documented: compas_interfaces.f90, installed beside this module's .mod files.
!
! Errors: every call takes an optional integer ierr. Present, it receives COMPAS_OK (0) or a code
! and compas_error_message() the message. Absent, a failure ends the job: each failing process
! prints "compas: process R: MESSAGE" and the job exits with status 2 for COMPAS_ERR_ARG, else 1.
! The functions (compas_rank, compas_processes, compas_threads, compas_group_rank,
! compas_group_size) return -1 when they fail with ierr present.
module compas
  use compas_c_api, only: COMPAS_OK, COMPAS_ERR_ARG, COMPAS_ERR_COLLECTIVE, COMPAS_ERR_HANDLE, &
                          COMPAS_ERR_NOMEM, COMPAS_ERR_COMM, COMPAS_ERR_STATE, &
                          COMPAS_ERR_INTERNAL, COMPAS_SUM, COMPAS_MIN, COMPAS_MAX, COMPAS_PROD
  use compas_core, only: compas_init, compas_finalize, compas_rank, compas_processes, &
                         compas_threads, compas_abort, compas_argument_count, &
                         compas_get_argument, compas_error_message, compas_group
  use compas_arrays
  use compas_collectives
  use compas_ghost_vectors
  implicit none
  public
end module compas
