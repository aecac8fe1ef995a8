#!/usr/bin/env python3
"""The map tells the truth: docs/ARCHITECTURE.md quotes docs/layers.rules as it is, and every path
it names exists.

    docs_check.py SOURCE_DIR

A path is a `backticked` word with a '/' or a source file's extension. A bare file name in a line
resolves against the folder of the last path before it in that line ("`comm/src/ucx_*.cpp`,
`abandon.cpp`"), else anywhere in the tree; wildcards must match at least one file. Words with a
placeholder (LAYER, <compiler>) and files a build makes (compasConfig.cmake) are not paths of the
tree. Prints every problem; exits 1 when there is one.
"""

import glob
import os
import re
import sys

EXTENSIONS = r"\.(hpp|cpp|h|c|md|sh|py|f90|F90|json|txt|rules|cmake)$"
BUILT = {"compasConfig.cmake"}


def rules_lines(root):
    with open(os.path.join(root, "docs", "layers.rules")) as f:
        return [l.rstrip() for l in f if l.strip() and not l.startswith("#")]


def quoted_rules(text):
    m = re.search(r"<!-- layers\.rules -->\s*```\n(.*?)```\s*<!-- /layers\.rules -->", text, re.S)
    return None if m is None else [l.rstrip() for l in m.group(1).splitlines() if l.strip()]


def exists(root, pattern):
    return bool(glob.glob(os.path.join(root, pattern))) or os.path.exists(
        os.path.join(root, pattern))


def anywhere(root, name):
    for base, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "build"]
        if any(glob.fnmatch.fnmatch(f, name) for f in files + dirs):
            return True
    return False


def check_paths(root, text, problems):
    for number, line in enumerate(text.splitlines(), 1):
        folder = None
        for word in re.findall(r"`([^`\s]+)`", line):
            if word.startswith("http") or word in BUILT or "LAYER" in word or "<" in word:
                continue
            if "/" in word:
                if not exists(root, word) and not exists(root, os.path.join("docs", word)):
                    problems.append(f"ARCHITECTURE.md:{number}: `{word}` does not exist")
                folder = os.path.dirname(word.rstrip("/"))
            elif re.search(EXTENSIONS, word):
                if folder is not None and exists(root, os.path.join(folder, word)):
                    continue
                if not anywhere(root, word):
                    problems.append(f"ARCHITECTURE.md:{number}: `{word}` is in no folder")


def main(root):
    with open(os.path.join(root, "docs", "ARCHITECTURE.md")) as f:
        text = f.read()
    problems = []
    quote = quoted_rules(text)
    if quote is None:
        problems.append("ARCHITECTURE.md: no quote of docs/layers.rules between its markers")
    elif quote != rules_lines(root):
        problems.append(f"ARCHITECTURE.md quotes the rules as {quote}, docs/layers.rules says "
                        f"{rules_lines(root)}")
    check_paths(root, text, problems)
    for p in problems:
        print(p)
    print(f"docs_check: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
