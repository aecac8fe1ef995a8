# compas_aligned_loops(TARGET...): the targets' loops start on a 32-byte boundary (GCC and Clang,
# C, C++ and Fortran). For the programs bench/apps_vs_originals.sh sets side by side (an original
# and its port): without it, where the linker happens to put a hot inner loop in each binary moves
# its time, which is not the code's doing. The sparse CG's 28-byte SpMV loop ran 5-9% slower in
# the binary where it crossed a 64-byte line; with the loops aligned in both, the two ran within
# 1% (bench/README.md, apps_vs_originals.sh).
function(compas_aligned_loops)
  foreach(target IN LISTS ARGN)
    target_compile_options(
      ${target} PRIVATE $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-falign-loops=32>
                        $<$<COMPILE_LANG_AND_ID:C,GNU,Clang>:-falign-loops=32>
                        $<$<COMPILE_LANG_AND_ID:Fortran,GNU>:-falign-loops=32>)
  endforeach()
endfunction()
