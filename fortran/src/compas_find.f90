! compas_find: which array a call was given. The calls that take an array find its record in the
! registry of compas_core by the address of the first element they were passed:
!  - find_array: the whole pointer compas_create gave (compas_swap, compas_destroy, which take the
!    pointer itself);
!  - find_piece: that, or any contiguous piece of the array's local block: what an explicit-shape
!    or assumed-size dummy (u(n1, n2, n3), u(0:n1+1, 0:*)) receives from a contiguous actual
!    argument, the whole array or a part of it (compas_bounds, the exchanges, accumulation).
! When nothing matches, the message names the likely cause: a section, an array destroyed, or a
! temporary copy the compiler made to pass a non-contiguous array (a section, or one made with
! padded=.true.) through an explicit-shape or assumed-size dummy.
module compas_find
  use, intrinsic :: iso_c_binding
  use compas_c_api
  use compas_core, only: arrays, failed
  implicit none
  private

  public :: find_array, find_piece

contains

  ! The registry slot of the array whose local block starts at `address`, with `rank` dimensions
  ! and `elements` elements; 0 (and the failure) when there is none.
  integer function find_array(address, rank, elements, call, ierr) result(slot)
    type(c_ptr), intent(in) :: address
    integer, intent(in) :: rank, elements
    character(*), intent(in) :: call
    integer, intent(out), optional :: ierr
    slot = whole(address, rank, elements)
    if (slot /= 0) then
      if (present(ierr)) ierr = COMPAS_OK
      return
    end if
    if (holding(address) /= 0) then
      if (failed(COMPAS_ERR_HANDLE, ierr, call // ': the pointer is a section of an array ' &
                 // 'compas_create made: pass the whole pointer it gave')) return
    end if
    if (failed(COMPAS_ERR_HANDLE, ierr, call // ': the array is not one compas_create made (the ' &
               // 'whole pointer it gave), or it was destroyed')) return
  end function

  ! The registry slot of the array `address` is in: its whole pointer (as find_array), or, when
  ! the argument is `contiguous`, any element of its local block (an explicit-shape or assumed-size
  ! dummy's first element); 0 (and the failure, naming the likely cause) when there is none.
  integer function find_piece(address, rank, elements, contiguous, call, ierr) result(slot)
    type(c_ptr), intent(in) :: address
    integer, intent(in) :: rank, elements
    logical, intent(in) :: contiguous
    character(*), intent(in) :: call
    integer, intent(out), optional :: ierr
    slot = whole(address, rank, elements)
    if (slot == 0 .and. contiguous) slot = holding(address)
    if (slot /= 0) then
      if (present(ierr)) ierr = COMPAS_OK
      return
    end if
    if (holding(address) /= 0) then
      if (failed(COMPAS_ERR_HANDLE, ierr, call // ': the array is a section of an array ' &
                 // 'compas_create made that is not contiguous: pass the whole array')) return
    end if
    if (failed(COMPAS_ERR_HANDLE, ierr, call // ': ' // not_made(rank, elements))) return
  end function

  ! The slot whose local block starts at address with this rank and number of elements, or 0.
  integer function whole(address, rank, elements) result(slot)
    type(c_ptr), intent(in) :: address
    integer, intent(in) :: rank, elements
    integer :: k
    slot = 0
    if (.not. allocated(arrays)) return
    do k = 1, size(arrays)
      if (.not. c_associated(arrays(k)%handle)) cycle
      if (.not. c_associated(arrays(k)%data, address)) cycle
      if (arrays(k)%rank == rank .and. product(arrays(k)%extent(1:rank)) == elements) slot = k
    end do
  end function

  ! The slot whose local block (its memory, padding included) holds the element at address, or 0.
  integer function holding(address) result(slot)
    type(c_ptr), intent(in) :: address
    integer(c_intptr_t) :: at, first, bytes
    integer :: k
    slot = 0
    if (.not. allocated(arrays)) return
    at = transfer(address, at)
    do k = 1, size(arrays)
      if (.not. c_associated(arrays(k)%handle)) cycle
      associate (a => arrays(k))
        first = transfer(a%data, first)
        bytes = product(int(a%memory(1:a%rank), c_intptr_t)) * element_bytes(a%ctype)
        if (at >= first .and. at < first + bytes) slot = k
      end associate
    end do
  end function

  integer function element_bytes(ctype)
    integer, intent(in) :: ctype
    element_bytes = merge(8, 4, ctype == COMPAS_DOUBLE .or. ctype == COMPAS_INT64)
  end function

  ! Why an address lies in no array: none alive, or (the likely cause when some are) a temporary
  ! copy the compiler passed to an explicit-shape or assumed-size dummy.
  function not_made(rank, elements) result(text)
    integer, intent(in) :: rank, elements
    character(:), allocatable :: text
    if (live_arrays() == 0) then
      text = 'the array is not one compas_create made: none is alive (destroyed, or never made)'
      return
    end if
    text = 'the array is not one compas_create made, nor inside one: most likely a temporary ' &
           // 'copy the compiler made to pass a non-contiguous array (a section, or an array ' &
           // 'made with padded=.true.) through an explicit-shape or assumed-size dummy ' &
           // '(u(n1, n2), u(0:n1+1, *))'
    if (padded_like(rank, elements)) text = text // '; a padded array of that shape is alive'
    text = text // '. Pass a contiguous array (compas_create without padded), or use ' &
           // 'padded=.true. only with assumed-shape dummies (u(:, :)); or it was destroyed'
  end function

  integer function live_arrays() result(n)
    integer :: k
    n = 0
    if (.not. allocated(arrays)) return
    do k = 1, size(arrays)
      if (c_associated(arrays(k)%handle)) n = n + 1
    end do
  end function

  ! Whether a live array of this rank and number of elements is padded (not contiguous).
  logical function padded_like(rank, elements) result(found)
    integer, intent(in) :: rank, elements
    integer :: k
    found = .false.
    if (.not. allocated(arrays)) return
    do k = 1, size(arrays)
      if (.not. c_associated(arrays(k)%handle)) cycle
      associate (a => arrays(k))
        if (a%rank /= rank .or. product(a%extent(1:rank)) /= elements) cycle
        if (any(a%memory(1:rank) /= a%extent(1:rank))) found = .true.
      end associate
    end do
  end function
end module compas_find
