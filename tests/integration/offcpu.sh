#!/usr/bin/env bash
# offcpu.sh — -e off-cpu: each wait of a target thread weighs its
# nanoseconds, exactly (no sampling): offcpu_work sleeps, blocks on a pipe
# and on a futex for known times, measuring each wait itself, and each of
# its three functions must carry its measured wait within 2%. Also beside
# cpu-clock, with -p (a wait begun before the recording is counted in the
# comments, not made up), over --every windows (a wait spanning a window
# is split between them, the sum exact), and the event's errors.
source "$(dirname "$0")/lib.sh"
need_root command_exact sample_type labels with_cpu_clock no_dispatch_frames pid_exact pid_unseen_noted every_windows_exact errors
need_feature off-cpu command_exact sample_type labels with_cpu_clock no_dispatch_frames pid_exact pid_unseen_noted \
	every_windows_exact errors

W=$B/offcpu_work
FUNCS=--names=offcpu_sleep,offcpu_pipe,offcpu_futex

# -- command: the three waits, twice each.
if "$PMUBPF" -e off-cpu -o "$TMP/cmd.pb.gz" -- "$W" "$TMP/cmd.truth" 2 2>"$TMP/cmd.err"; then
	check command_exact $CHECK exact "$TMP/cmd.pb.gz" "$TMP/cmd.truth" --tolerance 0.02 $FUNCS
	check sample_type $CHECK expect "$TMP/cmd.pb.gz" --sample-type off-cpu/nanoseconds --func offcpu_futex --kernel-frames 2
	# The futex waits happen under {wait=futex}: their samples, and only
	# theirs, carry it.
	check labels $CHECK exact "$TMP/cmd.pb.gz" "$TMP/cmd.truth" --by tag:wait --names wait=futex
else
	fail command_exact "pmubpf failed: $(tail -n1 "$TMP/cmd.err")"
	fail sample_type "no profile"
fi

# Beside cpu-clock: two files, the off-cpu one still exact, and the
# cpu-clock one has the workload (its main thread spins nowhere, but the
# helper's and main's syscalls take some CPU time: at least one sample is
# not guaranteed, so only the file's type is checked). A second recorder
# (-a -e off-cpu) runs meanwhile: with two programs on sched_switch the
# kernel dispatches through __traceiter_sched_switch, which is no frame
# of the profiled code and must not be the stacks' leaf.
if start_recorder "$TMP/second.err" -a -e off-cpu -o "$TMP/second.pb.gz"; then
	second=$RECORDER_PID
else
	second=
fi
if "$PMUBPF" -e off-cpu,cpu-clock -o "$TMP/both.pb.gz" -- "$W" "$TMP/both.truth" 2 2>"$TMP/both.err"; then
	with_cpu_clock() {
		$CHECK exact "$TMP/both.off-cpu.pb.gz" "$TMP/both.truth" --tolerance 0.02 $FUNCS || return 1
		$CHECK expect "$TMP/both.cpu-clock.pb.gz" --sample-type cpu/nanoseconds --min-samples 0
	}
	check with_cpu_clock with_cpu_clock
	# The switch's own dispatch leads the stack as taken: no leaf may be
	# a __traceiter_ frame. One deeper is the task's: under qemu a task
	# is preempted inside the exec tracepoint's BPF programs (the second
	# recorder's), __traceiter_sched_process_exec under the switch.
	no_dispatch_frames() {
		[[ -n $second ]] || { echo "the second recorder did not start: $(tail -n1 "$TMP/second.err")"; return 1; }
		"$DUMP" "$TMP/both.off-cpu.pb.gz" | python3 -c '
import json, sys
d = json.load(sys.stdin)
files = {m["id"]: m["file"] for m in d["mappings"]}
leaves = {}
for s in d["samples"]:
    kern = [fr["func"] for f in s["stack"] if files.get(f.get("mapping")) == "[kernel.kallsyms]" for fr in f["frames"]]
    if kern:
        leaves[kern[0]] = leaves.get(kern[0], 0) + 1
bad = sorted(k for k in leaves if k.startswith("__traceiter_"))
print("%d kernel leaves; dispatch frames as leaves: %s" % (len(leaves), bad or "none"))
sys.exit(1 if bad or not leaves else 0)'
	}
	check no_dispatch_frames no_dispatch_frames
else
	fail with_cpu_clock "pmubpf failed: $(tail -n1 "$TMP/both.err")"
	fail no_dispatch_frames "no profile"
fi
[[ -n $second ]] && { kill -INT "$second"; wait "$second"; }

# -p: the workload waits on a FIFO (gate_wait) until the recorder is up;
# that wait began before the recording: left out, and said.
mkfifo "$TMP/gate"
"$W" "$TMP/pid.truth" 2 "$TMP/gate" &
wpid=$!
# The recorder starts once the workload is blocked in gate_wait's read
# (/proc/PID/syscall: read's number, 0 on x86-64, 63 on arm64): under
# qemu its own start took longer than the recorder's, and its wait began
# while recording (gate_wait sampled).
case $(uname -m) in aarch64) nr_read=63 ;; *) nr_read=0 ;; esac
for ((i = 0; i < 2400; i++)); do # 120 s: a hung test's bound only
	[[ $(cut -d' ' -f1 /proc/$wpid/syscall 2>/dev/null) == "$nr_read" ]] && break
	sleep 0.05
done
if start_recorder "$TMP/pid.err" -e off-cpu -p "$wpid" -o "$TMP/pid.pb.gz"; then
	echo go >"$TMP/gate"
	wait $wpid
	wait $RECORDER_PID
	check pid_exact $CHECK exact "$TMP/pid.pb.gz" "$TMP/pid.truth" --tolerance 0.02 $FUNCS
	pid_unseen_noted() {
		$CHECK expect "$TMP/pid.pb.gz" --comment 'left out: [1-9][0-9]* off-CPU waits not seen begin' || return 1
		grep -q 'off-CPU waits not seen begin' "$TMP/pid.err" || { echo "not said on stderr"; return 1; }
		# gate_wait is no sample: its stack was never read.
		! $CHECK expect "$TMP/pid.pb.gz" --func gate_wait >/dev/null 2>&1 || { echo "gate_wait sampled"; return 1; }
	}
	check pid_unseen_noted pid_unseen_noted
else
	echo go >"$TMP/gate"
	wait $wpid
	fail pid_exact "could not start pmubpf -p: $(tail -n1 "$TMP/pid.err")"
	fail pid_unseen_noted "no recording"
fi

# --every 1: ~3 s of waits over several windows; a wait under way at a
# window's close is counted up to it and goes on in the next: the
# windows' weights add up to the truth, over one file per window.
mkdir "$TMP/every"
if "$PMUBPF" -e off-cpu --every 1 -o "$TMP/every/" -- "$W" "$TMP/every.truth" 6 2>"$TMP/every.err"; then
	every_windows_exact() {
		local files=("$TMP"/every/*.pb.gz) also=() f
		((${#files[@]} >= 2)) || { echo "only ${#files[@]} windows"; return 1; }
		# One file per window written: none replaced another (names are
		# at second resolution; two windows can start in one second).
		local said
		said=$(sed -n 's/.*taken in all windows (\([0-9]*\) windows).*/\1/p' "$TMP/every.err")
		[[ $said == "${#files[@]}" ]] || { echo "${#files[@]} files for ${said:-?} windows written"; return 1; }
		for f in "${files[@]:1}"; do also+=(--also "$f"); done
		local out
		out=$($CHECK exact "${files[0]}" "$TMP/every.truth" --tolerance 0.02 $FUNCS "${also[@]}" 2>&1) && return 0
		# The evidence, kept (the files go with $TMP): each window's
		# weights (ms, samples), its loss notes, pmubpf's last words; the
		# check's own verdict last (check prints the last 25 lines).
		for f in "${files[@]}"; do
			echo "window ${f##*/}: $($CHECK exact "$f" "$TMP/every.truth" --tolerance 1e9 $FUNCS 2>&1 |
				awk '$1 ~ /^offcpu_/ { printf "%s=%.2fms(%d) ", $1, $3 / 1e6, $4 }')"
			"$DUMP" "$f" 2>/dev/null | grep -oE '"(lost|left out): [^"]*"' | sed 's/^/    /'
		done
		grep -v '^pmubpf: unwind:' "$TMP/every.err" | tail -n 4 | sed 's/^/    stderr: /'
		printf '%s\n' "$out" | tail -n 5
		return 1
	}
	check every_windows_exact every_windows_exact
else
	fail every_windows_exact "pmubpf --every failed: $(tail -n1 "$TMP/every.err")"
fi

# Errors: one line, non-zero, no file.
errors() {
	local out
	for args in "-e off-cpu:u" "-e {cpu-clock,off-cpu}" "-e {off-cpu,cpu-clock}" "-e off-cpu,off-cpu"; do
		# shellcheck disable=SC2086
		if out=$("$PMUBPF" $args -o "$TMP/err.pb.gz" -- true 2>&1); then
			echo "accepted: $args"; return 1
		fi
		[[ $(wc -l <<<"$out") -eq 1 ]] || { echo "not one line for $args: $out"; return 1; }
		[[ ! -e $TMP/err.pb.gz ]] || { echo "file written for $args"; return 1; }
	done
	out=$("$PMUBPF" -e offcpu -- true 2>&1) && return 1
	grep -q "did you mean 'off-cpu'" <<<"$out" || { echo "no suggestion: $out"; return 1; }
}
check errors errors
