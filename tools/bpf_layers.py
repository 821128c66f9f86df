#!/usr/bin/env python3
"""tools/bpf_layers.py — bpf/'s includes and uses point one way only.

  tools/bpf_layers.py [--direct] [DIR]     (DIR: bpf/ of this checkout)

Reads DIR/*.h and DIR/*.bpf.c and prints one line per violation, exit 1
if any (then a summary line either way):
  1. a file uses an identifier defined in another file of DIR that is not
     among its transitive #includes (so nothing may use what a file that
     includes it defines: pmubpf.bpf.c is the top, each header stands on
     what it includes);
  2. the #includes of DIR's files form a cycle;
  3. with --direct, also: a file uses a DIR file's definition that it
     gets only through another include (include what you use), or a
     header #includes a DIR header of which it uses nothing (a top file,
     *.bpf.c, may include parts it does not use: that is how parts get
     compiled).

What it approximates (regexes and a brace counter, not a C parser):
  - definitions are what a file declares at file scope: functions (the
    name before the last parenthesised group ahead of the body; a
    BPF_PROG-style macro's first argument), variables and maps (the
    declarator after a struct body, or the last name before `=`, `[` or
    `;`), extern declarations, struct/union/enum tags, enum constants,
    #define names, and the first argument of a file-scope invocation of a
    function-like macro defined in DIR (STACKS_MAP(stacks0) defines
    stacks0). Preprocessor conditionals are ignored: both arms count.
  - uses are every identifier in the file (comments and string literals
    stripped) not written after `.` or `->` (members), but for a
    function's parameters inside that function. A local variable or
    struct field that happens to share its name with another file's
    top-level definition therefore counts as a use of it.
  - only `#include "X"` of files in DIR are followed; system headers,
    libbpf's and vmlinux.h (outside DIR) are neither read nor checked.
"""
import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_]\w*")
TOKEN = re.compile(r"[A-Za-z_]\w*|0[xX][0-9a-fA-F]+\w*|\d\w*|->|\S")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)(\()?")
UPPER = re.compile(r"^[A-Z_][A-Z0-9_]*$")
ATTRS = {"SEC", "__attribute__", "__attribute", "__section", "__aligned", "__ksym",
         "__weak", "__always_inline", "__noinline", "__uint", "__type", "__array"}


def strip(text):
    """Comments and string/char literals blanked (newlines kept); the name
    in `#include "X"` kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            line = "".join(out).rsplit("\n", 1)[-1]
            keep = c == '"' and re.fullmatch(r"\s*#\s*include\s*", line)
            out.append(text[i:j + 1] if keep else c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def logical_lines(text):
    """(first line number, line) with backslash continuations joined."""
    lines, buf, start = [], [], None
    for no, ln in enumerate(text.split("\n"), 1):
        if start is None:
            start = no
        if ln.endswith("\\"):
            buf.append(ln[:-1])
            continue
        buf.append(ln)
        lines.append((start, " ".join(buf)))
        buf, start = [], None
    if buf:
        lines.append((start, " ".join(buf)))
    return lines


def member(toks, k):
    return k > 0 and toks[k - 1] in (".", "->")


class Src:
    def __init__(self, path, name):
        self.path, self.name = path, name
        self.includes = []          # (line, name)
        self.defines = {}           # identifier -> line
        self.fmacros = set()        # function-like macros defined here
        self.uses = {}              # identifier -> first line
        self.lines = []             # code tokens' lines
        self.toks = []              # code tokens (outside preprocessor lines)
        text = strip(open(path, encoding="utf-8", errors="replace").read())
        for no, ln in logical_lines(text):
            if ln.lstrip().startswith("#"):
                m = INCLUDE.match(ln)
                if m:
                    self.includes.append((no, m.group(1)))
                    continue
                m = DEFINE.match(ln)
                if m:
                    self.define(m.group(1), no)
                    if m.group(2):
                        self.fmacros.add(m.group(1))
                    body = ln[m.end():]
                else:
                    body = ln.lstrip()[1:]
                toks = TOKEN.findall(body)
                for k, t in enumerate(toks):
                    if IDENT.fullmatch(t) and not member(toks, k):
                        self.uses.setdefault(t, no)
            else:
                toks = TOKEN.findall(ln)
                self.toks += toks
                self.lines += [no] * len(toks)

    def define(self, name, no):
        if name and IDENT.fullmatch(name):
            self.defines.setdefault(name, no)

    def group(self, j):
        """Index past the balanced group opened at toks[j]."""
        toks = self.toks
        opening = toks[j]
        closing = {"(": ")", "{": "}", "[": "]"}[opening]
        depth = 0
        while j < len(toks):
            if toks[j] == opening:
                depth += 1
            elif toks[j] == closing:
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        return len(toks)

    def scan(self, macros):
        """File-scope definitions, then uses, from the code tokens (macros:
        the function-like macros defined in DIR)."""
        toks, lines, n = self.toks, self.lines, len(self.toks)
        local = []                  # (first, past, names): a function's parameters
        stmt, i = [], 0             # indices of the file-scope statement so far
        while i < n:
            t = toks[i]
            if t in macros and not stmt and i + 1 < n and toks[i + 1] == "(":
                # FOO_MAP(name) / LABEL_SOURCE(name, reader) at file scope
                if i + 2 < n and IDENT.fullmatch(toks[i + 2]):
                    self.define(toks[i + 2], lines[i + 2])
                i = self.group(i + 1)
                if i < n and toks[i] == ";":
                    i += 1
                continue
            if t == "{":
                end = self.group(i)
                words = [toks[k] for k in stmt]
                if "=" in words:                # an initializer
                    i = end
                    continue
                if words and words[-1] == ")":  # a function's body
                    local.append(self._func(stmt, end))
                    stmt, i = [], end
                    continue
                if len(words) >= 2 and words[-2] in ("struct", "union", "enum") \
                        and IDENT.fullmatch(words[-1]):
                    self.define(words[-1], lines[stmt[-1]])
                if "enum" in words:             # its constants
                    depth, expect = 0, True
                    for k in range(i + 1, end - 1):
                        if toks[k] in "({[":
                            depth += 1
                        elif toks[k] in ")}]":
                            depth -= 1
                        elif depth == 0 and toks[k] == ",":
                            expect = True
                        elif depth == 0 and expect and IDENT.fullmatch(toks[k]):
                            self.define(toks[k], lines[k])
                            expect = False
                # a struct/union/enum body: its declarator, if any, follows
                stmt, i = [end - 1], end
                continue
            if t == ";":
                self._decl(stmt)
                stmt = []
            else:
                stmt.append(i)
            i += 1
        for k, t in enumerate(toks):
            if not IDENT.fullmatch(t) or member(toks, k):
                continue
            if any(a <= k < b and t in names for a, b, names in local):
                continue
            if self.uses.get(t, 1 << 30) > lines[k]:
                self.uses[t] = lines[k]

    def _func(self, stmt, end):
        """Define the function of header stmt (body up to end); return its
        parameters' scope."""
        toks, lines = self.toks, self.lines
        depth, j = 0, len(stmt) - 1     # the last (...) group before the body
        while j >= 0:
            t = toks[stmt[j]]
            if t == ")":
                depth += 1
            elif t == "(":
                depth -= 1
                if depth == 0:
                    break
            j -= 1
        if j <= 0:
            return (0, 0, set())
        at = stmt[j - 1]
        if UPPER.fullmatch(toks[at]) and IDENT.fullmatch(toks[stmt[j] + 1]):
            at = stmt[j] + 1            # BPF_PROG(on_switch, ...)
        self.define(toks[at], lines[at])
        params, last, depth = set(), None, 0
        for k in range(stmt[j] + 1, stmt[-1] + 1):
            t = toks[k]
            if t in "([":
                depth += 1
            elif t in ")]":
                depth -= 1
            if depth < 0 or (depth == 0 and t == ","):
                if last and last != toks[at]:
                    params.add(last)
                last = None
            elif depth == 0 and IDENT.fullmatch(t):
                last = t
        return (stmt[j], end, params)

    def _decl(self, stmt):
        toks, lines = self.toks, self.lines
        words = [toks[k] for k in stmt]
        if not words:
            return
        if words[0] == "}":                     # } declarator ATTR(...);
            k = 1
            while k < len(words):
                w = words[k]
                if w == "=":
                    return
                if w == "(":                    # an attribute's group
                    k = self.group(stmt[k]) - stmt[0]
                    continue
                if IDENT.fullmatch(w) and w not in ATTRS and \
                        not (k + 1 < len(words) and words[k + 1] == "("):
                    self.define(w, lines[stmt[k]])
                    return
                k += 1
            return
        if len(words) == 2 and words[0] in ("struct", "union", "enum"):
            self.define(words[1], lines[stmt[1]])  # a forward declaration
            return
        last = None
        for k, w in enumerate(words):
            if w in ("=", "[", "("):         # an initializer, array, prototype, SEC()
                break
            if IDENT.fullmatch(w) and w not in ATTRS:
                last = stmt[k]
        if last is not None:
            self.define(toks[last], lines[last])


def main(argv):
    direct = "--direct" in argv
    args = [a for a in argv if a != "--direct"]
    if args and args[0].startswith("-"):
        print(__doc__.strip().split("\n\n")[1])
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    if args:
        d = args[0].rstrip("/")
        show = d
    else:
        d = os.path.join(here, "..", "bpf")
        show = "bpf"
    names = sorted(f for f in os.listdir(d) if f.endswith(".h") or f.endswith(".bpf.c"))
    srcs = {f: Src(os.path.join(d, f), f) for f in names}
    macros = set().union(*(s.fmacros for s in srcs.values())) if srcs else set()
    for s in srcs.values():
        s.scan(macros)
    owners = {}
    for s in srcs.values():
        for ident in s.defines:
            owners.setdefault(ident, set()).add(s.name)
    bad = []

    def where(s, line):
        return f"{show}/{s.name}:{line}"

    # includes: only DIR's files
    inc = {f: [(no, h) for no, h in s.includes if h in srcs] for f, s in srcs.items()}

    # 2. cycles (depth-first search; each cycle reported once, by its members)
    seen_cycles, state = set(), {}

    def visit(f, path):
        state[f] = 1
        for _, h in inc[f]:
            if state.get(h) == 1:
                cyc = path[path.index(h):] + [h]
                key = frozenset(cyc)
                if key not in seen_cycles:
                    seen_cycles.add(key)
                    bad.append(f"include cycle: {' -> '.join(cyc)}")
            elif h not in state:
                visit(h, path + [h])
        state[f] = 2

    for f in names:
        if f not in state:
            visit(f, [f])

    def closure(f):
        out, todo = set(), [h for _, h in inc[f]]
        while todo:
            h = todo.pop()
            if h not in out:
                out.add(h)
                todo += [x for _, x in inc[h]]
        return out

    # 1. uses against transitive includes (3. direct ones with --direct)
    for f, s in srcs.items():
        reach = closure(f)
        direct_inc = {h for _, h in inc[f]}
        used_from = {h: [] for h in direct_inc}
        for ident, line in sorted(s.uses.items(), key=lambda x: (x[1], x[0])):
            if ident in s.defines or ident not in owners:
                continue
            defs = owners[ident]
            if not defs & reach:
                o = ", ".join(f"{show}/{x}" for x in sorted(defs))
                up = any(f in closure(x) for x in defs)
                bad.append(f"{where(s, line)}: uses {ident}, defined in {o}, which it does "
                           f"not #include{' (that file includes this one)' if up else ''}")
                continue
            for h in defs & direct_inc:
                used_from[h].append(ident)
            if direct and not defs & direct_inc:
                o = ", ".join(sorted(defs & reach))
                bad.append(f"{where(s, line)}: uses {ident} of {o} only through another "
                           f"include: #include \"{sorted(defs & reach)[0]}\"")
        if direct and f.endswith(".h"):
            for no, h in inc[f]:
                if not used_from[h]:
                    bad.append(f"{where(s, no)}: #include \"{h}\" but uses nothing it defines")

    for b in bad:
        print("bpf-layers: " + b)
    nincs = sum(len(v) for v in inc.values())
    print(f"bpf-layers: {len(srcs)} files, {nincs} includes: "
          + ("ok" if not bad else f"{len(bad)} violation(s)"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
