! compas_c_api: the bind(C) interfaces of include/compas/compas.h that the module compas calls.
! Internal to the library: programs `use compas`, never this module. The C API's rules hold
! (compas.h): int codes, handles as C pointers, hi exclusive, the last C dimension contiguous.
module compas_c_api
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_ptr, c_char, c_size_t
  implicit none
  private

  ! The C enums (compas.h).
  integer, parameter, public :: COMPAS_OK = 0, COMPAS_ERR_ARG = 1, COMPAS_ERR_COLLECTIVE = 2, &
                                COMPAS_ERR_HANDLE = 3, COMPAS_ERR_NOMEM = 4, COMPAS_ERR_COMM = 5, &
                                COMPAS_ERR_STATE = 6, COMPAS_ERR_INTERNAL = 7
  integer, parameter, public :: COMPAS_DOUBLE = 1, COMPAS_FLOAT = 2, COMPAS_INT32 = 3, &
                                COMPAS_INT64 = 4
  integer, parameter, public :: COMPAS_SUM = 1, COMPAS_MIN = 2, COMPAS_MAX = 3, COMPAS_PROD = 4
  integer, parameter, public :: DECOMP_ROWS = 0, DECOMP_GRID = 1, FILL_ZERO = 0, FILL_NONE = 1
  integer, parameter, public :: LAYOUT_PADDED = 0, LAYOUT_CONTIGUOUS = 1

  ! struct compas_array_options, field for field.
  type, bind(C), public :: c_array_options
    integer(c_int64_t) :: halo(3)
    integer(c_int) :: periodic(3), grid(3), decomposition, fill
  end type

  public :: c_last_error, c_init, c_finalize, c_process, c_processes, c_threads, c_barrier, &
            c_abort, c_options_init, c_array_create_with_layout, c_array_destroy, c_array_bounds, &
            c_array_halo_bounds, c_array_data, c_array_exchange, c_array_begin_exchange, &
            c_exchange_wait, c_exchange_test, c_array_accumulate_halos, c_array_swap, &
            c_allreduce, c_broadcast, c_exscan, c_group_split, c_group_destroy, c_group_rank, &
            c_group_size, c_group_barrier, c_group_allreduce, c_group_broadcast, c_group_exscan, &
            c_strlen, c_array_create_split, c_array_create_like, c_array_redistribute, &
            c_array_grid, c_array_member, c_ghosts_create, c_ghosts_create_columns, &
            c_ghosts_destroy, c_ghosts_sizes, c_ghosts_update, c_ghosts_accumulate, c_block_of

  interface
    type(c_ptr) function c_last_error() bind(C, name="compas_last_error")
      import :: c_ptr
    end function
    integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
    end function
    integer(c_int) function c_init(argc, argv, rt) bind(C, name="compas_init")
      import :: c_int, c_ptr
      integer(c_int), intent(inout) :: argc
      type(c_ptr), intent(inout) :: argv, rt
    end function
    integer(c_int) function c_finalize(rt) bind(C, name="compas_finalize")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: rt
    end function
    integer(c_int) function c_process(rt, rank) bind(C, name="compas_process")
      import :: c_int, c_ptr
      type(c_ptr), value :: rt
      integer(c_int), intent(out) :: rank
    end function
    integer(c_int) function c_processes(rt, count) bind(C, name="compas_processes")
      import :: c_int, c_ptr
      type(c_ptr), value :: rt
      integer(c_int), intent(out) :: count
    end function
    integer(c_int) function c_threads(rt, count) bind(C, name="compas_threads")
      import :: c_int, c_ptr
      type(c_ptr), value :: rt
      integer(c_int), intent(out) :: count
    end function
    integer(c_int) function c_barrier(rt) bind(C, name="compas_barrier")
      import :: c_int, c_ptr
      type(c_ptr), value :: rt
    end function
    integer(c_int) function c_abort(rt, code, message) bind(C, name="compas_abort")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: rt
      integer(c_int), value :: code
      character(kind=c_char), intent(in) :: message(*)
    end function
    integer(c_int) function c_options_init(options) bind(C, name="compas_array_options_init")
      import :: c_int, c_array_options
      type(c_array_options), intent(out) :: options
    end function
    integer(c_int) function c_array_create_split(rt, group, type, lo, hi, splits, counts, &
                                                 options, layout, array) &
        bind(C, name="compas_array_create_split")
      import :: c_int, c_int64_t, c_ptr, c_array_options
      type(c_ptr), value :: rt, group, splits, counts  ! int64_t*, int* (both NULL: block split)
      integer(c_int), value :: type
      integer(c_int64_t), intent(in) :: lo(*), hi(*)
      type(c_array_options), intent(in) :: options
      integer(c_int), value :: layout
      type(c_ptr), intent(out) :: array
    end function
    integer(c_int) function c_array_create_like(like, factor, group, array) &
        bind(C, name="compas_array_create_like")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: like, group
      integer(c_int64_t), value :: factor
      type(c_ptr), intent(out) :: array
    end function
    integer(c_int) function c_array_redistribute(from, to) &
        bind(C, name="compas_array_redistribute")
      import :: c_int, c_ptr
      type(c_ptr), value :: from, to
    end function
    integer(c_int) function c_array_grid(array, grid) bind(C, name="compas_array_grid")
      import :: c_int, c_ptr
      type(c_ptr), value :: array
      integer(c_int), intent(out) :: grid(3)
    end function
    integer(c_int) function c_array_member(array, member) bind(C, name="compas_array_member")
      import :: c_int, c_ptr
      type(c_ptr), value :: array
      integer(c_int), intent(out) :: member
    end function
    integer(c_int) function c_array_create_with_layout(rt, type, dims, lo, hi, options, layout, &
                                                       array) &
        bind(C, name="compas_array_create_with_layout")
      import :: c_int, c_int64_t, c_ptr, c_array_options
      type(c_ptr), value :: rt
      integer(c_int), value :: type, dims
      integer(c_int64_t), intent(in) :: lo(*), hi(*)
      type(c_array_options), intent(in) :: options
      integer(c_int), value :: layout
      type(c_ptr), intent(out) :: array
    end function
    integer(c_int) function c_array_destroy(array) bind(C, name="compas_array_destroy")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: array
    end function
    integer(c_int) function c_array_bounds(array, lo, hi) bind(C, name="compas_array_bounds")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: array
      integer(c_int64_t), intent(out) :: lo(*), hi(*)
    end function
    integer(c_int) function c_array_halo_bounds(array, lo, hi) &
        bind(C, name="compas_array_halo_bounds")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: array
      integer(c_int64_t), intent(out) :: lo(*), hi(*)
    end function
    integer(c_int) function c_array_data(array, data, strides) bind(C, name="compas_array_data")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: array
      type(c_ptr), intent(out) :: data
      integer(c_int64_t), intent(out) :: strides(*)
    end function
    integer(c_int) function c_array_exchange(array) bind(C, name="compas_array_exchange")
      import :: c_int, c_ptr
      type(c_ptr), value :: array
    end function
    integer(c_int) function c_array_begin_exchange(array, exchange) &
        bind(C, name="compas_array_begin_exchange")
      import :: c_int, c_ptr
      type(c_ptr), value :: array
      type(c_ptr), intent(out) :: exchange
    end function
    integer(c_int) function c_exchange_wait(exchange) bind(C, name="compas_exchange_wait")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: exchange
    end function
    integer(c_int) function c_exchange_test(exchange, done) bind(C, name="compas_exchange_test")
      import :: c_int, c_ptr
      type(c_ptr), value :: exchange
      integer(c_int), intent(out) :: done
    end function
    integer(c_int) function c_array_accumulate_halos(array) &
        bind(C, name="compas_array_accumulate_halos")
      import :: c_int, c_ptr
      type(c_ptr), value :: array
    end function
    integer(c_int) function c_array_swap(a, b) bind(C, name="compas_array_swap")
      import :: c_int, c_ptr
      type(c_ptr), value :: a, b
    end function
    integer(c_int) function c_allreduce(rt, in, out, count, type, op) &
        bind(C, name="compas_allreduce")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: rt, in, out
      integer(c_int64_t), value :: count
      integer(c_int), value :: type, op
    end function
    integer(c_int) function c_broadcast(rt, data, count, type, root) &
        bind(C, name="compas_broadcast")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: rt, data
      integer(c_int64_t), value :: count
      integer(c_int), value :: type, root
    end function
    integer(c_int) function c_exscan(rt, in, out, count, type, op) bind(C, name="compas_exscan")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: rt, in, out
      integer(c_int64_t), value :: count
      integer(c_int), value :: type, op
    end function
    integer(c_int) function c_group_split(rt, colour, key, group) &
        bind(C, name="compas_group_split")
      import :: c_int, c_ptr
      type(c_ptr), value :: rt
      integer(c_int), value :: colour, key
      type(c_ptr), intent(out) :: group
    end function
    integer(c_int) function c_group_destroy(group) bind(C, name="compas_group_destroy")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: group
    end function
    integer(c_int) function c_group_rank(group, rank) bind(C, name="compas_group_rank")
      import :: c_int, c_ptr
      type(c_ptr), value :: group
      integer(c_int), intent(out) :: rank
    end function
    integer(c_int) function c_group_size(group, size) bind(C, name="compas_group_size")
      import :: c_int, c_ptr
      type(c_ptr), value :: group
      integer(c_int), intent(out) :: size
    end function
    integer(c_int) function c_group_barrier(group) bind(C, name="compas_group_barrier")
      import :: c_int, c_ptr
      type(c_ptr), value :: group
    end function
    integer(c_int) function c_group_allreduce(group, in, out, count, type, op) &
        bind(C, name="compas_group_allreduce")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: group, in, out
      integer(c_int64_t), value :: count
      integer(c_int), value :: type, op
    end function
    integer(c_int) function c_group_broadcast(group, data, count, type, root) &
        bind(C, name="compas_group_broadcast")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: group, data
      integer(c_int64_t), value :: count
      integer(c_int), value :: type, root
    end function
    integer(c_int) function c_group_exscan(group, in, out, count, type, op) &
        bind(C, name="compas_group_exscan")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: group, in, out
      integer(c_int64_t), value :: count
      integer(c_int), value :: type, op
    end function
    ! The ghosted vectors' calls: index lists and vectors by address (their type as a code).
    integer(c_int) function c_ghosts_create(rt, n_local, ghosts, count, index_type, plan) &
        bind(C, name="compas_ghosts_create")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: rt, ghosts
      integer(c_int64_t), value :: n_local, count
      integer(c_int), value :: index_type
      type(c_ptr), intent(out) :: plan
    end function
    integer(c_int) function c_ghosts_create_columns(rt, n_local, cols, count, index_type, plan) &
        bind(C, name="compas_ghosts_create_columns")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: rt, cols
      integer(c_int64_t), value :: n_local, count
      integer(c_int), value :: index_type
      type(c_ptr), intent(out) :: plan
    end function
    integer(c_int) function c_ghosts_destroy(plan) bind(C, name="compas_ghosts_destroy")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: plan
    end function
    integer(c_int) function c_ghosts_sizes(plan, first, n_owned, n_ghosts) &
        bind(C, name="compas_ghosts_sizes")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: plan
      integer(c_int64_t), intent(out) :: first, n_owned, n_ghosts
    end function
    integer(c_int) function c_ghosts_update(plan, v, count, type) &
        bind(C, name="compas_ghosts_update")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: plan, v
      integer(c_int64_t), value :: count
      integer(c_int), value :: type
    end function
    integer(c_int) function c_ghosts_accumulate(plan, v, count, type) &
        bind(C, name="compas_ghosts_accumulate")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: plan, v
      integer(c_int64_t), value :: count
      integer(c_int), value :: type
    end function
    integer(c_int) function c_block_of(lo, hi, parts, part, block_lo, block_hi) &
        bind(C, name="compas_block_of")
      import :: c_int, c_int64_t
      integer(c_int64_t), value :: lo, hi, parts, part
      integer(c_int64_t), intent(out) :: block_lo, block_hi
    end function
  end interface
end module compas_c_api
