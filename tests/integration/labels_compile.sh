#!/usr/bin/env bash
# labels_compile.sh — compile/link checks of include/pmubpf/labels.h.
# Builds the small programs in tests/labels_compile/ as C99/C11 (gcc and
# clang, -pedantic), C++11/C++17 (g++ and clang++), C mixed with C++, with
# LTO, with the header in a shared library (linked, and dlopen()ed), and
# checks where the record's symbol lands (.symtab of a plain build, .dynsym
# with the export flags). Each program checks at run time that every
# translation unit / object shares one TLS word, record and id counter.
# Prints one line per variant: PASS labels_compile.<v> | FAIL ...: reason |
# SKIP ...: reason. Exits 1 if anything failed.
set -u
cd "$(dirname "$0")/../.."
src=tests/labels_compile
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
W=(-Wall -Wextra -Werror -Iinclude -I"$src")
failed=0

pass() { echo "PASS labels_compile.$1"; }
fail() { echo "FAIL labels_compile.$1: $2"; failed=1; }
skip() { echo "SKIP labels_compile.$1: $2"; }
have() { command -v "$1" >/dev/null 2>&1; }

# run NAME CMD...: a build step; on failure prints FAIL with its first error.
build() {
	local name=$1; shift
	local log="$tmp/$name.log"
	if ! "$@" >"$log" 2>&1; then
		fail "$name" "build: $(grep -m1 -E 'error|warning|undefined' "$log" || head -n1 "$log")"
		return 1
	fi
}
# exec NAME PROG ARGS...: runs a check program, PASS if it exits 0.
check_run() {
	local name=$1; shift
	local out
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "run: ${out:-exit $?}"
	fi
}

# variant NAME CC CFLAGS... -- : main.c + tu2.c, both compiled by CC.
c_variant() {
	local name=$1 cc=$2; shift 2
	have "$cc" || { fail "$name" "$cc not installed (tools/deps.sh installs it)"; return; }
	build "$name" "$cc" "${W[@]}" "$@" "$src/main.c" "$src/tu2.c" -o "$tmp/$name" &&
		check_run "$name" "$tmp/$name"
}
c_variant c99_gcc gcc -std=c99 -pedantic -O2
c_variant c11_gcc gcc -std=c11 -pedantic -O2
c_variant gnu11_gcc_O0 gcc -std=gnu11 -O0
c_variant c99_clang clang -std=c99 -pedantic -O2
c_variant c11_clang clang -std=c11 -pedantic -O2
c_variant lto_gcc gcc -std=gnu11 -O2 -flto
c_variant pie_hidden_gcc gcc -std=c11 -O2 -fPIE -pie -fvisibility=hidden

# C++: main.cc + tu2.c compiled as C++.
cxx_variant() {
	local name=$1 cxx=$2; shift 2
	have "$cxx" || { fail "$name" "$cxx not installed (tools/deps.sh installs it)"; return; }
	build "$name" "$cxx" "${W[@]}" "$@" "$src/main.cc" -x c++ "$src/tu2.c" -o "$tmp/$name" &&
		check_run "$name" "$tmp/$name"
}
cxx_variant cxx11_gxx g++ -std=c++11 -pedantic -O2
cxx_variant cxx17_gxx g++ -std=c++17 -pedantic -O2
cxx_variant cxx11_clangxx clang++ -std=c++11 -pedantic -O2
cxx_variant cxx17_clangxx clang++ -std=c++17 -pedantic -O2

# C and C++ in one program: tu2.c as C, main.cc as C++.
if have g++; then
	build mixed_c_cxx gcc "${W[@]}" -std=c11 -pedantic -O2 -c "$src/tu2.c" -o "$tmp/tu2_c.o" &&
	build mixed_c_cxx g++ "${W[@]}" -std=c++11 -pedantic -O2 "$src/main.cc" "$tmp/tu2_c.o" -o "$tmp/mixed" &&
		check_run mixed_c_cxx "$tmp/mixed"
else
	fail mixed_c_cxx "g++ not installed (tools/deps.sh installs it)"
fi

# Shared library linked at build time: no special flags for the program.
build shared_linked gcc "${W[@]}" -std=gnu11 -O2 -fPIC -fvisibility=hidden -shared \
	"$src/tu2.c" -o "$tmp/libtu2.so" &&
build shared_linked gcc "${W[@]}" -std=gnu11 -O2 "$src/main.c" -L"$tmp" -ltu2 \
	-Wl,-rpath,"$tmp" -o "$tmp/linked" &&
	check_run shared_linked "$tmp/linked"

# Shared library dlopen()ed by a program linked with -rdynamic, then with
# only pmubpf_* exported (--export-dynamic-symbol, binutils 2.35+).
if [[ -f $tmp/libtu2.so ]]; then
	build shared_dlopen gcc "${W[@]}" -std=gnu11 -O2 -rdynamic "$src/main_dl.c" -ldl \
		-o "$tmp/dl" && check_run shared_dlopen "$tmp/dl" "$tmp/libtu2.so"
	build shared_dlopen_export gcc "${W[@]}" -std=gnu11 -O2 \
		'-Wl,--export-dynamic-symbol=pmubpf_*' "$src/main_dl.c" \
		-ldl -o "$tmp/dlx" && check_run shared_dlopen_export "$tmp/dlx" "$tmp/libtu2.so"
else
	fail shared_dlopen "libtu2.so not built (see shared_linked)"
	fail shared_dlopen_export "libtu2.so not built (see shared_linked)"
fi

# Where the record's symbol is: .symtab of a plain `gcc prog.c` build (what
# pmubpf reads for a non-stripped executable), .dynsym with the export flag.
sym_line() { # file, --syms|--dyn-syms: the record's line(s), one per definition
	readelf -W "$2" "$1" 2>/dev/null | awk '$8 == "pmubpf_labels_record" && $7 != "UND"'
}
if have readelf; then
	if build symtab_plain gcc -Iinclude -I"$src" "$src/main.c" "$src/tu2.c" -o "$tmp/plain"; then
		l=$(sym_line "$tmp/plain" --syms)
		if [[ $(grep -c . <<<"$l") -eq 1 && $l == *" 64 OBJECT  WEAK   DEFAULT "* ]]; then
			pass symtab_plain
		else
			fail symtab_plain "want one 64-byte WEAK OBJECT in .symtab, got: ${l:-none}"
		fi
	fi
	if build dynsym_export gcc -Iinclude -I"$src" \
		'-Wl,--export-dynamic-symbol=pmubpf_*' "$src/main.c" "$src/tu2.c" -o "$tmp/exp"; then
		l=$(sym_line "$tmp/exp" --dyn-syms)
		if [[ -n $l ]]; then pass dynsym_export; else fail dynsym_export "not in .dynsym"; fi
	fi
	if [[ -f $tmp/libtu2.so ]]; then
		l=$(sym_line "$tmp/libtu2.so" --dyn-syms)
		if [[ -n $l ]]; then pass dynsym_shared_lib
		else fail dynsym_shared_lib "not in the library's .dynsym"; fi
	fi
else
	fail symtab_plain "readelf not installed (binutils; tools/deps.sh installs it)"
fi

exit $failed
