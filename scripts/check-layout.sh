#!/usr/bin/env bash
# The layout's two rules, checked on the source tree (CTest: repo.layout):
#  1. No include runs against the layers. A layer includes its own headers and those of the
#     layers below it, never those above it or of a sibling:
#       base -> threads, comm -> perf -> runtime, probes -> capi, kernels -> report -> apps
#       base -> analysis -> report
#     (threads and comm are siblings, as are runtime and probes, and capi and kernels; perf is the
#     instrumentation, probes measure the machine, analysis fits models to numbers and needs no
#     layer; report, the tools' JSON, is above every layer a program links). include/compas/compas.hpp, the
#     umbrella header, is for programs: no layer includes it (compas.h, beside it, is capi's own).
#  2. No source file (C, C++, Fortran, headers) is over 600 lines.
# Prints every breach as FILE:LINE: what; exits 1 when there is one.
# Usage: check-layout.sh [SOURCE_DIR]   (default: the repository this script is in)
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2

declare -A rank=([base]=0 [analysis]=1 [threads]=1 [comm]=1 [perf]=2 [runtime]=3 [probes]=3 [capi]=4
                 [kernels]=4 [report]=5)
status=0
breach() {
  echo "$1"
  status=1
}

# 1. Includes of compas/LAYER/... (and the umbrella headers) from each layer's own files.
for layer in "${!rank[@]}"; do
  [[ -d $layer ]] || continue
  while IFS=: read -r file line text; do
    target=$(sed -nE 's@.*[<"]compas/([a-z_]+)(/|\.h).*@\1@p' <<<"$text")
    [[ $target == compas && $text == *compas/compas.h[\"\>]* ]] && target=capi
    [[ -n $target ]] || continue
    if [[ $target == compas ]]; then
      breach "$file:$line: $layer includes the umbrella header ($text): layers include what they use"
      continue
    fi
    [[ -n ${rank[$target]:-} ]] || continue  # not a layer's header (e.g. a test hook)
    if [[ $target != "$layer" && ${rank[$target]} -ge ${rank[$layer]} ]]; then
      breach "$file:$line: $layer includes $target ($text): $target is not below $layer"
    fi
  done < <(grep -rnE '^\s*#\s*include\s*[<"]compas/' "$layer" --include='*.hpp' --include='*.cpp' \
             --include='*.h' --include='*.c')
done

# 2. Lengths: of the files git tracks, or (not a checkout) of every source file under the root.
source_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files '*.cpp' '*.hpp' '*.h' '*.c' '*.f90' '*.F90'
  else
    find . -path ./build -prune -o -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \
         -o -name '*.c' -o -name '*.f90' -o -name '*.F90' \) -print
  fi
}
while read -r count file; do
  [[ $file == total ]] && continue
  ((count > 600)) && breach "$file:$count: $count lines (at most 600: split it by concern)"
done < <(source_files | xargs -r wc -l)

if ((status == 0)); then
  echo "layout: no include against the layers, no source file over 600 lines"
fi
exit $status
