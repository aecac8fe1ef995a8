! A Fortran sample for scripts/code-lines.sh: 6 lines of code (test scripts.code_lines_fortran).
program sample  ! code then comment
  implicit none
    ! an indented comment

  !$omp parallel do
  print *, 'a ! in a string', "and ""another"" ! one"
  !$ print *, 'conditional'
  !omp is not a directive
end program sample
