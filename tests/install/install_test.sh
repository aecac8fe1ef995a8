#!/usr/bin/env bash
# Installs a compas build tree into a fresh temporary prefix, then checks what a user gets:
#  1. cmake --install <build dir> --prefix <tmp>
#  2. the consumer project (consumer/) configured with find_package(compas) and
#     CMAKE_PREFIX_PATH=<tmp>, built with the main build's generator and compiler, and run;
#  3. the same main.cpp compiled with `c++ $(pkg-config --cflags --libs compas)`, and run;
#  4. the installed bin/compas runs `topology --quiet` from the prefix (RPATH, no
#     LD_LIBRARY_PATH) and loads the installed libraries, not the build tree's;
#  5. no installed CMake or pkg-config file refers to the source or build tree; no installed header
#     includes nlohmann/json and neither compas.pc nor the CMake package asks for it (shared
#     build): a program gets only what compas.hpp includes;
#  6. with --consumer-c and --heat-c: the C heat example (the C API, compas/compas.h) built from
#     outside the tree with find_package(compas) (consumer_c/, compas::c) and with
#     `cc $(pkg-config --cflags --libs compas-c)`, both run and checked;
#  7. with --fc, --consumer-fortran and --heat-f (the folder of the Fortran examples): the Fortran
#     heat example (use compas) built with find_package(compas) (consumer_fortran/,
#     compas::fortran) and with `FC $(pkg-config --cflags --libs compas-fortran)`, both run and
#     checked; the .mod files installed in their compiler's folder, with compas_interfaces.f90
#     (the module's interfaces as source) beside them, compiling against them.
# Usage: install_test.sh --cmake=CMAKE --build-dir=DIR --consumer=DIR --cxx=CXX
#        [--source-dir=DIR] [--generator=G] [--make-program=P] [--build-type=T] [--libdir=lib]
#        [--cc=CC --consumer-c=DIR --heat-c=FILE] [--fc=FC --consumer-fortran=DIR --heat-f=DIR]
set -euo pipefail

cmake_cmd=cmake build_dir='' source_dir='' consumer='' cxx=c++ generator='' make_program=''
build_type=Release libdir=lib cc=cc consumer_c='' heat_c='' fc='' consumer_fortran='' heat_f=''
for arg in "$@"; do
  case "$arg" in
    --cmake=*) cmake_cmd=${arg#*=} ;;
    --build-dir=*) build_dir=${arg#*=} ;;
    --source-dir=*) source_dir=${arg#*=} ;;
    --consumer=*) consumer=${arg#*=} ;;
    --cxx=*) cxx=${arg#*=} ;;
    --generator=*) generator=${arg#*=} ;;
    --make-program=*) make_program=${arg#*=} ;;
    --build-type=*) build_type=${arg#*=} ;;
    --libdir=*) libdir=${arg#*=} ;;
    --cc=*) cc=${arg#*=} ;;
    --consumer-c=*) consumer_c=${arg#*=} ;;
    --heat-c=*) heat_c=${arg#*=} ;;
    --fc=*) fc=${arg#*=} ;;
    --consumer-fortran=*) consumer_fortran=${arg#*=} ;;
    --heat-f=*) heat_f=${arg#*=} ;;
    *) echo "install_test.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done
[[ -n "$build_dir" && -n "$consumer" ]] || { echo "install_test.sh: --build-dir and --consumer are required" >&2; exit 2; }
[[ -n "$build_type" ]] || build_type=Release

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compas-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
failures=0
step() { printf '\n==== %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; failures=$((failures + 1)); }
# Every libcompas_* the program loads must come from the prefix.
check_loads_from_prefix() {
  command -v ldd >/dev/null || return 0
  local resolved line
  resolved=$(ldd "$1" | grep -E 'libcompas_' || true)
  echo "$resolved"
  while read -r line; do
    [[ -z "$line" ]] && continue
    [[ "$line" == *"$prefix/"* ]] || fail "$1 loads a compas library from outside the prefix: $line"
  done <<<"$resolved"
}

# The environment must not help: no paths into the build tree.
unset LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH COMPAS_THREADS COMPAS_BIND COMPAS_JSON \
      COMPAS_CSV COMPAS_TOPOLOGY COMPAS_OVERSUBSCRIBE || true

step "install $build_dir into $prefix"
"$cmake_cmd" --install "$build_dir" --prefix "$prefix"

# GNUInstallDirs may pick lib, lib64 or lib/<multiarch>; trust the build, check the files.
if [[ ! -d "$prefix/$libdir" ]]; then
  fail "libdir '$libdir' from the build does not exist under the prefix"
  libdir=$(cd "$prefix" && dirname "$(find . -name 'libcompas_threads.so*' -o -name 'libcompas_threads.a' | head -n1)" | sed 's|^\./||')
fi
echo "libdir: $libdir"
for f in include/compas/compas.hpp include/compas/threads/team.hpp \
         "$libdir/cmake/compas/compasConfig.cmake" "$libdir/cmake/compas/compasConfigVersion.cmake" \
         "$libdir/cmake/compas/compasTargets.cmake" "$libdir/pkgconfig/compas.pc" bin/compas \
         include/compas/compas.h "$libdir/pkgconfig/compas-c.pc"; do
  [[ -e "$prefix/$f" ]] || fail "not installed: $f"
done
json_headers=$(grep -rl "nlohmann" "$prefix/include" || true)
[[ -z "$json_headers" ]] || fail "installed headers include nlohmann/json: $json_headers"
if grep -n "nlohmann" "$prefix/$libdir/pkgconfig/compas.pc"; then
  fail "compas.pc asks for nlohmann_json"
fi
if grep -n "nlohmann" "$prefix/$libdir/cmake/compas/"compasTargets*.cmake; then
  fail "the CMake package's targets ask for nlohmann_json"
fi

step "find_package(compas): configure, build and run the consumer"
gen_args=()
[[ -n "$generator" ]] && gen_args+=(-G "$generator")
[[ -n "$make_program" ]] && gen_args+=("-DCMAKE_MAKE_PROGRAM=$make_program")
if "$cmake_cmd" -S "$consumer" -B "$tmp/consumer-build" "${gen_args[@]}" \
     "-DCMAKE_CXX_COMPILER=$cxx" "-DCMAKE_BUILD_TYPE=$build_type" "-DCMAKE_PREFIX_PATH=$prefix" \
   && "$cmake_cmd" --build "$tmp/consumer-build" --verbose; then
  found=$(grep -E '^compas_DIR:' "$tmp/consumer-build/CMakeCache.txt" || true)
  echo "$found"
  [[ "$found" == *"$prefix"* ]] || fail "find_package(compas) did not find the package in $prefix: $found"
  check_loads_from_prefix "$tmp/consumer-build/app"
  if ! "$tmp/consumer-build/app"; then fail "the CMake-built consumer failed"; fi
else
  fail "the CMake consumer did not configure or build"
fi

step "pkg-config: compile and run the consumer"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
if pc_flags=$(pkg-config --cflags --libs compas); then
  echo "pkg-config --cflags --libs compas: $pc_flags"
  [[ "$pc_flags" == *"$prefix"* ]] || fail "compas.pc does not point into the prefix $prefix (relocated install): $pc_flags"
  # compas.pc leaves the language standard to its user (it forced -std=c++20 on every
  # translation unit of theirs); the headers say so when it is older than C++20.
  [[ " $pc_flags " != *" -std="* ]] || fail "compas.pc sets a language standard: $pc_flags"
  # shellcheck disable=SC2086
  if err=$("$cxx" -std=c++17 "$consumer/main.cpp" -o "$tmp/app-17" $pc_flags 2>&1); then
    fail "the consumer compiled as C++17"
  elif [[ $err != *"compas needs C++20"* ]]; then
    fail "compiled as C++17 the consumer fails without saying compas needs C++20: $err"
  fi
  # shellcheck disable=SC2086  # the flags are meant to be split
  if "$cxx" -std=c++20 "$consumer/main.cpp" -o "$tmp/app-pc" $pc_flags; then
    check_loads_from_prefix "$tmp/app-pc"
    if ! "$tmp/app-pc"; then fail "the pkg-config-built consumer failed"; fi
  else
    fail "the consumer does not compile with pkg-config's flags"
  fi
else
  fail "pkg-config cannot resolve compas"
fi

# A heat example must run and pass its own check (exit 0, a result line).
run_heat() {
  local out
  if out=$(OMP_NUM_THREADS=2 "$1" 1001 20 2>&1) && [[ "$out" == *"result = "* ]]; then
    echo "$out"
  else
    fail "$2: the heat example failed: $out"
  fi
}
# cmake_heat WHAT SOURCE_DIR BUILD_NAME PROGRAM -DVAR=VALUE...: a consumer of the installed
# package (find_package(compas)) configured, built and its heat example run.
cmake_heat() {
  local what=$1 src=$2 build=$tmp/$3 program=$4
  shift 4
  if "$cmake_cmd" -S "$src" -B "$build" "${gen_args[@]}" "-DCMAKE_BUILD_TYPE=$build_type" \
       "-DCMAKE_PREFIX_PATH=$prefix" "$@" && "$cmake_cmd" --build "$build" --verbose; then
    check_loads_from_prefix "$build/$program"
    run_heat "$build/$program" "find_package(compas), $what"
  else
    fail "the $what consumer did not configure or build"
  fi
}
# pc_heat PACKAGE OUTPUT COMPILER ARGS...: the heat example compiled with pkg-config PACKAGE's
# flags after ARGS, and run.
pc_heat() {
  local package=$1 out=$tmp/$2 flags
  shift 2
  if ! flags=$(pkg-config --cflags --libs "$package"); then
    fail "pkg-config cannot resolve $package"
    return
  fi
  echo "pkg-config --cflags --libs $package: $flags"
  [[ "$flags" == *"$prefix"* ]] || fail "$package.pc does not point into the prefix $prefix: $flags"
  # shellcheck disable=SC2086  # the flags are meant to be split
  if (cd "$tmp" && "$@" -o "$out" $flags -lm); then
    check_loads_from_prefix "$out"
    run_heat "$out" "pkg-config $package"
  else
    fail "the heat example does not compile with pkg-config $package's flags"
  fi
}
if [[ -n "$consumer_c" && -n "$heat_c" ]]; then
  step "find_package(compas) from C: configure, build and run the C heat example"
  cmake_heat compas::c "$consumer_c" consumer-c-build heat_compas "-DCMAKE_C_COMPILER=$cc" \
    "-DHEAT_C=$heat_c"
  step "pkg-config compas-c: compile and run the C heat example"
  pc_heat compas-c heat-pc "$cc" -std=c11 -fopenmp "$heat_c"
fi

if [[ -n "$fc" && -n "$consumer_fortran" && -n "$heat_f" ]]; then
  step "find_package(compas) from Fortran: configure, build and run the Fortran heat example"
  mods=$(find "$prefix/include/compas/fortran" -name compas.mod 2>/dev/null || true)
  echo "compas.mod: $mods"
  [[ "$mods" == "$prefix/include/compas/fortran/"*-*/compas.mod ]] ||
    fail "compas.mod is not installed in include/compas/fortran/<compiler>-<version>/: '$mods'"
  # The interfaces as source, beside compas.mod, valid against the installed module.
  interfaces=$(dirname "${mods%%$'\n'*}")/compas_interfaces.f90
  if [[ ! -f "$interfaces" ]]; then
    fail "compas_interfaces.f90 is not installed beside compas.mod: '$interfaces'"
  elif ! grep -q 'subroutine compas_exchange(u, ierr)' "$interfaces"; then
    fail "$interfaces does not document compas_exchange"
  elif ! "$fc" -fsyntax-only -I"$(dirname "$interfaces")" -J"$tmp" "$interfaces"; then
    fail "$interfaces does not compile against the installed module"
  fi
  cmake_heat compas::fortran "$consumer_fortran" consumer-f-build heat_compas_f \
    "-DCMAKE_Fortran_COMPILER=$fc" "-DHEAT_F=$heat_f/heat_compas.f90" \
    "-DFORMAT_F=$heat_f/example_format.f90"
  step "pkg-config compas-fortran: compile and run the Fortran heat example"
  pc_heat compas-fortran heat-f-pc "$fc" -fopenmp "$heat_f/example_format.f90" \
    "$heat_f/heat_compas.f90"
fi

step "installed bin/compas topology --quiet"
if "$prefix/bin/compas" topology --quiet; then
  echo "exit 0"
else
  fail "installed bin/compas topology --quiet exited $?"
fi
check_loads_from_prefix "$prefix/bin/compas"

step "installed package files do not refer to the source or build tree"
for tree in "$build_dir" "$source_dir"; do
  [[ -z "$tree" ]] && continue
  leaks=$(grep -rlF -- "$tree" "$prefix/$libdir/cmake" "$prefix/$libdir/pkgconfig" || true)
  [[ -z "$leaks" ]] || fail "installed files mention $tree: $leaks"
done

if ((failures)); then
  printf '\n%d check(s) failed\n' "$failures" >&2
  exit 1
fi
printf '\nall install checks passed\n'
