#!/usr/bin/env bash
# Lines of code of C and C++ files, one rule for every count the project reports (the ported
# examples' sizes in scripts/port-lines.sh, the PRK comparison in bench/prk.sh): a line counts
# when something other than white space and comments is left on it. Comments are `//` to the end
# of the line (`///` and `//!` included) and `/* ... */` blocks over any number of lines; a `//`
# or `/*` inside a string or character literal is code. Preprocessor lines count as code.
# Fortran files (.f90, .F90, .f95, .f03, .f08, .f, .F): `!` to the end of the line is a comment,
# except inside a string ('...' or "...") and except the directives `!$omp ...` and `!$ ...`
# (OpenMP's, and its conditional lines), which are code as C's #pragma lines are. In fixed form
# (.f, .F) a `c`, `C` or `*` in column 1 also makes the line a comment, but for the same
# directives spelled with it (`c$omp`, `*$omp`, `c$ ...`).
# Usage: scripts/code-lines.sh FILE...   prints "COUNT FILE" per file
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: scripts/code-lines.sh FILE..." >&2; exit 2; }
for f in "$@"; do
  [[ -f "$f" && -r "$f" ]] || { echo "code-lines.sh: '$f' is not a readable file" >&2; exit 2; }
done
exec python3 - "$@" <<'PY'
import sys

def code_lines(text):
    count, block, code = 0, False, False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            count += code
            code = False
            i += 1
        elif block:
            if text.startswith("*/", i):
                block, i = False, i + 2
            else:
                i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            block, i = True, i + 2
        elif c in "\"'":
            code, i = True, i + 1
            while i < n and text[i] != c and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
            i += 1 if i < n and text[i] == c else 0
        else:
            code = code or not c.isspace()
            i += 1
    return count + code

def fortran_code_lines(text, fixed):
    count = 0
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("!$") or (fixed and line[:2].lower() in ("c$", "*$")):
            count += 1
            continue
        if fixed and line[:1] in ("c", "C", "*"):
            continue
        quote, code = None, False
        for c in line:
            if quote:
                quote = None if c == quote else quote
            elif c == "!":
                break
            elif c in "\"'":
                quote, code = c, True
            elif not c.isspace():
                code = True
        count += code
    return count

FORTRAN = (".f90", ".F90", ".f95", ".f03", ".f08", ".f", ".F")

for path in sys.argv[1:]:
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if path.endswith(FORTRAN):
        print(fortran_code_lines(text, path.endswith((".f", ".F"))), path)
    else:
        print(code_lines(text), path)
PY
