! Checks fortran/src/compas_interfaces.f90, the installed source of the module's interfaces,
! against the module compas (tests/fortran: fortran.interfaces compiles the two, -fsyntax-only):
! every procedure that is not generic is assigned to a pointer of its documented interface (the
! compiler refuses arguments, types, ranks, intents or optional ones that differ); the generic
! ones and their documented representatives (real(8)) are called with every documented keyword.
program interfaces_check
  use compas
  use compas_interfaces, only: &
    i_init => compas_init, i_finalize => compas_finalize, i_rank => compas_rank, &
    i_processes => compas_processes, i_threads => compas_threads, i_abort => compas_abort, &
    i_argument_count => compas_argument_count, i_get_argument => compas_get_argument, &
    i_error_message => compas_error_message, i_bounds => compas_bounds, &
    i_exchange => compas_exchange, i_begin_exchange => compas_begin_exchange, &
    i_wait => compas_wait, i_test => compas_test, i_accumulate_halos => compas_accumulate_halos, &
    i_barrier => compas_barrier, i_group_split => compas_group_split, &
    i_group_destroy => compas_group_destroy, i_group_rank => compas_group_rank, &
    i_group_size => compas_group_size, i_create => compas_create, i_swap => compas_swap, &
    i_destroy => compas_destroy, i_allreduce => compas_allreduce, i_broadcast => compas_broadcast, &
    i_exscan => compas_exscan, i_create_like => compas_create_like, &
    i_redistribute => compas_redistribute, i_grid => compas_grid, i_member => compas_member, &
    i_ghosts_create => compas_ghosts_create, i_ghosts_sizes => compas_ghosts_sizes, &
    i_ghosts_create_columns => compas_ghosts_create_columns, &
    i_ghosts_update => compas_ghosts_update, i_ghosts_accumulate => compas_ghosts_accumulate, &
    i_ghosts_destroy => compas_ghosts_destroy, i_block_of => compas_block_of
  implicit none
  procedure(i_init), pointer :: p_init
  procedure(i_finalize), pointer :: p_finalize
  procedure(i_rank), pointer :: p_rank
  procedure(i_processes), pointer :: p_processes
  procedure(i_threads), pointer :: p_threads
  procedure(i_abort), pointer :: p_abort
  procedure(i_argument_count), pointer :: p_argument_count
  procedure(i_get_argument), pointer :: p_get_argument
  procedure(i_error_message), pointer :: p_error_message
  procedure(i_bounds), pointer :: p_bounds
  procedure(i_exchange), pointer :: p_exchange
  procedure(i_begin_exchange), pointer :: p_begin_exchange
  procedure(i_wait), pointer :: p_wait
  procedure(i_test), pointer :: p_test
  procedure(i_accumulate_halos), pointer :: p_accumulate_halos
  procedure(i_barrier), pointer :: p_barrier
  procedure(i_group_split), pointer :: p_group_split
  procedure(i_group_destroy), pointer :: p_group_destroy
  procedure(i_group_rank), pointer :: p_group_rank
  procedure(i_group_size), pointer :: p_group_size
  procedure(i_create), pointer :: p_create => null()
  procedure(i_create_like), pointer :: p_create_like => null()
  procedure(i_redistribute), pointer :: p_redistribute
  procedure(i_grid), pointer :: p_grid
  procedure(i_member), pointer :: p_member
  procedure(i_swap), pointer :: p_swap => null()
  procedure(i_destroy), pointer :: p_destroy => null()
  procedure(i_allreduce), pointer :: p_allreduce => null()
  procedure(i_broadcast), pointer :: p_broadcast => null()
  procedure(i_exscan), pointer :: p_exscan => null()
  procedure(i_ghosts_sizes), pointer :: p_ghosts_sizes
  procedure(i_ghosts_destroy), pointer :: p_ghosts_destroy
  procedure(i_block_of), pointer :: p_block_of
  procedure(i_ghosts_create), pointer :: p_ghosts_create => null()
  procedure(i_ghosts_create_columns), pointer :: p_ghosts_create_columns => null()
  procedure(i_ghosts_update), pointer :: p_ghosts_update => null()
  procedure(i_ghosts_accumulate), pointer :: p_ghosts_accumulate => null()
  real(8), pointer :: u(:, :), v(:, :), w(:, :, :), w2(:, :, :)
  real(8) :: x(4)
  type(compas_group) :: g
  type(compas_ghosts) :: plan
  integer(8) :: list(3), first
  integer :: ierr, n_owned, n_ghosts

  p_init => compas_init
  p_finalize => compas_finalize
  p_rank => compas_rank
  p_processes => compas_processes
  p_threads => compas_threads
  p_abort => compas_abort
  p_argument_count => compas_argument_count
  p_get_argument => compas_get_argument
  p_error_message => compas_error_message
  p_bounds => compas_bounds
  p_exchange => compas_exchange
  p_begin_exchange => compas_begin_exchange
  p_wait => compas_wait
  p_test => compas_test
  p_accumulate_halos => compas_accumulate_halos
  p_barrier => compas_barrier
  p_group_split => compas_group_split
  p_group_destroy => compas_group_destroy
  p_group_rank => compas_group_rank
  p_group_size => compas_group_size
  p_redistribute => compas_redistribute
  p_grid => compas_grid
  p_member => compas_member
  p_ghosts_sizes => compas_ghosts_sizes
  p_ghosts_destroy => compas_ghosts_destroy
  p_block_of => compas_block_of

  ! The generic ones: the module and the documented representative take the same keywords.
  call compas_create(u=u, lo=[1, 1], hi=[2, 2], halo=[1], periodic=[.true.], grid=[0], &
                     first_touch=.true., ierr=ierr, padded=.true.)
  call p_create(u=u, lo=[1, 1], hi=[2, 2], halo=[1], periodic=[.true.], grid=[0], &
                first_touch=.true., ierr=ierr, padded=.true.)
  call compas_create(u=u, lo=[1, 1], hi=[2, 2], split1=[1, 3], split2=[1, 3], split3=[1, 2], &
                     group=g)
  call p_create(u=u, lo=[1, 1], hi=[2, 2], split1=[1, 3], split2=[1, 3], split3=[1, 2], group=g)
  call compas_create(u=w, like=w2, coarsen=2, group=g, ierr=ierr)
  call p_create_like(u=w, like=w2, coarsen=2, group=g, ierr=ierr)
  call compas_swap(u=u, v=v, ierr=ierr)
  call p_swap(u=u, v=v, ierr=ierr)
  call compas_destroy(u=u, ierr=ierr)
  call p_destroy(u=u, ierr=ierr)
  call compas_allreduce(x=x, op=COMPAS_SUM, group=g, ierr=ierr)
  call p_allreduce(x=x, op=COMPAS_SUM, group=g, ierr=ierr)
  call compas_broadcast(x=x, root=0, group=g, ierr=ierr)
  call p_broadcast(x=x, root=0, group=g, ierr=ierr)
  call compas_exscan(x=x, op=COMPAS_MAX, group=g, ierr=ierr)
  call p_exscan(x=x, op=COMPAS_MAX, group=g, ierr=ierr)
  call compas_ghosts_create(plan=plan, n_local=4, ghosts=list, ierr=ierr)
  call p_ghosts_create(plan=plan, n_local=4, ghosts=list, ierr=ierr)
  call compas_ghosts_create_columns(plan=plan, n_local=4, cols=list, ierr=ierr)
  call p_ghosts_create_columns(plan=plan, n_local=4, cols=list, ierr=ierr)
  call compas_ghosts_update(plan=plan, v=x, ierr=ierr)
  call p_ghosts_update(plan=plan, v=x, ierr=ierr)
  call compas_ghosts_accumulate(plan=plan, v=x, ierr=ierr)
  call p_ghosts_accumulate(plan=plan, v=x, ierr=ierr)
  call p_ghosts_sizes(plan=plan, first=first, n_owned=n_owned, n_ghosts=n_ghosts, ierr=ierr)
end program interfaces_check
