#!/usr/bin/env bash
# The layout's rules, checked on the source tree (CTest: layout.tree):
#  1. Every include follows docs/layers.rules (the one statement of what each layer may include):
#     a folder listed there includes its own public headers and those the file allows; no folder
#     includes another's internals (LAYER/src/..., by a relative path or not); no layer includes
#     the umbrella header compas/compas.hpp (apps and bench, the programs, may); compas/compas.h
#     is capi's.
#  2. No source file (C, C++, Fortran, headers) is over 600 lines.
#  3. Every layer with public headers has one overview header, LAYER/include/compas/LAYER/LAYER.hpp,
#     that opens with "// LAYER: " (what the layer is) and names every other public header of the
#     layer (by including it, or in its comment when a header is left out on purpose).
# Prints every breach as FILE:LINE: what; exits 1 when there is one, 2 when the rules cannot be
# read.
# Usage: check-layout.sh [SOURCE_DIR [RULES]]   (default: the repository this script is in, and
#        its docs/layers.rules)
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
rules=$(realpath -m "${2:-$root/docs/layers.rules}")
cd "$root" || exit 2
root=$(pwd -P)
[[ -r $rules ]] || {
  echo "check-layout: cannot read the rules file '$rules'" >&2
  exit 2
}

declare -A allowed=()
while IFS= read -r line; do
  line=${line%%#*}
  [[ $line =~ ^[[:space:]]*$ ]] && continue
  [[ $line =~ ^[[:space:]]*([a-z_]+):(.*)$ ]] || {
    echo "check-layout: $rules: not 'LAYER: LAYERS...': $line" >&2
    exit 2
  }
  allowed[${BASH_REMATCH[1]}]=" ${BASH_REMATCH[2]} "
done <"$rules"

status=0
breach() {
  echo "$1"
  status=1
}

# The folder (a listed layer) that `path` (relative to the root, or absolute under it) is in.
folder_of() {
  local p=${1#"$root"/}
  echo "${p%%/*}"
}

# check_include FOLDER FILE LINE TEXT
check_include() {
  local layer=$1 file=$2 line=$3 text=$4
  local quoted
  quoted=$(sed -nE 's@^\s*#\s*include\s*[<"]([^">]+)[">].*@\1@p' <<<"$text")
  [[ -n $quoted ]] || return 0
  # Another folder's internals: a path into LAYER/src/, relative to the file or from the root.
  local resolved=
  if [[ $quoted == ../* || $quoted == ./* ]]; then
    resolved=$(realpath -m "$(dirname "$file")/$quoted")
    resolved=${resolved#"$root"/}
  elif [[ $quoted == */src/* ]]; then
    resolved=$quoted
  fi
  if [[ $resolved =~ ^([a-z_]+)/src/ ]]; then
    local owner=${BASH_REMATCH[1]}
    if [[ -n ${allowed[$owner]+x} && $owner != "$layer" ]]; then
      breach "$file:$line: $layer includes $owner's internals ($text): include its public headers"
    fi
    return 0
  fi
  [[ $quoted =~ ^compas/([a-z_]+)(/|\.h) ]] || return 0
  local target=${BASH_REMATCH[1]}
  if [[ $target == compas ]]; then
    if [[ $quoted == compas/compas.h ]]; then
      target=capi
    else
      [[ ${allowed[$layer]} == *" * "* ]] && return 0
      breach "$file:$line: $layer includes the umbrella header ($text): layers include what they use"
      return 0
    fi
  fi
  [[ -n ${allowed[$target]+x} ]] || return 0  # not a layer's header
  [[ $target == "$layer" || ${allowed[$layer]} == *" * "* || ${allowed[$layer]} == *" $target "* ]] \
    && return 0
  breach "$file:$line: $layer includes $target ($text): docs/layers.rules allows $layer only${allowed[$layer]:- nothing}"
}

# 1. Includes from each listed folder's files.
for layer in "${!allowed[@]}"; do
  [[ -d $layer ]] || continue
  while IFS=: read -r file line text; do
    check_include "$layer" "$file" "$line" "$text"
  done < <(grep -rnE '^\s*#\s*include\s*[<"]' "$layer" --include='*.hpp' --include='*.cpp' \
             --include='*.h' --include='*.c' --include='*.F90')
done

# 1b. Include directories into another folder's internals, given to a target in CMake.
for layer in "${!allowed[@]}"; do
  [[ -d $layer ]] || continue
  while IFS=: read -r file line text; do
    while read -r owner; do
      [[ -n ${allowed[$owner]+x} && $owner != "$layer" ]] &&
        breach "$file:$line: $layer adds $owner's internals to its include path ($text)"
    done < <(grep -oE '(PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR)\}/[a-z_]+/src' <<<"$text" |
             sed -E 's@.*\}/([a-z_]+)/src@\1@')
  done < <(grep -rnE 'include_directories' "$layer" --include='CMakeLists.txt' --include='*.cmake')
done

# 2. Lengths: of the files git tracks, or (not a checkout) of every source file under the root.
source_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files '*.cpp' '*.hpp' '*.h' '*.c' '*.f' '*.f90' '*.F90'
  else
    find . -path ./build -prune -o -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \
         -o -name '*.c' -o -name '*.f' -o -name '*.f90' -o -name '*.F90' \) -print
  fi
}
while read -r count file; do
  [[ $file == total ]] && continue
  ((count > 600)) && breach "$file:$count: $count lines (at most 600: split it by concern)"
done < <(source_files | xargs -r wc -l)

# 3. One overview header per layer, naming every public header of the layer.
for layer in "${!allowed[@]}"; do
  inc=$layer/include/compas/$layer
  compgen -G "$inc/*.hpp" >/dev/null || continue
  top=$inc/$layer.hpp
  if [[ ! -f $top ]]; then
    breach "$inc: no overview header $layer.hpp (one per layer: what it is, every header named)"
    continue
  fi
  head -1 "$top" | grep -q "^// $layer: " ||
    breach "$top:1: the overview opens with '// $layer: ' and what the layer is"
  for h in "$inc"/*.hpp; do
    name=$(basename "$h")
    [[ $name == "$layer.hpp" ]] && continue
    grep -qF "$name" "$top" || breach "$top: does not name $name (include it, or say why not)"
  done
done

if ((status == 0)); then
  echo "layout: every include as docs/layers.rules allows, no source file over 600 lines, one overview header per layer"
fi
exit $status
