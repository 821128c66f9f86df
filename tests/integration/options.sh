#!/usr/bin/env bash
# options.sh — what the README promises and no other script checks:
# --no-kernel and --no-user alone and the :u / :k modifiers (on a workload
# that spends about half its time in system calls, the plain recording
# as the control), the default output names, -F max, the profile's
# time_nanos / duration_nanos, the --top table (against the profile it
# summarises), lost kernel stacks and lost notices (comments, stderr,
# [lost: ...] frames), and the multiplexing comment (absent when nothing
# is multiplexed; present with more hardware events than counters).
source "$(dirname "$0")/lib.sh"
need_root sides_control no_kernel no_user modifier_u modifier_k default_output default_output_events \
	output_events f_max time_window time_window_command top_table lost_kernel_stacks \
	lost_notices not_multiplexed multiplexed

# --- which side of the stack -------------------------------------------------
sides() { # NAME ARGS...: record nofp_syscall for 1 s (4999 Hz: samples
	local name=$1 # enough at a few percent of a CPU)
	shift
	"$PMUBPF" -F 4999 -o "$TMP/$name.pb.gz" "$@" -- "$B/nofp_syscall" 1 >/dev/null 2>"$TMP/$name.err" ||
		{ echo "pmubpf failed: $(tail -n1 "$TMP/$name.err")"; return 1; }
}
# Control: the workload has samples in the kernel and in user code.
if out=$(sides plain); then
	check sides_control $CHECK expect "$TMP/plain.pb.gz" --func do_syscalls --kernel-frames 3 --min-samples 50
else
	fail sides_control "$out"
fi
if out=$(sides nok --no-kernel); then
	check no_kernel $CHECK expect "$TMP/nok.pb.gz" --no-kernel-frames --func do_syscalls --min-samples 50 \
		--comment '^call graph: '
else
	fail no_kernel "$out"
fi
if out=$(sides nou --no-user); then
	check no_user $CHECK expect "$TMP/nou.pb.gz" --no-user-frames --kernel-frames 3 --min-samples 50 \
		--no-comment '^call graph: '
else
	fail no_user "$out"
fi
# :u samples only user mode (no kernel stack to walk), :k only kernel mode.
if out=$(sides modu -e cpu-clock:u); then
	check modifier_u $CHECK expect "$TMP/modu.pb.gz" --no-kernel-frames --func do_syscalls --min-samples 20 \
		--comment '^event: cpu-clock:u '
else
	fail modifier_u "$out"
fi
if out=$(sides modk -e cpu-clock:k); then
	check modifier_k $CHECK expect "$TMP/modk.pb.gz" --all-kernel-frames --kernel-frames 3 --min-samples 20 \
		--comment '^event: cpu-clock:k '
else
	fail modifier_k "$out"
fi

# --- output names ------------------------------------------------------------
# No -o: pmubpf.pb.gz in the current directory; with several events
# pmubpf.EVENT.pb.gz (and no pmubpf.pb.gz); with -o NAME.pb.gz and several
# events NAME.EVENT.pb.gz.
mkdir -p "$TMP/cwd1" "$TMP/cwd2"
if (cd "$TMP/cwd1" && "$PMUBPF" -F 99 -d 0.3 2>"$TMP/def.err"); then
	default_output() {
		[[ $(ls "$TMP/cwd1") == pmubpf.pb.gz ]] || { echo "files: $(ls "$TMP/cwd1")"; return 1; }
		valid_profile "$TMP/cwd1/pmubpf.pb.gz"
	}
	check default_output default_output
else
	fail default_output "pmubpf failed: $(tail -n1 "$TMP/def.err")"
fi
# A busy program beside them: on an idle machine 0.3 s at 99 Hz can
# take no sample but idle ones (left out), and an empty profile says
# nothing of its event.
"$B/serial" 2 /dev/null & spin=$!
if (cd "$TMP/cwd2" && "$PMUBPF" -e cpu-clock,task-clock -F 99 -d 0.3 2>"$TMP/defe.err") &&
	"$PMUBPF" -e cpu-clock -e task-clock -F 99 -d 0.3 -o "$TMP/named.pb.gz" 2>"$TMP/named.err"; then
	wait $spin
	events_named() { # PREFIX: PREFIX.cpu-clock.pb.gz and PREFIX.task-clock.pb.gz, each its event
		local ev
		for ev in cpu-clock task-clock; do
			$CHECK expect "$1.$ev.pb.gz" --comment "^event: $ev " >/dev/null || { echo "$1.$ev.pb.gz: not a $ev profile"; return 1; }
		done
	}
	default_output_events() {
		[[ $(ls "$TMP/cwd2" | tr '\n' ' ') == "pmubpf.cpu-clock.pb.gz pmubpf.task-clock.pb.gz " ]] ||
			{ echo "files: $(ls "$TMP/cwd2" | tr '\n' ' ')"; return 1; }
		events_named "$TMP/cwd2/pmubpf"
	}
	check default_output_events default_output_events
	output_events() {
		[[ ! -e $TMP/named.pb.gz ]] || { echo "named.pb.gz written too"; return 1; }
		events_named "$TMP/named"
	}
	check output_events output_events
else
	wait $spin
	fail default_output_events "pmubpf failed: $(tail -n1 "$TMP/defe.err" "$TMP/named.err")"
	fail output_events "pmubpf failed"
fi

# --- -F max: the kernel's perf_event_max_sample_rate (read around the run:
# the kernel may lower it meanwhile), and the period that goes with it.
r0=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
if "$PMUBPF" -F max -d 0.3 -o "$TMP/fmax.pb.gz" 2>"$TMP/fmax.err"; then
	r1=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	f_max() {
		local r
		for r in $r0 $r1; do
			if $CHECK expect "$TMP/fmax.pb.gz" --comment "^sampling: $r Hz per CPU" >/dev/null; then
				$DUMP "$TMP/fmax.pb.gz" | python3 -c 'import json, sys; p = json.load(sys.stdin)["period"]; w = 10**9 // int(sys.argv[1]); sys.exit(0 if p == w else "period %d, want %d" % (p, w))' "$r"
				return
			fi
		done
		$CHECK expect "$TMP/fmax.pb.gz" --comment "^sampling: ($r0|$r1) Hz per CPU"
	}
	check f_max f_max
else
	fail f_max "pmubpf failed: $(tail -n1 "$TMP/fmax.err")"
fi

# --- time_nanos / duration_nanos: the window lies within the run as seen
# from outside, and lasts at least -d (exactly -d when the deadline
# thread closes it; a little more if the main loop sees the deadline
# first) or, with a command, at least the command's own 1 s.
window() { # PROFILE T_BEFORE T_AFTER MIN_DURATION [MAX_DURATION]
	$DUMP "$1" | python3 -c '
import json, sys
p = json.load(sys.stdin)
t, d = p["time_nanos"], p["duration_nanos"]
t0, t1, lo = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
hi = int(sys.argv[4]) if len(sys.argv) > 4 else t1 - t0
errs = []
if not t0 <= t <= t1:
    errs.append("time_nanos %d not within the run [%d, %d]" % (t, t0, t1))
if not lo <= d <= hi:
    errs.append("duration_nanos %d not within [%d, %d]" % (d, lo, hi))
if t + d > t1:
    errs.append("window ends %d ns after pmubpf exited" % (t + d - t1))
sys.exit("; ".join(errs) or None)' "${@:2}"
}
t0=$(date +%s%N)
if "$PMUBPF" -F 99 -d 1 -o "$TMP/win.pb.gz" 2>"$TMP/win.err"; then
	t1=$(date +%s%N)
	check time_window window "$TMP/win.pb.gz" "$t0" "$t1" 1000000000
else
	fail time_window "pmubpf failed: $(tail -n1 "$TMP/win.err")"
fi
t0=$(date +%s%N)
if "$PMUBPF" -F 99 -o "$TMP/winc.pb.gz" -- "$B/serial" 1 /dev/null 2>"$TMP/winc.err"; then
	t1=$(date +%s%N)
	check time_window_command window "$TMP/winc.pb.gz" "$t0" "$t1" 1000000000
else
	fail time_window_command "pmubpf failed: $(tail -n1 "$TMP/winc.err")"
fi

# --- --top: the table on stdout agrees with the profile written ---------------
if "$PMUBPF" --top 5 -F 999 -o "$TMP/top.pb.gz" -- "$B/serial" 1 /dev/null >"$TMP/top.out" 2>"$TMP/top.err"; then
	check top_table $CHECK top "$TMP/top.pb.gz" "$TMP/top.out" --n 5 --func work
else
	fail top_table "pmubpf failed: $(tail -n1 "$TMP/top.err")"
fi

# --- lost kernel stacks: file-system walks (thousands of distinct kernel
# stacks at 9999 Hz) into the smallest stacks map, user stacks left out.
# A fixed amount of work (two du passes over /usr, ~1.5 s of CPU here),
# not a time: a loaded machine gets as many samples, only later. One
# window (-d no longer than --window): nothing drains the map early.
if "$PMUBPF" --no-user -F 9999 -d 3600 --window 3600 --stack-map-size 1024 -o "$TMP/kst.pb.gz" -- \
	sh -c "du -s /usr >/dev/null 2>&1; du -s /usr >/dev/null 2>&1; exit 0" 2>"$TMP/kst.err"; then
	lost_kstacks() {
		$CHECK expect "$TMP/kst.pb.gz" --func '[lost: kernel stack (stacks map full)]' \
			--comment '^lost: [1-9][0-9]* kernel stacks: stacks map full or walk failed \(--stack-map-size 1024\)' || return 1
		grep -Eq '^pmubpf: cpu-clock: lost: [1-9][0-9]* kernel stacks: stacks map full' "$TMP/kst.err" &&
			! grep -Eq '^pmubpf: cpu-clock: lost: [0-9]+ (samples|user stacks):' "$TMP/kst.err" ||
			{ echo "stderr does not report them: $(cat "$TMP/kst.err")"; return 1; }
	}
	check lost_kernel_stacks lost_kstacks
else
	fail lost_kernel_stacks "pmubpf failed: $(tail -n1 "$TMP/kst.err")"
fi

# --- lost notices: pmubpf's userspace stopped (SIGSTOP) while a workload
# makes a new label set every 100 us: each first sighting sends a ~5 KiB
# notice, the 1 MiB ring buffer (~190 of them) fills, the rest are
# counted. The samples themselves stay. 9999 Hz: ~15000 first sightings
# in the 1.5 s, still ~750 with 5% of a CPU.
if start_recorder "$TMP/ntc.err" -F 9999 -o "$TMP/ntc.pb.gz" -- "$B/labels_churn" 3; then
	sleep 0.3
	kill -STOP $RECORDER_PID
	sleep 1.5
	kill -CONT $RECORDER_PID
	wait $RECORDER_PID; rc=$?
	lost_notices() {
		[[ $rc -eq 0 ]] || { echo "pmubpf exited $rc: $(tail -n1 "$TMP/ntc.err")"; return 1; }
		$CHECK expect "$TMP/ntc.pb.gz" --func churn_spin --min-samples 100 \
			--comment '^lost: [1-9][0-9]* process/label notices: ring buffer full' || return 1
		grep -Eq '^pmubpf: cpu-clock: lost: [1-9][0-9]* process/label notices: ring buffer full' "$TMP/ntc.err" ||
			{ echo "stderr does not report them: $(grep -v '^pmubpf: unwind' "$TMP/ntc.err" | tail -n 3)"; return 1; }
	}
	check lost_notices lost_notices
else
	kill -CONT $RECORDER_PID 2>/dev/null
	fail lost_notices "pmubpf did not start: $(tail -n1 "$TMP/ntc.err")"
fi

# --- multiplexing: a timer is never multiplexed: no comment, no stderr
# line (the weights are then unscaled: accuracy.sh checks them against
# CPU time). With a PMU, twelve hardware events on every CPU outnumber its
# counters: the kernel rotates them, and pmubpf must say so.
not_multiplexed() {
	local f
	for f in plain nok modu top; do
		$CHECK expect "$TMP/$f.pb.gz" --no-comment '^multiplexed' >/dev/null || { echo "$f: multiplexed comment on a timer"; return 1; }
		! grep -q 'multiplexed' "$TMP/$f.err" || { echo "$f: stderr says multiplexed"; return 1; }
	done
}
check not_multiplexed not_multiplexed
if has_pmu; then
	"$B/serial" 2 /dev/null & w=$!
	evs=cycles,instructions,cache-references,cache-misses,branches,branch-misses
	evs+=,cycles:u,instructions:u,cache-references:u,cache-misses:u,branches:u,branch-misses:u
	if "$PMUBPF" -a -e "$evs" -d 1 -o "$TMP/mux.pb.gz" 2>"$TMP/mux.err"; then
		multiplexed() {
			local f n=0
			for f in "$TMP"/mux.*.pb.gz; do
				$CHECK expect "$f" --comment '^multiplexed: the counter ran [0-9.]+% of the time it was enabled; weights scaled by [0-9.]+$' \
					>/dev/null 2>&1 && n=$((n + 1))
			done
			[[ $n -gt 0 ]] || { echo "no profile of 12 events says it was multiplexed"; return 1; }
			grep -Eq '^pmubpf: .*: multiplexed: the counter ran [0-9.]+% of the time it was enabled; weights scaled by' "$TMP/mux.err" ||
				{ echo "stderr does not say multiplexed"; return 1; }
		}
		check multiplexed multiplexed
	else
		fail multiplexed "pmubpf failed: $(tail -n1 "$TMP/mux.err")"
	fi
	wait $w
else
	skip multiplexed "no hardware PMU (only hardware counters are multiplexed)"
fi
