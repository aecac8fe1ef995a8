! compas_core: the module compas's state and the calls on the job: the runtime handle, the
! program's own command-line arguments, errors (the optional ierr), and the registry that ties a
! Fortran array pointer to its C array handle (found by an address: compas_find).
module compas_core
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use compas_c_api
  implicit none
  private

  ! An array's record: its C handle and how its local block lies in memory, in Fortran order.
  type, public :: array_record
    type(c_ptr) :: handle = c_null_ptr, data = c_null_ptr
    integer :: ctype = 0, rank = 0
    integer :: hlo(3) = 0      ! the halo box's lower bounds (global indices)
    integer :: extent(3) = 1   ! the halo box's extents
    integer :: memory(3) = 1   ! the memory's shape (dimension 1 may be padded past extent(1))
  end type

  ! A group of processes (compas_group_split); a collective given `group=g` runs over its members,
  ! an array made with `group=g` lies on them. Its handle is reached through group_handle (the
  ! module's own modules only: compas re-exports the type alone).
  type, public :: compas_group
    type(c_ptr), private :: handle = c_null_ptr
  end type

  ! One command-line argument as C wants it: the characters, then a NUL.
  type :: c_string
    character(kind=c_char), allocatable :: s(:)
  end type

  type(c_ptr), public, save :: runtime = c_null_ptr
  type(array_record), allocatable, public, save :: arrays(:)
  type(c_string), allocatable, target, save :: c_argv_text(:)
  type(c_ptr), allocatable, target, save :: c_argv(:)
  type(c_string), allocatable, save :: program_args(:)
  character(:), allocatable, save :: last_message

  public :: failed, c_message, compas_error_message, compas_init, compas_finalize, compas_rank, &
            compas_processes, compas_threads, compas_abort, compas_argument_count, &
            compas_get_argument, refresh_array, new_record, group_handle, set_group_handle

contains

  ! After a call: ierr (when present) gets the code. A failure keeps its message (C's
  ! compas_last_error, or `message` for a failure the module finds itself); without ierr it ends
  ! the job: every process that fails prints "compas: process R: MESSAGE" and the job exits with
  ! status 2 for COMPAS_ERR_ARG (bad input), 1 otherwise (compas_abort; before compas_init
  ! succeeded, error stop).
  logical function failed(code, ierr, message)
    integer(c_int), intent(in) :: code
    integer, intent(out), optional :: ierr
    character(*), intent(in), optional :: message
    integer :: status
    integer(c_int) :: aborted
    if (present(ierr)) ierr = code
    failed = code /= COMPAS_OK
    if (.not. failed) return
    if (present(message)) then
      last_message = message
    else
      last_message = c_message(c_last_error())
    end if
    if (present(ierr)) return
    status = merge(2, 1, code == COMPAS_ERR_ARG)
    aborted = c_abort(runtime, int(status, c_int), last_message // c_null_char)  ! returns: no job
    write (error_unit, '(2a)') 'compas: ', last_message
    error stop status
  end function

  ! A NUL-terminated C string as a Fortran string.
  function c_message(p) result(text)
    type(c_ptr), intent(in) :: p
    character(:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    n = 0
    if (c_associated(p)) n = int(c_strlen(p))
    allocate (character(n) :: text)
    if (n == 0) return
    call c_f_pointer(p, chars, [n])
    do i = 1, n
      text(i:i) = chars(i)
    end do
  end function

  ! The message of the last failure of a call made with ierr ("" before any).
  function compas_error_message() result(text)
    character(:), allocatable :: text
    text = ''
    if (allocated(last_message)) text = last_message
  end function

  ! Joins the job and pins this process's threads, OpenMP's included. compas's own flags
  ! (--threads N, --bind B, --wait W, --openmp M, ...) are taken from the command line; the rest
  ! are the program's: compas_argument_count and compas_get_argument. A second call while the
  ! runtime is alive, or (in a job of several processes) after compas_finalize, fails with
  ! COMPAS_ERR_STATE on every process at once, the runtime left as it was (compas.h's compas_init).
  subroutine compas_init(ierr)
    integer, intent(out), optional :: ierr
    integer(c_int) :: argc
    type(c_ptr) :: argv
    integer :: i
    argc = int(command_argument_count() + 1, c_int)
    ! A second compas_init (twice, or after compas_finalize) builds them anew; C then says whether
    ! it may join (COMPAS_ERR_STATE when not).
    if (allocated(c_argv_text)) deallocate (c_argv_text)
    if (allocated(c_argv)) deallocate (c_argv)
    allocate (c_argv_text(0:argc - 1), c_argv(0:argc))
    do i = 0, argc - 1
      c_argv_text(i) = to_c(i)
      c_argv(i) = c_loc(c_argv_text(i)%s)
    end do
    c_argv(argc) = c_null_ptr
    argv = c_loc(c_argv)
    if (failed(c_init(argc, argv, runtime), ierr)) return
    call keep_arguments(argc, argv)
  end subroutine

  ! Command-line argument i as a C string.
  function to_c(i) result(arg)
    integer, intent(in) :: i
    type(c_string) :: arg
    integer :: n, k
    character(:), allocatable :: text
    call get_command_argument(i, length=n)
    allocate (character(n) :: text)
    if (n > 0) call get_command_argument(i, text)
    allocate (arg%s(n + 1))
    do k = 1, n
      arg%s(k) = text(k:k)
    end do
    arg%s(n + 1) = c_null_char
  end function

  ! What compas_init left of argv: the program's arguments (argv[1] .. argv[argc - 1]).
  subroutine keep_arguments(argc, argv)
    integer(c_int), intent(in) :: argc
    type(c_ptr), intent(in) :: argv
    type(c_ptr), pointer :: left(:)
    character(:), allocatable :: text
    integer :: i, k
    call c_f_pointer(argv, left, [argc])
    if (allocated(program_args)) deallocate (program_args)
    allocate (program_args(argc - 1))
    do i = 1, argc - 1
      text = c_message(left(i + 1))
      allocate (program_args(i)%s(len(text)))
      do k = 1, len(text)
        program_args(i)%s(k) = text(k:k)
      end do
    end do
  end subroutine

  ! The number of the program's arguments (compas's flags taken out): command_argument_count's.
  integer function compas_argument_count()
    compas_argument_count = 0
    if (allocated(program_args)) compas_argument_count = size(program_args)
  end function

  ! The program's argument i (1 .. compas_argument_count()), as get_command_argument gives it:
  ! value (blank-padded or truncated), length, status (0; -1 truncated; 1 no such argument).
  subroutine compas_get_argument(i, value, length, status)
    integer, intent(in) :: i
    character(*), intent(out), optional :: value
    integer, intent(out), optional :: length, status
    integer :: k, n
    if (present(value)) value = ''
    if (i < 1 .or. i > compas_argument_count()) then
      if (present(length)) length = 0
      if (present(status)) status = 1
      return
    end if
    n = size(program_args(i)%s)
    if (present(length)) length = n
    if (present(status)) status = 0
    if (.not. present(value)) return
    do k = 1, min(n, len(value))
      value(k:k) = program_args(i)%s(k)
    end do
    if (present(status) .and. n > len(value)) status = -1
  end subroutine

  ! Collective: destroys the arrays and groups still alive, then the runtime.
  subroutine compas_finalize(ierr)
    integer, intent(out), optional :: ierr
    if (failed(c_finalize(runtime), ierr)) return
    if (allocated(arrays)) deallocate (arrays)
  end subroutine

  ! The queries (compas_rank, compas_processes, compas_threads, and compas_group_rank and
  ! compas_group_size of compas_collectives) return -1 when they fail (ierr set: before
  ! compas_init, after compas_finalize, a group never made or destroyed). The -1 is set after the C
  ! call: its result argument is intent(out), undefined when the call fails.

  ! This process's rank in the job, 0 .. compas_processes() - 1; -1 on failure.
  integer function compas_rank(ierr)
    integer, intent(out), optional :: ierr
    integer(c_int) :: r
    if (failed(c_process(runtime, r), ierr)) r = -1
    compas_rank = r
  end function

  ! The job's number of processes; -1 on failure.
  integer function compas_processes(ierr)
    integer, intent(out), optional :: ierr
    integer(c_int) :: p
    if (failed(c_processes(runtime, p), ierr)) p = -1
    compas_processes = p
  end function

  ! Threads per process (OpenMP's, pinned by compas_init); -1 on failure.
  integer function compas_threads(ierr)
    integer, intent(out), optional :: ierr
    integer(c_int) :: t
    if (failed(c_threads(runtime, t), ierr)) t = -1
    compas_threads = t
  end function

  ! Ends the whole job: prints "compas: process R: MESSAGE" and every process exits with `code`
  ! (1..255). Returns only on a bad code (with ierr; without, the job ends with status 2).
  subroutine compas_abort(code, message, ierr)
    integer, intent(in) :: code
    character(*), intent(in) :: message
    integer, intent(out), optional :: ierr
    if (failed(c_abort(runtime, int(code, c_int), message // c_null_char), ierr)) return
  end subroutine

  ! The C handle of a group (c_null_ptr: never made or destroyed), and setting it.
  type(c_ptr) function group_handle(group)
    type(compas_group), intent(in) :: group
    group_handle = group%handle
  end function

  subroutine set_group_handle(group, handle)
    type(compas_group), intent(inout) :: group
    type(c_ptr), intent(in) :: handle
    group%handle = handle
  end subroutine

  ! A free registry slot for a new handle.
  integer function new_record(handle, ctype, rank) result(slot)
    type(c_ptr), intent(in) :: handle
    integer, intent(in) :: ctype, rank
    type(array_record), allocatable :: grown(:)
    if (.not. allocated(arrays)) allocate (arrays(0))
    do slot = 1, size(arrays)
      if (.not. c_associated(arrays(slot)%handle)) exit
    end do
    if (slot > size(arrays)) then
      allocate (grown(2 * size(arrays) + 4))
      grown(1:size(arrays)) = arrays
      call move_alloc(grown, arrays)
    end if
    arrays(slot) = array_record(handle=handle, ctype=ctype, rank=rank)
  end function

  ! Reads the local block's address, halo box and strides of the array in `slot` from C, turning
  ! C's order (the last dimension contiguous, hi exclusive) into Fortran's.
  integer(c_int) function refresh_array(slot) result(code)
    integer, intent(in) :: slot
    integer(c_int64_t) :: lo(3), hi(3), strides(3)
    integer :: d, r
    associate (a => arrays(slot))
      r = a%rank
      code = c_array_halo_bounds(a%handle, lo, hi)
      if (code == COMPAS_OK) code = c_array_data(a%handle, a%data, strides)
      if (code /= COMPAS_OK) return
      do d = 1, r
        a%hlo(d) = int(lo(r + 1 - d))
        a%extent(d) = int(hi(r + 1 - d) - lo(r + 1 - d))
      end do
      a%memory = a%extent
      if (any(a%extent(1:r) == 0)) return  ! no element (an array on a group it is not in)
      if (r >= 2) a%memory(1) = int(strides(r - 1))
      if (r == 3) a%memory(2) = int(strides(1) / strides(2))
    end associate
  end function
end module compas_core
