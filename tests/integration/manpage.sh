#!/usr/bin/env bash
# manpage.sh — docs/pmubpf.1 stays true to the program (issue 14): it
# lists exactly the options `pmubpf --help` lists (both parsed, so new
# options need no edit here), documents every environment variable the
# code reads, carries the version `pmubpf --version` prints, and mandoc
# and groff (what lintian runs) find nothing to say about it.
source "$(dirname "$0")/lib.sh"
MAN=$ROOT/docs/pmubpf.1

if ! command -v mandoc >/dev/null; then
	fail mandoc_lint "mandoc not installed (tools/deps.sh installs it)"
elif out=$(mandoc -Tlint "$MAN" 2>&1) && [[ -z $out ]]; then
	pass mandoc_lint
else
	fail mandoc_lint "$(head -n1 <<<"$out")"
	printf '%s\n' "$out" | sed 's/^/    /' | head -n 20
fi

out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$MAN" 2>&1 >/dev/null)
if [[ -z $out ]]; then pass groff_warnings; else fail groff_warnings "$(head -n1 <<<"$out")"; fi

# -h and --help print the usage and exit 0; --version prints "pmubpf V".
if "$PMUBPF" -h >"$TMP/h" 2>&1 && "$PMUBPF" --help >"$TMP/help" 2>&1 &&
   cmp -s "$TMP/h" "$TMP/help" && grep -q '^usage: pmubpf' "$TMP/help"; then
	pass help_text
else
	fail help_text "-h/--help: $(head -n1 "$TMP/h")"
fi
ver=$("$PMUBPF" --version 2>&1)
if [[ $ver =~ ^pmubpf\ ([0-9][0-9.]*)$ ]] && grep -q "^\.TH PMUBPF 1 .*\"pmubpf ${BASH_REMATCH[1]}\"" "$MAN"; then
	pass man_version
else
	fail man_version "--version says '$ver'; the man page's .TH: $(grep '^\.TH' "$MAN")"
fi

check man_help_same_options python3 - "$MAN" "$TMP/help" <<'PY'
import re, sys
man, help_ = open(sys.argv[1]).read(), open(sys.argv[2]).read()
# An option is defined where it starts a definition or follows ", " in
# one: "-e, --event EVENT", "--stack-map-size N, --counts-map-size N".
# "--" alone (the command separator) is not an option.
OPT = re.compile(r"(?:^|,\s*)(--?[A-Za-z][\w-]*)")

def help_opts(text):
    opts = set()
    for line in text.splitlines():
        if re.match(r"^ {1,8}-", line):  # a definition, not a continuation
            opts.update(OPT.findall(line.strip()))
    return opts

def roff_text(line):
    line = re.sub(r"^\.[A-Z]+\s*", "", line)            # .B, .BR, .I ...
    line = re.sub(r"\\f(\[[^]]*\]|\(..|.)", "", line)    # font changes
    line = line.replace("\\-", "-").replace("\\&", "").replace('"', "")
    return re.sub(r"\s+,", ",", line).strip()

def man_opts(text):
    opts, section, tag_next = set(), None, False
    for line in text.splitlines():
        if line.startswith(".SH"):
            section = line[3:].strip().strip('"')
        elif section == "OPTIONS" and line.startswith(".TP"):
            tag_next = True
            continue
        elif tag_next:
            opts.update(OPT.findall(roff_text(line)))
        tag_next = False
    return opts

h, m = help_opts(help_), man_opts(man)
if len(h) < 10 or len(m) < 10:
    sys.exit("parsed too few options: --help %d, man %d" % (len(h), len(m)))
if h != m:
    sys.exit("only in --help: %s; only in the man page: %s" %
             (" ".join(sorted(h - m)) or "-", " ".join(sorted(m - h)) or "-"))
print("%d options in both" % len(h))
PY

# Every variable the code reads with getenv() is in ENVIRONMENT.
check man_environment python3 - "$MAN" "$ROOT/user" <<'PY'
import os, re, sys
man, root = open(sys.argv[1]).read(), sys.argv[2]
env = re.search(r"^\.SH ENVIRONMENT\n(.*?)(?=^\.SH )", man, re.M | re.S)
names = set()
for d, _, files in os.walk(root):
    for f in files:
        if f.endswith((".c", ".h")):
            names.update(re.findall(r'getenv\("([A-Za-z_][A-Za-z0-9_]*)"\)', open(os.path.join(d, f)).read()))
if not names:
    sys.exit("found no getenv() in " + root)
missing = sorted(n for n in names if not env or not re.search(r"^\.B " + n + r"$", env.group(1), re.M))
if missing:
    sys.exit("read by the code, not in the man page's ENVIRONMENT: " + " ".join(missing))
print(" ".join(sorted(names)))
PY
