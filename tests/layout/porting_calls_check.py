#!/usr/bin/env python3
"""The porting guide's table of calls is complete: every public function that a header of
port/include/compas/port/ declares is named in docs/PORTING.md's table under that header.

    porting_calls_check.py SOURCE_DIR [--list]
    porting_calls_check.py --headers DIR --doc FILE [--list]

Public: declared in namespace compas (or one below it other than `detail`), as a free function,
a hidden friend, or a member in a `public:` part of a class or struct; members of a `detail` class
that a public class derives from count as that class's (DistArray's exchange calls). Deleted
functions and deduction guides are left out. Each is named by its class and name ("Partition3::
coarsened", "DistArray::DistArray" for a constructor, "~HaloExchange") or by its name alone (a
free function).

The table: after the heading "## Every call and its cost" of PORTING.md, one `### FILE` heading
per header (`### port/dist_array.hpp`), then table rows whose first cell names calls in code spans:
`Class<...>::name(...)`, `Class(...)` (a constructor), `compas::name(...)` (a free function),
template arguments ignored. Prints every declared call the table lacks, and every `Class::name`
in the table that no header declares (a renamed or removed call); exits 1 when there is one.
`--list` prints the declared calls instead.
"""

import glob
import os
import re
import sys

SECTION = "## Every call and its cost"


def strip_code(text):
    """The header without comments, string and character literals, preprocessor lines."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif text[i] in "\"'":
            q, i = text[i], i + 1
            while i < n and text[i] != q:
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append(q + q)
        else:
            out.append(text[i])
            i += 1
    lines = [l for l in "".join(out).split("\n") if not l.lstrip().startswith("#")]
    return "\n".join(lines)


TOKEN = re.compile(r"operator\s*(?:\(\s*\)|\[\s*\]|[^\s\w(]+)|~?\w+|::|\S")


def drop_templates(tokens):
    """`template <...>` prefixes and `requires` clauses out of a declaration's tokens."""
    out, k = [], 0
    while k < len(tokens):
        if tokens[k] == "template" and k + 1 < len(tokens) and tokens[k + 1] == "<":
            depth, k = 0, k + 1
            while k < len(tokens):
                depth += tokens[k] == "<"
                depth -= tokens[k] == ">"
                k += 1
                if depth == 0:
                    break
            continue
        out.append(tokens[k])
        k += 1
    return out


def drop_requires(toks):
    """A leading `requires (...)` clause (after `template <...>`) out."""
    if toks[:2] != ["requires", "("]:
        return toks
    depth = 0
    for k, t in enumerate(toks[1:], 1):
        depth += (t == "(") - (t == ")")
        if depth == 0:
            return toks[k + 1:]
    return []


def function_name(tokens, cls):
    """The name a declaration declares when it is a function, else None."""
    toks = drop_requires(drop_templates(tokens))
    if not toks or toks[0] in ("using", "typedef", "static_assert", "enum", "namespace",
                               "class", "struct", "union", "friend class", "return"):
        return None
    if toks[0] == "friend" and len(toks) > 1 and toks[1] in ("class", "struct"):
        return None
    depth = 0
    for k, t in enumerate(toks):
        if t in ("<",):
            depth += 1
        elif t == ">" and depth > 0:
            depth -= 1
        elif t == "=" and depth == 0:
            return None  # a variable with an initialiser
        elif t == "(" and depth == 0:
            if k == 0:
                return None
            name = toks[k - 1]
            if name.startswith("operator") or re.fullmatch(r"~?[A-Za-z_]\w*", name):
                if name in ("requires", "decltype", "noexcept", "alignas", "static_assert"):
                    return None
                if name.startswith("~") and cls is None:
                    return None
                return name
            return None
    return None


def base_names(tokens):
    """The classes a base clause names, template arguments left out."""
    names, depth = [], 0
    for t in tokens:
        depth += (t == "<") - (t == ">")
        if depth == 0 and re.fullmatch(r"[A-Za-z_]\w*", t) and t not in (
                "public", "private", "protected", "virtual", "final", "detail", "compas"):
            names.append(t)
    return names


def is_deleted(tokens):
    text = " ".join(tokens)
    return re.search(r"=\s*delete\s*$", text) is not None


def is_deprecated(tokens):
    """A [[deprecated]] forwarder: an old spelling kept one release, not a call to document."""
    return re.search(r"\[\s*\[\s*deprecated\b", " ".join(tokens)) is not None


def parse_header(text):
    """[(class or None, name, is_free)] of the public functions; and {class: [bases]}."""
    toks = TOKEN.findall(strip_code(text))
    found, bases = [], {}
    # A scope: (kind, name, public, detail); kind namespace | class | body.
    stack = [("namespace", "", True, False)]
    stmt = []
    paren = 0
    for t in toks:
        if t == "(":
            paren += 1
        elif t == ")":
            paren -= 1
        kind, name, public, detail = stack[-1]
        if kind == "body":
            if t == "{":
                stack.append(("body", "", False, detail))
            elif t == "}":
                stack.pop()
                stmt = []
            continue
        if paren > 0:
            stmt.append(t)
            continue
        if kind == "class" and t in ("public", "private", "protected") and not stmt:
            stack[-1] = (kind, name, t == "public", detail)
            continue
        if kind == "class" and t == ":" and not stmt:
            continue
        if t == ";":
            declare(stmt, stack, found)
            stmt = []
        elif t == "{":
            head = drop_templates(stmt)
            if head[:1] == ["namespace"]:
                names = [x for x in head[1:] if re.fullmatch(r"\w+", x)]
                stack.append(("namespace", "::".join(names), True, detail or "detail" in names))
            elif head[:1] in (["class"], ["struct"], ["union"]) and "(" not in head:
                cname = head[1] if len(head) > 1 else ""
                if ":" in head:
                    bases.setdefault(cname, set()).update(base_names(head[head.index(":") + 1:]))
                stack.append(("class", cname, head[0] != "class", detail))
            elif head[:1] == ["enum"] or (head and head[-1] == "=") or not head:
                stack.append(("body", "", False, detail))
            else:
                declare(stmt, stack, found)
                stack.append(("body", "", False, detail))
            stmt = []
        elif t == "}":
            stack.pop()
            stmt = []
        else:
            stmt.append(t)
    return found, bases


def declare(stmt, stack, found):
    kind, cname, public, detail = stack[-1]
    if not stmt or not public:
        return
    friend = stmt[0] == "friend"
    name = function_name(stmt[1:] if friend else stmt, None if kind == "namespace" else cname)
    if name is None or is_deleted(stmt) or is_deprecated(stmt):
        return
    if kind == "namespace" or friend:
        if name != "->":
            found.append((None, name, detail, kind == "namespace" and "->" in stmt))
    else:
        found.append((cname, name, detail, False))


def declared_calls(header_dir):
    """{header file name: sorted [key]} with key "Class::name" or "name"."""
    parsed = {}
    for path in sorted(glob.glob(os.path.join(header_dir, "*.hpp"))):
        with open(path) as f:
            parsed[os.path.basename(path)] = parse_header(f.read())
    classes = {}  # class -> (header, detail)
    bases = {}
    for header, (found, b) in parsed.items():
        for cls, bs in b.items():
            bases.setdefault(cls, set()).update(bs)
        for cls, name, detail, _ in found:
            if cls:
                classes.setdefault(cls, (header, detail))
    # A detail class a public class derives from (directly or through another detail class).
    public_of = {}

    def public_heir(cls, seen=()):
        for derived, bs in bases.items():
            if cls in bs and derived not in seen:
                if derived in classes and not classes[derived][1]:
                    return derived
                heir = public_heir(derived, seen + (derived,))
                if heir:
                    return heir
        return None

    calls = {}
    for header, (found, _) in parsed.items():
        keys = set()
        class_names = {c for c, *_ in found if c}
        for cls, name, detail, guide in found:
            if guide or (cls is None and name in class_names):
                continue  # a deduction guide
            if detail:
                heir = public_heir(cls) if cls else None
                if heir is None:
                    continue
                cls = public_of.setdefault(cls, heir)
            keys.add(f"{cls}::{name}" if cls else name)
        calls[header] = sorted(keys)
    return calls


def ungeneric(code):
    """A code span without template argument lists and spaces."""
    code = re.sub(r"\s+", "", code)
    prev = None
    while prev != code:
        prev = code
        code = re.sub(r"(\w)<[^<>()]*>", r"\1", code)
    return code


CALL = re.compile(r"(?:(\w+)::)?(operator(?:\(\)|\[\]|[^\w(]+)|~?\w+)\(")


def named_calls(cell):
    """{(qualifier or None, name)} of the calls a table cell's code spans name."""
    out = set()
    for span in re.findall(r"`([^`]+)`", cell):
        for q, name in CALL.findall(ungeneric(span)):
            out.add((q or None, name))
    return out


def table_calls(doc):
    """{header file name: {(qualifier, name)}} from the section's tables."""
    with open(doc) as f:
        text = f.read()
    at = text.find("\n" + SECTION + "\n")
    if at < 0:
        return None
    tables, header = {}, None
    for line in text[at + len(SECTION) + 2:].split("\n"):
        if line.startswith("## "):
            break
        if line.startswith("### "):
            m = re.match(r"###\s+`?([\w./]+\.hpp)", line)
            header = os.path.basename(m.group(1)) if m else None
            if header:
                tables.setdefault(header, set())
        elif header and line.startswith("|") and not re.match(r"\|\s*-", line):
            first = line.split("|")[1] if line.count("|") >= 2 else ""
            first = re.sub(r"\\\|", "", first)
            tables[header] |= named_calls(first)
    return tables


def covered(key, named):
    if "::" in key:
        cls, name = key.split("::", 1)
        if (cls, name) in named:
            return True
        if name in (cls, "~" + cls):  # a constructor or destructor: `Class(...)`, `~Class()`
            return (None, cls) in named or ("compas", cls) in named
        return False
    return (None, key) in named or ("compas", key) in named


def main(argv):
    listing = "--list" in argv
    argv = [a for a in argv if a != "--list"]
    if len(argv) == 1:
        headers = os.path.join(argv[0], "port", "include", "compas", "port")
        doc = os.path.join(argv[0], "docs", "PORTING.md")
    elif len(argv) == 4 and argv[0] == "--headers" and argv[2] == "--doc":
        headers, doc = argv[1], argv[3]
    else:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    calls = declared_calls(headers)
    if listing:
        for header, keys in calls.items():
            for k in keys:
                print(f"{header}: {k}")
        return 0
    tables = table_calls(doc)
    if tables is None:
        print(f"{doc}: no section '{SECTION}'")
        return 1
    problems = []
    members = {}
    for keys in calls.values():
        for k in keys:
            if "::" in k:
                cls, name = k.split("::", 1)
                members.setdefault(cls, set()).add(name)
    for header, keys in calls.items():
        if not keys:
            continue
        named = tables.get(header)
        if named is None:
            problems.append(f"{header}: no '### {header}' table in {SECTION}")
            continue
        for k in keys:
            if not covered(k, named):
                problems.append(f"{header}: {k} is not in its table")
    for header, named in tables.items():
        for q, name in sorted(named, key=str):
            if q in members and name != q and name not in members[q]:
                problems.append(f"{header}'s table names {q}::{name}, which no header declares")
    for p in problems:
        print(p)
    count = sum(len(k) for k in calls.values())
    print(f"porting_calls_check: {count} calls in {len(calls)} headers, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
