#!/usr/bin/env bash
# symbols.sh — symbolization in depth (issue 4), end to end: programs
# built here with -O2 -g (tests/symbols/*.c*) are profiled and their
# frames checked. An inlined callee is its own frame with the right
# file:line, and go tool pprof -lines/-list show it; a stripped binary is
# fully named from its debug file (by build-id under --debuginfo-dir, by
# .gnu_debuglink in .debug/ and under /usr/lib/debug/DIR, from MiniDebugInfo, from a local debuginfod
# server); a binary and its debug file that exist only inside another
# mount namespace are named, and so is JIT code (perf map) there and
# here; the vDSO is named; C++ is demangled with the mangled name kept;
# --no-symbol writes addresses only and go tool pprof re-symbolizes them.
# Kernel frames are named as /proc/kallsyms names them, whether the names
# are asked of the kernel (the default) or read from kallsyms.
source "$(dirname "$0")/lib.sh"
CHECKS="inline_frames inline_valid inline_start_line inline_comment jit_valid inline_pprof_lines inline_pprof_list stripped_unnamed_control
 stripped_build_id_dir debuglink_dot_debug debuglink_usr_lib_debug minidebuginfo mntns_binary mntns_debug_file
 jit_named mntns_jit vdso_named cxx_demangled cxx_symtab_demangled no_symbol_raw
 no_symbol_resymbolize debuginfod debug_cache_made debug_cache_reused debug_cache_off
 kernel_named kernel_named_kallsyms"
need_root $CHECKS
SYM=$ROOT/tests/symbols
SYMCHECK="python3 $ROOT/tests/integration/symcheck.py"
CFL="-O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
export HOME=${HOME:-/root} GOCACHE=$TMP/gocache GOFLAGS=
INNER=$(grep -n '/\* INNER \*/' "$SYM/inline.c" | cut -d: -f1)
OUTER=$(grep -n '/\* OUTER \*/' "$SYM/inline.c" | cut -d: -f1)
DECL=$(grep -n '^__attribute__((noinline)) unsigned long hot_outer(' "$SYM/inline.c" | cut -d: -f1)

if ! clang $CFL "$SYM/inline.c" -o "$TMP/inline" ||
	! clang++ $CFL "$SYM/cxx.cc" -o "$TMP/cxx"; then
	for n in $CHECKS; do fail $n "cannot build the test programs"; done
	exit 0
fi
build_id() { readelf -n "$1" | awk '/Build ID/ { print $3 }'; }
BID=$(build_id "$TMP/inline")

# record NAME ARGS... : pmubpf ARGS into $TMP/NAME.pb.gz; false on failure.
record() {
	local name=$1
	shift
	"$PMUBPF" -F 999 -o "$TMP/$name.pb.gz" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" && return 0
	echo "pmubpf failed: $(tail -n1 "$TMP/$name.err")"
	return 1
}

# --- DWARF: inline frames, file:line, pprof views -------------------------
if out=$(record inline -- "$TMP/inline" 2); then
	check inline_frames $SYMCHECK inline "$TMP/inline.pb.gz" \
		"hot_inner:symbols/inline.c:$INNER" "hot_outer:symbols/inline.c:$OUTER"
	check inline_valid valid_profile "$TMP/inline.pb.gz"
	check inline_start_line $SYMCHECK frame "$TMP/inline.pb.gz" hot_outer --file symbols/inline.c --start-line "$DECL"
	check inline_comment $CHECK expect "$TMP/inline.pb.gz" \
		--comment '^symbols: [0-9]+ user locations .*[1-9][0-9]* with source lines, [1-9][0-9]* with inlined frames'
	lines=$(go tool pprof -lines -top "$TMP/inline.pb.gz" 2>&1)
	if grep -q "hot_inner .*inline.c:$INNER (inline)" <<<"$lines" &&
		grep -q "hot_outer .*inline.c:$OUTER" <<<"$lines"; then
		pass inline_pprof_lines
	else
		fail inline_pprof_lines "go tool pprof -lines lacks hot_inner inline.c:$INNER (inline) / hot_outer inline.c:$OUTER"
		head -n 20 <<<"$lines" | sed 's/^/    /'
	fi
	list=$(go tool pprof -list 'hot_outer' "$TMP/inline.pb.gz" 2>&1)
	if grep -q "ROUTINE.*hot_outer in .*symbols/inline.c" <<<"$list" &&
		grep -Eq "[0-9.]+m?s +$OUTER:.*OUTER" <<<"$list"; then
		pass inline_pprof_list
	else
		fail inline_pprof_list "go tool pprof -list hot_outer shows no samples at inline.c:$OUTER"
		head -n 20 <<<"$list" | sed 's/^/    /'
	fi
else
	for n in inline_frames inline_pprof_lines inline_pprof_list; do fail $n "$out"; done
fi

# --- separate debug info ---------------------------------------------------
# stripped: no .symtab, no DWARF; its debug file elsewhere.
objcopy --only-keep-debug "$TMP/inline" "$TMP/inline.debug"
strip --strip-all -o "$TMP/stripped" "$TMP/inline"
objcopy --add-gnu-debuglink="$TMP/inline.debug" "$TMP/stripped"
mkdir -p "$TMP/dbgdir/.build-id/${BID:0:2}"
cp "$TMP/inline.debug" "$TMP/dbgdir/.build-id/${BID:0:2}/${BID:2}.debug"
mkdir -p "$TMP/alone"
cp "$TMP/stripped" "$TMP/alone/stripped" # its debuglink names a file not there

if out=$(record nodbg -- "$TMP/alone/stripped" 1); then
	if $SYMCHECK frame "$TMP/nodbg.pb.gz" static_spin >/dev/null 2>&1; then
		fail stripped_unnamed_control "static_spin named without any debug file: the checks below prove nothing"
	else
		pass stripped_unnamed_control
	fi
else
	fail stripped_unnamed_control "$out"
fi
if out=$(record bid --debuginfo-dir "$TMP/dbgdir" -- "$TMP/alone/stripped" 2); then
	check stripped_build_id_dir $SYMCHECK inline "$TMP/bid.pb.gz" \
		"hot_inner:symbols/inline.c:$INNER" "hot_outer:symbols/inline.c:$OUTER"
	check stripped_build_id_dir_static $SYMCHECK frame "$TMP/bid.pb.gz" static_spin --file symbols/inline.c
else
	fail stripped_build_id_dir "$out"
fi

# .gnu_debuglink: the debug file in .debug/ beside the binary (CRC checked).
mkdir -p "$TMP/linked/.debug"
cp "$TMP/stripped" "$TMP/linked/stripped"
cp "$TMP/inline.debug" "$TMP/linked/.debug/inline.debug"
if out=$(record link -- "$TMP/linked/stripped" 1); then
	check debuglink_dot_debug $SYMCHECK frame "$TMP/link.pb.gz" static_spin --file symbols/inline.c
else
	fail debuglink_dot_debug "$out"
fi

# .gnu_debuglink under /usr/lib/debug/DIR (DIR: the binary's directory),
# in a private mount namespace whose /usr/lib/debug is an empty tmpfs
# (pmubpf runs in it too): nothing beside the binary, no build-id file.
mkdir -p "$TMP/linked2"
cp "$TMP/stripped" "$TMP/linked2/stripped"
cat >"$TMP/libdebug.sh" <<EOF
set -e
[ -d /usr/lib/debug ] || mkdir -p /usr/lib/debug
mount -t tmpfs pmubpf-libdebug /usr/lib/debug
mkdir -p "/usr/lib/debug$TMP/linked2"
cp "$TMP/inline.debug" "/usr/lib/debug$TMP/linked2/inline.debug"
exec "$PMUBPF" -F 999 -o "$TMP/libdebug.pb.gz" -- "$TMP/linked2/stripped" 1
EOF
if unshare -m --propagation private sh "$TMP/libdebug.sh" >/dev/null 2>"$TMP/libdebug.err"; then
	check debuglink_usr_lib_debug $SYMCHECK frame "$TMP/libdebug.pb.gz" static_spin --file symbols/inline.c
else
	fail debuglink_usr_lib_debug "pmubpf (or the namespace set-up) failed: $(tail -n1 "$TMP/libdebug.err")"
fi

# MiniDebugInfo: .gnu_debugdata = xz(an ELF holding only .symtab).
objcopy --strip-debug "$TMP/inline.debug" "$TMP/mini.elf" &&
	xz -c "$TMP/mini.elf" >"$TMP/mini.xz" &&
	objcopy --add-section .gnu_debugdata="$TMP/mini.xz" "$TMP/alone/stripped" "$TMP/minidebug"
if out=$(record mini -- "$TMP/minidebug" 1); then
	check minidebuginfo $SYMCHECK frame "$TMP/mini.pb.gz" static_spin --mapping minidebug
else
	fail minidebuginfo "$out"
fi

# --- mount namespaces: binary, debug file and perf map only in there ------
NSDIR=$(mktemp -d /run/pmubpf-symtest.XXXXXX 2>/dev/null || mktemp -d /var/tmp/pmubpf-symtest.XXXXXX)
cp "$TMP/stripped" "$TMP/inline.debug" "$B/jit" "$NSDIR/"
mkdir -p "$NSDIR/ns"
cat >"$NSDIR/inside.sh" <<EOF
set -e
mount -t tmpfs pmubpf-ns "$NSDIR/ns"
cp "$NSDIR/stripped" "$NSDIR/ns/nsbin"
mkdir -p /usr/lib/debug
mount -t tmpfs pmubpf-dbg /usr/lib/debug
mkdir -p /usr/lib/debug/.build-id/${BID:0:2}
cp "$NSDIR/inline.debug" /usr/lib/debug/.build-id/${BID:0:2}/${BID:2}.debug
cp "$NSDIR/jit" "$NSDIR/ns/nsjit"
mount -t tmpfs pmubpf-tmp /tmp
"$NSDIR/ns/nsbin" 1.5
"$NSDIR/ns/nsjit" 1 ns_jitted_fn >/dev/null
EOF
if out=$(record mntns -- unshare -m --propagation private sh "$NSDIR/inside.sh"); then
	check mntns_binary $SYMCHECK frame "$TMP/mntns.pb.gz" hot_outer --mapping /ns/nsbin
	check mntns_debug_file $SYMCHECK frame "$TMP/mntns.pb.gz" static_spin --file symbols/inline.c --mapping /ns/nsbin
	check mntns_jit $SYMCHECK frame "$TMP/mntns.pb.gz" ns_jitted_fn --min-samples 20
else
	for n in mntns_binary mntns_debug_file mntns_jit; do fail $n "$out"; done
fi
rm -rf "$NSDIR"

# --- JIT, vDSO, C++ -----------------------------------------------------------
if out=$(record jit -- "$B/jit" 1); then
	check jit_named $SYMCHECK frame "$TMP/jit.pb.gz" jitted_hot_loop --min-samples 100
	check jit_valid valid_profile "$TMP/jit.pb.gz"
else
	fail jit_named "$out"
fi
if out=$(record vdso -- "$TMP/inline" 1 vdso); then
	if $SYMCHECK frame "$TMP/vdso.pb.gz" __vdso_clock_gettime --mapping '[vdso]' >/dev/null 2>&1 ||
		$SYMCHECK frame "$TMP/vdso.pb.gz" clock_gettime --mapping '[vdso]' >/dev/null 2>&1; then
		pass vdso_named
	else
		fail vdso_named "$($SYMCHECK frame "$TMP/vdso.pb.gz" __vdso_clock_gettime --mapping '[vdso]' 2>&1 | tail -n1)"
	fi
else
	fail vdso_named "$out"
fi
CXXNAME='pmutst::Spinner::spin(unsigned long)'
CXXMANGLED=_ZN6pmutst7Spinner4spinEm
if out=$(record cxx -- "$TMP/cxx" 1); then
	check cxx_demangled $SYMCHECK frame "$TMP/cxx.pb.gz" "$CXXNAME" --system $CXXMANGLED --file symbols/cxx.cc
else
	fail cxx_demangled "$out"
fi
strip --strip-debug -o "$TMP/cxx_nodwarf" "$TMP/cxx"
if out=$(record cxxsym -- "$TMP/cxx_nodwarf" 1); then
	check cxx_symtab_demangled $SYMCHECK frame "$TMP/cxxsym.pb.gz" "$CXXNAME" --system $CXXMANGLED
else
	fail cxx_symtab_demangled "$out"
fi

# --- --no-symbol, then go tool pprof symbolizes from the binary -----------
if out=$(record nosym --no-symbol -- "$TMP/inline" 1); then
	check no_symbol_raw $SYMCHECK nosym "$TMP/nosym.pb.gz" --build-id "$TMP/inline=$BID"
	top=$(go tool pprof -symbolize=local -top "$TMP/nosym.pb.gz" 2>&1)
	if grep -q ' hot_outer$' <<<"$top" && grep -q ' static_spin$' <<<"$top"; then
		pass no_symbol_resymbolize
	else
		fail no_symbol_resymbolize "go tool pprof -symbolize=local names neither hot_outer nor static_spin"
		head -n 20 <<<"$top" | sed 's/^/    /'
	fi
else
	fail no_symbol_raw "$out"
	fail no_symbol_resymbolize "$out"
fi

# --- debuginfod: a real server on 127.0.0.1, in a private network --------
# namespace (only a loopback there), serving the debug file.
if ! command -v debuginfod >/dev/null || ! command -v debuginfod-find >/dev/null; then
	fail debuginfod "debuginfod or debuginfod-find not installed (tools/deps.sh installs them)"
else
	mkdir -p "$TMP/dserve" "$TMP/dcache"
	cp "$TMP/inline.debug" "$TMP/dserve/"
	cat >"$TMP/dtest.sh" <<EOF
ip link set lo up || exit 3
debuginfod -F -p 18002 -d "$TMP/dserve.sqlite" -t 0 -g 0 -c 1 "$TMP/dserve" >"$TMP/debuginfod.log" 2>&1 &
srv=\$!
trap 'kill \$srv 2>/dev/null; wait \$srv 2>/dev/null' EXIT
export DEBUGINFOD_URLS=http://127.0.0.1:18002 DEBUGINFOD_TIMEOUT=5
# A miss is cached (negatively) by the client: a fresh cache per probe.
ok=
for i in \$(seq 1 100); do
	DEBUGINFOD_CACHE_PATH="$TMP/dcache/probe\$i" debuginfod-find debuginfo $BID >/dev/null 2>&1 && ok=1 && break
	kill -0 \$srv 2>/dev/null || exit 4
	sleep 0.2
done
[ -n "\$ok" ] || exit 5
export DEBUGINFOD_CACHE_PATH="$TMP/dcache/pmubpf"
"$PMUBPF" -F 999 -o "$TMP/dinfod.pb.gz" -- "$TMP/alone/stripped" 1 >/dev/null 2>"$TMP/dinfod.err" || exit 6
EOF
	timeout 60 unshare -n bash "$TMP/dtest.sh"
	case $? in
	0) check debuginfod $SYMCHECK frame "$TMP/dinfod.pb.gz" static_spin --file symbols/inline.c ;;
	3) skip debuginfod "cannot bring up loopback in a network namespace" ;;
	4 | 5) fail debuginfod "local debuginfod server did not start or serve: $(tail -n1 "$TMP/debuginfod.log")" ;;
	124) fail debuginfod "timed out after 60 s" ;;
	*) fail debuginfod "pmubpf failed: $(tail -n1 "$TMP/dinfod.err" 2>/dev/null)" ;;
	esac
fi

# --- compressed debug sections: an uncompressed copy, kept by build-id ---
# The program with ~3000 unused functions beside it (its DWARF compressed:
# over the cache's 64 KiB minimum), stripped, its debug file compressed
# as distributions ship them. The first recording writes the copy, the
# second reads it; both name the inlined frames with their lines.
python3 - "$TMP/filler.c" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(3000):
        f.write(f"struct s{i} {{ int a; long b; char c[{i % 7 + 1}]; double d{i}; }};\n")
        f.write(f"int f{i}(struct s{i} *p, int x) {{ int y = x * {i}; "
                f"for (int k = 0; k < x; k++) y += p->a ^ k; return y + (int)p->b + p->c[0]; }}\n")
PY
BIG=$TMP/big
if clang $CFL -c "$SYM/inline.c" -o "$TMP/inline.o" && clang -O0 -g -c "$TMP/filler.c" -o "$TMP/filler.o" &&
	clang "$TMP/inline.o" "$TMP/filler.o" -o "$BIG" &&
	objcopy --only-keep-debug --compress-debug-sections=zlib "$BIG" "$BIG.debug" &&
	strip --strip-all -o "$BIG.stripped" "$BIG"; then
	BBID=$(build_id "$BIG")
	mkdir -p "$TMP/zdbg/.build-id/${BBID:0:2}"
	cp "$BIG.debug" "$TMP/zdbg/.build-id/${BBID:0:2}/${BBID:2}.debug"
	copies() { grep -o 'uncompressed copies: .*' "$TMP/$1.err"; }
	# The copies go to a cache directory of this test's own, empty before
	# the first run: never /var/cache/pmubpf/debug, which `make run` and
	# every other recording fill. Which objects a run asks for depends on
	# which drew samples: the program and libc always, ld.so only if its
	# few milliseconds of loading took one (2-4 samples on the PVM
	# machine, now and then none on a faster one: its second run then
	# made ld.so's copy, "2 reused, 1 made"). So the counts are checked
	# against the cache's files, not as constants.
	UC=$TMP/ucache
	cache_files() { # "INODE NAME" of each copy, by name
		find "$UC" -maxdepth 1 -name '*.debug' -printf '%i %f\n' 2>/dev/null | sort -k2
	}
	# cache_run CHECK RUN CACHE: record the stripped program with -v and
	# PMUBPF_DEBUG_CACHE=CACHE; sets COPIES to -v's copies line. False
	# (the reason said) if it failed or its inlined frames are not named
	# with their lines.
	cache_run() {
		local name=$1 run=$2 cache=$3 out
		COPIES=
		if ! out=$(PMUBPF_DEBUG_CACHE=$cache record "$run" -v --debuginfo-dir "$TMP/zdbg" -- "$BIG.stripped" 1.5); then
			fail "$name" "$out"
			return 1
		fi
		COPIES=$(copies "$run")
		if ! out=$($SYMCHECK inline "$TMP/$run.pb.gz" "hot_inner:symbols/inline.c:$INNER" \
			"hot_outer:symbols/inline.c:$OUTER" 2>&1); then
			fail "$name" "$(tail -n 1 <<<"$out")"
			return 1
		fi
	}
	# copies_match BEFORE AFTER: -v's copies line ($COPIES) against the
	# cache's files before and after the run: each copy made is a file
	# that was not there (none remade in place), the program's copy is
	# there and uncompressed, nothing failed; with BEFORE empty (a new
	# cache) nothing was reused, else at least the program's copy was,
	# the same file as before (its inode).
	copies_match() {
		python3 - "$COPIES" "$1" "$2" "$BBID.debug" "$UC/$BBID.debug" <<'PY2'
import re, subprocess, sys
line, before, after, prog, path = sys.argv[1:]
m = re.fullmatch(r"uncompressed copies: (\d+) reused, (\d+) made, (\d+) failed, \d+ evicted", line)
if not m:
    sys.exit(f"-v says: {line or 'no copies line'}")
reused, made, failed = map(int, m.groups())
old = dict(reversed(l.split()) for l in before.splitlines())
new = dict(reversed(l.split()) for l in after.splitlines())
fresh = sorted(set(new) - set(old))
print(f"-v: {reused} reused, {made} made, {failed} failed; cache {len(old)} -> {len(new)} copies, new: {' '.join(fresh) or 'none'}")
if failed:
    sys.exit(f"{failed} copies failed")
if prog not in new:
    sys.exit(f"no copy {prog} of the program's debug file")
secs = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
if re.search(r" \.debug_info .* C ", secs):
    sys.exit(f"{path}: .debug_info still compressed")
if made != len(fresh):
    sys.exit(f"{made} copies made, but {len(fresh)} new files in the cache (a copy remade, or one not kept)")
if not old:
    if reused:
        sys.exit(f"{reused} reused from an empty cache")
elif not reused or prog in fresh or new[prog] != old[prog]:
    sys.exit(f"the program's copy was not reused ({reused} reused; its inode {old.get(prog)} -> {new[prog]})")
PY2
	}
	if cache_run debug_cache_made dcache1 "$UC"; then
		check debug_cache_made copies_match "" "$(cache_files)"
	fi
	made=$(cache_files)
	if [[ -z $made ]]; then
		fail debug_cache_reused "the first run left no copy to reuse"
	elif cache_run debug_cache_reused dcache2 "$UC"; then
		check debug_cache_reused copies_match "$made" "$(cache_files)"
	fi
	if cache_run debug_cache_off dcache0 0; then
		if grep -q '^uncompressed copies: off$' <<<"$COPIES"; then pass debug_cache_off
		else fail debug_cache_off "-v says: $COPIES"; fi
	fi
else
	for n in debug_cache_made debug_cache_reused debug_cache_off; do fail $n "cannot build the large program"; done
fi

# --- kernel frames: asked of the kernel, or from /proc/kallsyms ----------
# Process churn (fork, exec, exit: thousands of kernel addresses, many
# batches of the kernel's naming) beside a whole-machine recording: every
# kernel location named as kallsyms names it (the names are asked of the
# kernel only for the addresses the profile holds: bpf/ksymnames.bpf.c),
# and -v says which source was used.
kernel_named() { # NAME SOURCE [ENV...]
	local name=$1 src=$2
	shift 2
	"$ROOT/${PMUBPF_BUILD:-build}/bench/churn_work" 3 2 "$TMP/$name.churn" & local w=$!
	if env "$@" "$PMUBPF" -v -a -F 4999 -d 1.5 -o "$TMP/$name.pb.gz" >/dev/null 2>"$TMP/$name.err"; then
		if ! grep -q "kernel symbols $src" "$TMP/$name.err"; then
			fail "$name" "pmubpf -v does not say 'kernel symbols $src': $(grep -m1 'kernel symbols' "$TMP/$name.err")"
		else
			check "$name" $SYMCHECK kernel "$TMP/$name.pb.gz" --min 600
		fi
	else
		fail "$name" "pmubpf failed: $(tail -n1 "$TMP/$name.err")"
	fi
	wait $w
}
kernel_named kernel_named "asked of the kernel"
kernel_named kernel_named_kallsyms "from /proc/kallsyms" PMUBPF_KALLSYMS=1
