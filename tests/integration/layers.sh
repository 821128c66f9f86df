#!/usr/bin/env bash
# layers.sh — tools/check_layers.py (`make check-layers`, run by `make
# test`) bites: on small trees of its own it passes a clean one and fails
# an upward include, one through '..', an upward call and a call circle,
# each with its line; and `make test` runs it after the build, before the
# tests. Needs no root: it reads sources and, through nm, objects.
source "$(dirname "$0")/lib.sh"

# tree NAME: a fresh copy of the checker with an empty user/ under $TMP.
tree() {
	local t=$TMP/$1
	mkdir -p "$t/tools" "$t/user/lib" "$t/user/procs" "$t/user/symbols" "$t/build"
	cp "$ROOT/tools/check_layers.py" "$t/tools/"
	echo "$t"
}
# obj TREE FILE: compile TREE/user/FILE into TREE/build/user/FILE.o.
obj() {
	mkdir -p "$(dirname "$1/build/user/$2")"
	cc -c -I"$1/user" "$1/user/$2" -o "$1/build/user/${2%.c}.o"
}
# expect NAME TREE STATUS PATTERN: the checker exits STATUS and says PATTERN.
expect() {
	local name=$1 t=$2 want=$3 pat=$4 out rc
	out=$(python3 "$t/tools/check_layers.py" "$t/build" 2>&1); rc=$?
	if [[ $rc -eq $want ]] && grep -q -- "$pat" <<<"$out"; then
		pass "$name"
	else
		fail "$name" "exit $rc, want $want with '$pat': $(tail -n 1 <<<"$out")"
		printf '%s\n' "$out" | sed 's/^/    /' | tail -n 10
	fi
}

# Clean: procs uses lib through its header and its code.
t=$(tree clean)
printf '#ifndef X_H\n#define X_H\nint x(void);\n#endif\n' >"$t/user/lib/x.h"
printf '#include "x.h"\nint x(void) { return 1; }\n' >"$t/user/lib/x.c"
printf '#include "lib/x.h"\nint p(void) { return x(); }\n' >"$t/user/procs/p.c"
obj "$t" lib/x.c && obj "$t" procs/p.c
expect clean_tree_passes "$t" 0 ': ok$'

t=$(tree up)
printf 'int q(void);\n' >"$t/user/procs/q.h"
printf '#include "procs/q.h"\nint x(void) { return 1; }\n' >"$t/user/lib/x.c"
expect upward_include_fails "$t" 1 'user/lib/x.c:1: #include "procs/q.h": points up'

# A layer name that climbs out again hides where the header lives.
t=$(tree dotdot)
mkdir -p "$t/user/http"
printf 'int h(void);\n' >"$t/user/http/h.h"
printf '#include "lib/../http/h.h"\n' >"$t/user/procs/p.c"
expect dotdot_include_fails "$t" 1 "user/procs/p.c:1: #include \"lib/../http/h.h\": no '..'"

# Calls: lib/x.c uses procs/p.c's p() without any include.
t=$(tree callup)
printf 'int p(void);\nint x(void) { return p(); }\n' >"$t/user/lib/x.c"
printf 'int p(void) { return 2; }\n' >"$t/user/procs/p.c"
obj "$t" lib/x.c && obj "$t" procs/p.c
expect upward_call_fails "$t" 1 'user/lib/x.c: calls up into user/procs/p.c (p)'

# A circle inside one folder: a.c and b.c call each other.
t=$(tree circle)
printf 'int b(int);\nint a(int n) { return n ? b(n - 1) : 0; }\n' >"$t/user/symbols/a.c"
printf 'int a(int);\nint b(int n) { return n ? a(n - 1) : 1; }\n' >"$t/user/symbols/b.c"
obj "$t" symbols/a.c && obj "$t" symbols/b.c
expect call_circle_fails "$t" 1 'circle: user/symbols/a.c <-> user/symbols/b.c'

# make test: build, then check-layers, then the tests.
order=$(make -C "$ROOT" --no-print-directory -n test 2>/dev/null |
	grep -n -e 'check_layers.py' -e 'tests/run.sh' | cut -d: -f2- | tr '\n' ' ')
if [[ $order == *check_layers.py*tests/run.sh* ]]; then
	pass make_test_runs_check_layers_first
else
	fail make_test_runs_check_layers_first "make -n test: '$order'"
fi
