! compas_block_of against an independent recomputation: for ranges of 0 to 13 cells starting at
! 1, -3 and 1000 and 1 to 6 parts, the blocks must follow each other from lo to hi (each starting
! where the one before ended), be as even as a split gets (sizes n/parts or n/parts + 1, the
! longer ones first) and there be exactly mod(n, parts) longer ones. Called before compas_init
! (no job needed), then again inside the job with the same answers. Bad values (hi < lo - 1,
! parts 0 and -2, part -1 and parts, and the extremes of a default integer: a part of -2**31, lo
! -2**31 and hi 2**31 - 1, whose empty blocks' bounds would not fit) come back as COMPAS_ERR_ARG
! with a message naming the value, the outputs left as an empty block. Run by tests/apps
! (fortran.block_of) under compas-run at 1 and 2 processes; exits non-zero on a failure, prints
! PASS on process 0.
program block_of
  use compas
  implicit none
  integer :: starts(3) = [1, -3, 1000]
  integer :: bad, checked

  bad = 0
  checked = 0
  call check_all()  ! before the job
  call compas_init()
  call check_all()
  call check_refusals()
  call compas_allreduce(bad, COMPAS_MAX)
  if (bad /= 0) error stop 1
  if (compas_rank() == 0) print '(a,i0,a)', 'PASS (', checked, ' blocks)'
  call compas_finalize()

contains

  subroutine check_all()
    integer :: s, n, parts, k, lo, hi, blo, bhi, next, longer, ierr
    do s = 1, size(starts)
      do n = 0, 13
        lo = starts(s)
        hi = lo + n - 1
        do parts = 1, 6
          next = lo
          longer = 0
          do k = 0, parts - 1
            call compas_block_of(lo, hi, parts, k, blo, bhi, ierr)
            checked = checked + 1
            if (ierr /= COMPAS_OK) call fail('refused', lo, hi, parts, k)
            if (blo /= next) call fail('does not start where the last block ended', lo, hi, parts, k)
            if (bhi - blo + 1 /= n / parts .and. bhi - blo + 1 /= n / parts + 1) &
              call fail('is not n/parts or n/parts + 1 long', lo, hi, parts, k)
            if (bhi - blo + 1 == n / parts + 1) then
              if (longer /= k) call fail('is longer than a block before it', lo, hi, parts, k)
              longer = longer + 1
            end if
            next = bhi + 1
          end do
          if (next /= hi + 1) call fail('the blocks do not end at hi', lo, hi, parts, parts - 1)
          if (longer /= mod(n, parts)) call fail('not mod(n, parts) longer blocks', lo, hi, parts, 0)
        end do
      end do
    end do
  end subroutine

  subroutine check_refusals()
    integer :: lowest
    call refused(5, 2, 3, 0, '5..2')
    call refused(1, 10, 0, 0, 'parts 0')
    call refused(1, 10, -2, 0, 'parts -2')
    call refused(1, 10, 3, -1, 'part -1 of 3')
    call refused(1, 10, 3, 3, 'part 3 of 3')
    ! The extremes of a default integer: named whole, and no bound that overflows.
    lowest = -huge(0)
    lowest = lowest - 1  ! -2**31, not written as a constant (outside the symmetric range)
    call refused(1, 10, huge(0), lowest, 'part -2147483648 of 2147483647')
    call refused(lowest, 0, 2, 0, 'lo -2147483648')
    call refused(1, huge(0), 2, 1, 'hi 2147483647')
  end subroutine

  subroutine refused(lo, hi, parts, part, named)
    integer, intent(in) :: lo, hi, parts, part
    character(*), intent(in) :: named
    integer :: blo, bhi, ierr
    blo = -77
    bhi = -77
    call compas_block_of(lo, hi, parts, part, blo, bhi, ierr)
    if (ierr /= COMPAS_ERR_ARG) then
      print '(a,a,a,i0)', 'FAIL: ', named, ': ierr ', ierr
      bad = 1
    else if (index(compas_error_message(), named) == 0) then
      print '(4a)', 'FAIL: the message does not name ', named, ': ', compas_error_message()
      bad = 1
    else if (bhi /= blo - 1) then
      print '(3a,i0,a,i0)', 'FAIL: ', named, ': not an empty block: ', blo, '..', bhi
      bad = 1
    end if
  end subroutine

  subroutine fail(what, lo, hi, parts, k)
    character(*), intent(in) :: what
    integer, intent(in) :: lo, hi, parts, k
    print '(a,i0,a,i0,a,i0,a,i0,a,a)', 'FAIL: block ', k, ' of ', lo, '..', hi, ' in ', parts, &
      ' parts ', what
    bad = 1
  end subroutine

end program block_of
