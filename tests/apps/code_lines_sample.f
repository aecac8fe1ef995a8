c A fixed-form Fortran sample for scripts/code-lines.sh: 7 lines of code
* (test scripts.code_lines_fixed_form). c, C, * or ! in column 1: a comment.
      program sample
C     an upper-case comment
      implicit none
!$omp parallel
c$omp barrier
*$omp end parallel
      call check('c and * in a string ! are code')
!     a comment
      end
