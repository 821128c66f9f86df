#!/usr/bin/env bash
# report.sh — what pprof readers show of pmubpf's profiles (issue 14):
# the first mapping (go tool pprof's "File:", the web UI's title) is the
# profiled program's executable, not whichever library or the kernel came
# first; frames no symbol names keep a name (FILE+0xOFFSET) so viewers
# that drop nameless frames (speedscope) keep them; --top prints pprof's
# units. The -a rule (most samples) is checked by tests/unit/test_report.c:
# on this shared machine another process may well have the most. Under
# process churn a library every process maps is one mapping, and the
# same code in all of them one location (shared_layout).
source "$(dirname "$0")/lib.sh"
CHECKS="file_is_command file_is_pid unnamed_named unnamed_offsets unnamed_pprof top_units
 shared_layout shared_layout_pprof"
need_root $CHECKS
export HOME=${HOME:-/root} GOCACHE=$TMP/gocache GOFLAGS=

# File: NAME as go tool pprof -top says it.
pprof_file() {
	go tool pprof -top "$1" 2>/dev/null | awk '/^File: / { print $2; exit }'
}

# A syscall loop, most samples in the kernel, started by a shell that
# execs it: without a rule, the first mapping met (the shell's, libc,
# [kernel.kallsyms]) would be the title.
if "$PMUBPF" -F 999 -o "$TMP/cmd.pb.gz" -- sh -c "exec '$B/nofp_syscall' 1" >/dev/null 2>"$TMP/cmd.err"; then
	f=$(pprof_file "$TMP/cmd.pb.gz")
	if [[ $f == nofp_syscall ]]; then pass file_is_command
	else fail file_is_command "File: '$f', want nofp_syscall"; fi
else
	fail file_is_command "pmubpf failed: $(tail -n1 "$TMP/cmd.err")"
fi

"$B/nofp_syscall" 4 >/dev/null &
wpid=$!
sleep 0.3
if "$PMUBPF" -F 999 -d 1 -p $wpid -o "$TMP/pid.pb.gz" 2>"$TMP/pid.err"; then
	f=$(pprof_file "$TMP/pid.pb.gz")
	if [[ $f == nofp_syscall ]]; then pass file_is_pid
	else fail file_is_pid "File: '$f', want nofp_syscall"; fi
else
	fail file_is_pid "pmubpf failed: $(tail -n1 "$TMP/pid.err")"
fi
kill $wpid 2>/dev/null
wait $wpid 2>/dev/null

# A stripped copy of a workload: its own functions have no symbol left
# (an executable exports none), so they are named "spin+0xOFFSET".
if strip -o "$TMP/spin" "$B/nofp_qsort" &&
	"$PMUBPF" -F 999 -o "$TMP/strip.pb.gz" -- "$TMP/spin" 1 >/dev/null 2>"$TMP/strip.err"; then
	"$DUMP" "$TMP/strip.pb.gz" >"$TMP/strip.json"
	# Every location of a mapped file has a name; the stripped one's are
	# spin+0xOFFSET with OFFSET its address's offset in the file.
	if out=$(python3 - "$TMP/strip.json" <<'EOF'
import json, re, sys
prof = json.load(open(sys.argv[1]))
maps = {m["id"]: m for m in prof["mappings"]}
named = bad = 0
for s in prof["samples"]:
    for loc in s["stack"]:
        m = maps.get(loc["mapping"])
        if not loc["frames"]:
            bad += 1
            print("nameless location at %#x in %s" % (loc["addr"], m and m["file"]))
            continue
        r = re.fullmatch(r"spin\+0x([0-9a-f]+)", loc["frames"][0]["func"])
        if r:
            want = loc["addr"] - m["start"] + m["offset"]
            if int(r.group(1), 16) != want or not m["file"].endswith("/spin"):
                bad += 1
                print("%s: want offset %#x in %s" % (loc["frames"][0]["func"], want, m["file"]))
            named += 1
if not named:
    print("no spin+0x... frame")
sys.exit(1 if bad or not named else 0)
EOF
	); then
		pass unnamed_named
		pass unnamed_offsets
	else
		fail unnamed_named "$(head -n1 <<<"$out")"
		fail unnamed_offsets "$(tail -n1 <<<"$out")"
	fi
	if go tool pprof -top "$TMP/strip.pb.gz" 2>/dev/null | grep -Eq ' spin\+0x[0-9a-f]+$'; then
		pass unnamed_pprof
	else
		fail unnamed_pprof "go tool pprof -top shows no spin+0x... function"
	fi
else
	for n in unnamed_named unnamed_offsets unnamed_pprof; do
		fail $n "strip or pmubpf failed: $(tail -n1 "$TMP/strip.err" 2>/dev/null)"
	done
fi

# --top: values as pprof writes them (7.93s, 12ms, 350us), not raw ns.
if "$PMUBPF" -F 999 --top 5 -o "$TMP/top.pb.gz" -- "$B/nofp_qsort" 1 >"$TMP/top.out" 2>"$TMP/top.err"; then
	rows=$(grep -Ec '^ *[0-9.]+(ns|us|ms|s|hrs) +[0-9.]+% +[0-9.]+(ns|us|ms|s|hrs) +[0-9.]+%  ' "$TMP/top.out")
	if grep -Eq '^Top 5 functions for cpu-clock \(cpu; 100% = [0-9.]+(ms|s)\):$' "$TMP/top.out" &&
		[[ $rows -ge 1 ]] && grep -q ' hot_compare$' "$TMP/top.out"; then
		pass top_units
	else
		fail top_units "unexpected --top output: $(head -c 300 "$TMP/top.out" | tr '\n' '|')"
	fi
else
	fail top_units "pmubpf failed: $(tail -n1 "$TMP/top.err")"
fi

# --- one layout per file across processes -------------------------------
# Short-lived processes (churn_work: /bin/true and env, each its own ASLR'd
# ld.so and libc) beside a whole-machine recording: each library is one
# mapping per part of the file mapped, whatever the process (its start and
# offset the file offset), every location inside its mapping, and no two
# locations at the same offset of the same file (the same code in many
# processes is one location); go tool pprof reads it without a warning.
"$ROOT/${PMUBPF_BUILD:-build}/bench/churn_work" 3 2 "$TMP/churn.progress" & w=$!
if "$PMUBPF" -a -F 999 -d 1.5 -o "$TMP/layout.pb.gz" 2>"$TMP/layout.err"; then
	check shared_layout python3 "$ROOT/tests/integration/symcheck.py" layout "$TMP/layout.pb.gz" --lib /libc.so --min 100
	check shared_layout_pprof valid_profile "$TMP/layout.pb.gz"
else
	fail shared_layout "pmubpf failed: $(tail -n1 "$TMP/layout.err")"
	fail shared_layout_pprof "pmubpf failed"
fi
wait $w
