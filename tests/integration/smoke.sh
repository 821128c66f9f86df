#!/usr/bin/env bash
# smoke.sh — the paths of a recording that depend on the kernel, each
# once and quickly: what tests/integration/kernels.sh runs on every
# kernel of the matrix under qemu (and `make test` here, on this one).
# Each check records something real and asserts on its profile; where
# the kernel lacks a feature (`pmubpf features`), the check asserts the
# one-line refusal instead, so a kernel that lacks it still passes and a
# kernel that has it must record.
#   features: `pmubpf features` lists every feature, yes or no
#   command: `-- demo`: its functions named, with main above them
#   labels: `-- labels_work`: samples labelled through the TLS slot
#   pid: `-p PID` of a running demo: only its samples
#   dwarf: a program without frame pointers, unwound in BPF from its
#     .eh_frame: the comparator's samples reach main
#   first_samples: its first samples too, before its maps are read: BPF
#     finds each frame's file in the kernel's VMA tree (maple or
#     red-black) and unwinds it by that file's table
#   every: `-a --every 1`: a profile per window
#   kernel: `-a` beside a system-call loop: kernel frames named
#   events: two sampled events (attach cookies) or the refusal
#   offcpu: `-e off-cpu` (syscall programs) or the refusal
source "$(dirname "$0")/lib.sh"
need_root features command labels pid dwarf first_samples every kernel events offcpu

feat=$("$PMUBPF" features 2>&1)
has() { grep -q "^$1	yes	" <<<"$feat"; }
t_features() {
	local rows
	rows=$(grep -cE '^[a-z_-]+	(yes|no)	.+' <<<"$feat")
	[[ $rows -ge 6 ]] || { echo "$rows feature rows, want 6: $(tail -n 1 <<<"$feat")"; return 1; }
}
check features t_features

# rec NAME ARGS...: pmubpf -o TMP/NAME.pb.gz ARGS, its stderr kept.
rec() {
	local name=$1
	shift
	"$PMUBPF" -F 499 -o "$TMP/$name.pb.gz" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" ||
		{ echo "pmubpf exited $?: $(tail -n 1 "$TMP/$name.err")"; return 1; }
}

t_command() {
	rec command -- "$B/demo" 1.5 || return 1
	valid_profile "$TMP/command.pb.gz" || return 1
	$CHECK expect "$TMP/command.pb.gz" --min-samples 50 --func render_page --func hash_payload --func main
}
check command t_command

t_labels() {
	rec labels -- "$B/labels_work" 1.5 || return 1
	$CHECK expect "$TMP/labels.pb.gz" --min-samples 50 --tag phase=b --tag req=1
}
check labels t_labels

t_pid() {
	local wl rc
	# Runs until the recording is over, however long pmubpf takes to
	# start (a first exec over 9p under qemu takes seconds).
	"$B/demo" 600 >/dev/null &
	wl=$!
	rec pid -p "$wl" -d 1.5
	rc=$?
	kill "$wl" 2>/dev/null
	wait "$wl" 2>/dev/null
	[[ $rc -eq 0 ]] || return 1
	$CHECK expect "$TMP/pid.pb.gz" --min-samples 50 --only-pid "$wl" --func render_page
}
check pid t_pid

t_dwarf() {
	if [[ $(uname -m) != x86_64 ]]; then
		echo "--call-graph dwarf is implemented on x86-64 only"
		return 0
	fi
	rec dwarf -F 999 --call-graph dwarf -- "$B/nofp_qsort" 2 || return 1
	# The samples taken before the process's tables were loaded are
	# walked by frame pointer (the profile's comment counts them) and
	# miss main: those are left out, the rest must reach main (95%).
	python3 - "$ROOT" "$TMP/dwarf.pb.gz" <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
prof = check.load(sys.argv[2])
fp = sum(int(m.group(1)) for c in prof["comments"]
         for m in [re.match(r"dwarf: (\d+) user stacks walked by frame pointer instead", c)] if m)
hot = [s for s in prof["samples"] if check.leaf(s) == "hot_compare"]
n = sum(s["values"][0] for s in hot)
reach = sum(s["values"][0] for s in hot if "main" in check.funcs(s))
if n < 100 or reach < 0.95 * (n - fp):
    sys.exit("main above hot_compare in %d of %d samples (%d walked by frame pointer before the tables)"
             % (reach, n, fp))
PY
}
check dwarf t_dwarf

# A process's first samples, before its slot: unwound by its files'
# tables, which `--` builds before the exec (the binary, libc, ld.so).
# Every sample of spin reaches main, and some went by file.
t_first_samples() {
	if [[ $(uname -m) != x86_64 ]]; then
		echo "--call-graph dwarf is implemented on x86-64 only"
		return 0
	fi
	has file-tables || { echo "file-tables: no"; return 0; }
	rec first_samples -F 999 --call-graph dwarf -- "$B/nofp_first" spin 400 || return 1
	$CHECK expect "$TMP/first_samples.pb.gz" \
		--comment '^dwarf: [1-9][0-9]* user stacks unwound by the tables of the files mapped' || return 1
	$CHECK ancestors "$TMP/first_samples.pb.gz" --leaf spin --ancestor main --min-fraction 1.0 --min-samples 20
}
check first_samples t_first_samples

t_every() {
	local n wl rc pm i
	"$B/demo" 600 >/dev/null &
	wl=$!
	mkdir -p "$TMP/every"
	# Until two windows are written (a window closes after the one
	# before it is written; a first write under qemu beside a loaded
	# host takes seconds), then a clean end: bounded by windows, not time.
	"$PMUBPF" -a --every 1 -o "$TMP/every/" 2>"$TMP/every.err" >/dev/null &
	pm=$!
	for ((i = 0; i < 1200; i++)); do
		n=$(find "$TMP/every" -name '*.pb.gz' | wc -l)
		[[ $n -ge 2 ]] && break
		kill -0 $pm 2>/dev/null || break
		sleep 0.1
	done
	kill -INT $pm 2>/dev/null
	wait $pm
	rc=$?
	kill "$wl" 2>/dev/null
	wait "$wl" 2>/dev/null
	[[ $rc -eq 0 ]] || { echo "pmubpf exited $rc: $(tail -n 1 "$TMP/every.err")"; return 1; }
	n=$(find "$TMP/every" -name '*.pb.gz' | wc -l)
	[[ $n -ge 2 ]] || { echo "$n window profiles, want 2 or more: $(tail -n 1 "$TMP/every.err")"; return 1; }
	grep -q "samples taken in all windows ($n windows)" "$TMP/every.err" ||
		{ echo "$n files, but: $(grep 'in all windows' "$TMP/every.err")"; return 1; }
}
check every t_every

t_kernel() {
	local wl rc
	"$B/demo" 600 >/dev/null &
	wl=$!
	rec kernel -a -d 1.5
	rc=$?
	kill "$wl" 2>/dev/null
	wait "$wl" 2>/dev/null
	[[ $rc -eq 0 ]] || return 1
	$CHECK expect "$TMP/kernel.pb.gz" --min-samples 50 --kernel-frames 1 --func render_page
}
check kernel t_kernel

t_events() {
	if has bpf_get_attach_cookie; then
		"$PMUBPF" -F 499 -e cpu-clock,task-clock -o "$TMP/ev.pb.gz" -- "$B/demo" 1 >/dev/null 2>"$TMP/ev.err" ||
			{ echo "pmubpf exited $?: $(tail -n 1 "$TMP/ev.err")"; return 1; }
		for e in cpu-clock task-clock; do
			[[ -s $TMP/ev.$e.pb.gz ]] || { echo "no $e profile: $(tail -n 1 "$TMP/ev.err")"; return 1; }
			$CHECK expect "$TMP/ev.$e.pb.gz" --min-samples 20 --func hash_payload || return 1
		done
	else
		refused events 'need BPF cookies (bpf_get_attach_cookie, Linux 5.15), which this kernel lacks' \
			-e cpu-clock,task-clock -- "$B/demo" 1
	fi
}

# refused NAME PATTERN ARGS...: pmubpf ARGS fails with one line matching
# PATTERN, and writes no profile.
refused() {
	local name=$1 pat=$2 rc
	shift 2
	"$PMUBPF" -o "$TMP/$name.pb.gz" "$@" >/dev/null 2>"$TMP/$name.err"
	rc=$?
	[[ $rc -ne 0 ]] || { echo "pmubpf exited 0, want a refusal"; return 1; }
	[[ $(wc -l <"$TMP/$name.err") -eq 1 ]] && grep -q -- "$pat" "$TMP/$name.err" ||
		{ echo "want one line with '$pat': $(head -c 300 "$TMP/$name.err")"; return 1; }
	[[ ! -e $TMP/$name.pb.gz ]] || { echo "a profile was written"; return 1; }
}
check events t_events

t_offcpu() {
	if has off-cpu; then
		rec offcpu -e off-cpu -- "$B/offcpu_work" "$TMP/offcpu.truth" 1 || return 1
		$CHECK expect "$TMP/offcpu.pb.gz" --min-samples 1 --sample-type off-cpu/nanoseconds --kernel-frames 1
	else
		refused offcpu '-e off-cpu needs BPF syscall programs' -e off-cpu -- "$B/offcpu_work" "$TMP/offcpu.truth" 1
	fi
}
check offcpu t_offcpu
