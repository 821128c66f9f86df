#!/usr/bin/env bash
# lifecycle.sh — processes that go away, and recordings that are stopped:
# a process that exits and whose binary is deleted mid-recording is still
# named (maps read by the PROCMAP_QUERY ioctl, and as text); SIGINT and SIGTERM stop a recording and leave a valid profile
# with the workload's samples, also with `-- command` (which then exits
# with the command's status: killed by the signal passed on); a command
# killed by a signal gives 128 + its number; a program that execs
# mid-recording (same pid) is named after each image, under -p and
# `-- command`; a process whose leader thread leaves first (pthread_exit)
# lives on in its other threads, with their labels.
source "$(dirname "$0")/lib.sh"
need_root deleted_binary deleted_binary_text sigint_valid sigterm_valid sigint_command child_killed exec_new_image \
	exec_new_image_command dlopen_late dlopen_late_exited live_from_log live_weight leader_exit_command leader_exit_all leader_exit_command_weight leader_exit_all_weight

# The victim: a private copy of serial, deleted while it runs, gone
# before pmubpf writes. Under both readers of the maps: PROCMAP_QUERY
# (Linux 6.11+) and the text, which PMUBPF_NO_PROCMAP_QUERY forces; -v
# says which one read them.
kver=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
for reader in PROCMAP_QUERY text; do
	name=deleted_binary
	[[ $reader == text ]] && name=deleted_binary_text
	want=$reader
	((kver < 6011)) && want=text # no PROCMAP_QUERY: the text either way
	cp "$B/serial" "$TMP/victim"
	if [[ $reader == text ]]; then export PMUBPF_NO_PROCMAP_QUERY=1; else unset PMUBPF_NO_PROCMAP_QUERY; fi
	if start_recorder "$TMP/del.err" -a -F 999 -o "$TMP/del.pb.gz"; then
		# Deleted once pmubpf has read its maps (under qemu the first
		# read of every process takes seconds), gone before it writes.
		"$TMP/victim" 600 /dev/null & vpid=$!
		wait_unwind_slot $RECORDER_PID $vpid
		rm -f "$TMP/victim"
		sleep 0.3
		kill $vpid; wait $vpid
		kill -INT $RECORDER_PID; wait $RECORDER_PID
		if grep -q "process maps read by $want\$" "$TMP/del.err"; then
			check $name $CHECK expect "$TMP/del.pb.gz" --pid $vpid --func f10 --func main
		else
			fail $name "maps not read by $want: $(grep -o 'process maps read by .*' "$TMP/del.err")"
		fi
	else
		fail $name "pmubpf did not start: $(tail -n1 "$TMP/del.err")"
	fi
	unset PMUBPF_NO_PROCMAP_QUERY
done

for sig in INT TERM; do
	name=sig${sig,,}_valid
	# Long enough to outlive a slow BPF load; stopped below.
	"$B/serial" 30 /dev/null & w=$!
	if start_recorder "$TMP/$sig.err" -a -F 999 -o "$TMP/$sig.pb.gz"; then
		c0=$(cpu_ticks $w)
		sleep 1
		c1=$(cpu_ticks $w)
		kill -$sig $RECORDER_PID
		wait $RECORDER_PID; rc=$?
		if [[ $rc -ne 0 ]]; then
			fail $name "exit status $rc after SIG$sig"
		elif out=$(valid_profile "$TMP/$sig.pb.gz" 2>&1); then
			# Not just a valid (possibly empty) file: the workload's
			# samples, at least as many as its CPU time in the window
			# measured from outside (Poisson lower bound, >= 1).
			check $name $CHECK expect "$TMP/$sig.pb.gz" --pid $w --func f10 --min-samples "$(min_samples $((c1 - c0)) 999)"
		else
			fail $name "$out"
		fi
		if ls "$TMP"/$sig.pb.gz.tmp* >/dev/null 2>&1; then
			fail ${name}_no_tmp "temporary file left behind"
		else
			pass ${name}_no_tmp
		fi
	else
		fail $name "pmubpf did not start: $(tail -n1 "$TMP/$sig.err")"
	fi
	kill $w 2>/dev/null; wait $w 2>/dev/null
done

# SIGINT with `-- command`: the profile is written, the command gets the
# signal (it would run 30 s), and pmubpf exits with its status (130).
if start_recorder "$TMP/cint.err" -F 999 -o "$TMP/cint.pb.gz" -- "$B/serial" 30 /dev/null; then
	cp=$(pgrep -P $RECORDER_PID | head -n1)
	c0=$(cpu_ticks "$cp")
	sleep 1
	c1=$(cpu_ticks "$cp")
	kill -INT $RECORDER_PID
	timeout 20 tail --pid=$RECORDER_PID -f /dev/null
	wait $RECORDER_PID; rc=$?
	if [[ $rc -ne 130 ]]; then
		fail sigint_command "exit status $rc, want 130 (the command killed by SIGINT)"
	else
		check sigint_command $CHECK expect "$TMP/cint.pb.gz" --func f10 --tag comm=serial \
			--min-samples "$(min_samples $((c1 - c0)) 999)"
	fi
else
	fail sigint_command "pmubpf did not start: $(tail -n1 "$TMP/cint.err")"
fi

# A command killed by a signal: pmubpf exits 128 + the signal, profile
# written with what ran before.
"$PMUBPF" -F 999 -o "$TMP/segv.pb.gz" -- sh -c "'$B/serial' 0.5 /dev/null; kill -SEGV \$\$" 2>"$TMP/segv.err"
rc=$?
if [[ $rc -eq 139 ]]; then
	check child_killed $CHECK expect "$TMP/segv.pb.gz" --func f10
else
	fail child_killed "exit status $rc, want 139 (128 + SIGSEGV): $(tail -n1 "$TMP/segv.err")"
fi

# exec: exec_work spins in before_exec(), then execs demo in the same
# process (not a fork: same pid). Recorded with -p (attached before it
# starts) and as `-- command`: both images named in that one pid, each
# with its own comm.
rm -f "$TMP/go"
"$B/exec_work" 1 "$TMP/go" "$B/demo" 1 >/dev/null & ep=$!
if start_recorder "$TMP/exec.err" -F 999 -p $ep -o "$TMP/exec.pb.gz"; then
	touch "$TMP/go"
	wait $ep
	timeout 20 tail --pid=$RECORDER_PID -f /dev/null # -p: stops once the target exited
	wait $RECORDER_PID
	check exec_new_image $CHECK expect "$TMP/exec.pb.gz" --only-pid $ep --func before_exec --func handle_request \
		--tag comm=exec_work --tag comm=demo
else
	fail exec_new_image "pmubpf did not start: $(tail -n1 "$TMP/exec.err")"
	touch "$TMP/go"; wait $ep
fi
if "$PMUBPF" -F 999 -o "$TMP/execc.pb.gz" -- "$B/exec_work" 1 - "$B/demo" 1 >/dev/null 2>"$TMP/execc.err"; then
	exec_command() {
		$CHECK expect "$TMP/execc.pb.gz" --func before_exec --func handle_request --tag comm=exec_work --tag comm=demo || return 1
		# One pid: the exec kept it.
		local n
		n=$($DUMP "$TMP/execc.pb.gz" | python3 -c 'import json, sys; print(len({s["labels"]["pid"] for s in json.load(sys.stdin)["samples"]}))')
		[[ $n -eq 1 ]] || { echo "$n pids, want 1 (exec keeps the pid)"; return 1; }
	}
	check exec_new_image_command exec_command
else
	fail exec_new_image_command "pmubpf failed: $(tail -n1 "$TMP/execc.err")"
fi

# dlopen: a library mapped half a second after the process's first
# sample, which then exits before pmubpf writes: still named (the kernel's
# mmap report makes pmubpf read the maps while the library is there).
if "$PMUBPF" -F 999 -o "$TMP/dl.pb.gz" -- "$B/dlopen_work" "$B/libhotlib.so" 0.5 0.5 2>"$TMP/dl.err"; then
	check dlopen_late $CHECK expect "$TMP/dl.pb.gz" --func hotlib_spin --func main
else
	fail dlopen_late "pmubpf failed: $(tail -n1 "$TMP/dl.err")"
fi
# The same under -a, recorder started first, process long gone at the
# end. It starts 2 s in, once pmubpf's first read of every running
# process is done: started during it (seconds of CPU on a loaded
# machine), the 0.8 s process could be gone before its first notice was
# read, and fail now and then at load ~8.
if start_recorder "$TMP/dla.err" -a -F 999 -o "$TMP/dla.pb.gz"; then
	sleep 2
	"$B/dlopen_work" "$B/libhotlib.so" 0.4 0.4 & dp=$!
	wait $dp
	sleep 0.5
	kill -INT $RECORDER_PID; wait $RECORDER_PID
	check dlopen_late_exited $CHECK expect "$TMP/dla.pb.gz" --pid $dp --func hotlib_spin
else
	fail dlopen_late_exited "pmubpf did not start: $(tail -n1 "$TMP/dla.err")"
fi

# Processes begun while recording, alive when pmubpf reads them (issue
# 11), where pmubpf takes the kernel's mmap reports (PMUBPF_MMAP_REPORTS=1
# here: a -a recording on a kernel with all images.bpf.h needs takes the
# images from BPF instead, tests/integration/images.sh): their image comes from the kernel's reports, with no maps read
# from /proc (the `processes:` comment counts them as "live ones from
# mmap reports"). Four exec_work processes of 0.3 s each, started 2 s
# into an -a recording (once the first read of every running process is
# done), each spinning in before_exec: each must count there, and their
# samples must be named and unwound through main (the unwind tables are
# built from that image; exec_work has frame pointers, so main is there
# either way, the names are the check). Their samples' weight there is
# at least a Poisson bound under the time they spun on a CPU, as they
# measured it (EXEC_WORK_TRUTH: 0.3 s of wall time each was ~1.2 s on a
# quiet machine, ~0.45 s beside stress-ng --cpu 2, where "500 samples"
# failed with 428): live_weight, on a real CPU (need_real_timer).
# FILE TRUTH [weight]
live_from_log() {
	local n min=0 cpu
	cpu=$(awk '$2 == "before_exec" { t += $3 } END { printf "%.0f\n", t }' "$2")
	[[ ${3:-} == weight ]] && min=$(min_weight "$cpu" 999)
	n=$(sed -n "s/.* \([0-9]*\) live ones from mmap reports.*/\1/p" <<<"$($DUMP "$1" | grep -o '"processes: [^"]*"')")
	((${n:-0} >= 4)) || { echo "${n:-no} live images from the log, want >= 4"; return 1; }
	$DUMP "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
n = both = w = 0
for s in d["samples"]:
    if s["labels"].get("comm") != "exec_work":
        continue
    funcs = [fr["func"] for f in s["stack"] for fr in f["frames"]]
    if "before_exec" not in funcs:
        continue
    n += s["values"][0]
    w += s["values"][1]
    both += s["values"][0] if "main" in funcs[funcs.index("before_exec"):] else 0
want, cpu = int(sys.argv[1]), int(sys.argv[2])
print("%d samples in before_exec (%d ms, want %d+ of %d ms of CPU), %d of them under main" %
      (n, w // 1000000, want // 1000000, cpu // 1000000, both))
if w < want or not n:
    sys.exit("%d samples in before_exec, %d ms: want %d+ ms for %d ms of CPU" % (n, w // 1000000, want // 1000000, cpu // 1000000))
if both < 0.99 * n:
    sys.exit("under 99% unwound through main")
' "$min" "$cpu"
}
if PMUBPF_MMAP_REPORTS=1 start_recorder "$TMP/live.err" -a -F 999 -o "$TMP/live.pb.gz"; then
	sleep 2
	for ((i = 0; i < 4; i++)); do EXEC_WORK_TRUTH=$TMP/live.truth "$B/exec_work" 0.3 - /bin/true; done
	kill -INT $RECORDER_PID; wait $RECORDER_PID
	check live_from_log live_from_log "$TMP/live.pb.gz" "$TMP/live.truth"
	if need_real_timer live_weight; then
		check live_weight live_from_log "$TMP/live.pb.gz" "$TMP/live.truth" weight
	fi
else
	fail live_from_log "pmubpf did not start: $(tail -n1 "$TMP/live.err")"
	fail live_weight "pmubpf did not start"
fi

# A process whose leader leaves first (leader_exit.c: pthread_exit after
# a third of its CPU time): the kernel's exit tracepoint fires for the
# tgid while its worker runs on. The process has not ended: the worker's
# samples after it keep their generation and its labels (a second
# generation of the same image had the label slot gone: 2/3 of
# worker_spin unlabelled). The workload, its labels set, waits until the
# recorder has given BPF its label slot (wait_label_slot) before it
# spins: a process's labels count from its first read on, which under -a
# comes after its first samples, 1-2% of these samples on a quiet
# machine, all of the leader's on a busy one (it spun 0.5 s of wall
# time: 0 of 96 leader_spin samples labelled beside a build). Spans are
# CPU time; their samples' weight (cpu_weight) at least a Poisson bound
# under the task-clock truth.
# Every leader_spin and worker_spin sample carries its thread's label,
# but for any the profile counts as a label read lost (BPF found the label
# word unreadable: the sample is kept unlabelled and counted).
# FILE TRUTH [PID]
leader_exit_labels() {
	local lead lead_lab work work_lab tl tw wl ww ml mw lost
	read -r lead lead_lab work work_lab _ < <(leader_exit_tally "$1" "${3:-}")
	tl=$(awk '$2 == "leader_spin" { print $3 }' "$2" 2>/dev/null)
	tw=$(awk '$2 == "worker_spin" { print $3 }' "$2" 2>/dev/null)
	[[ -n $tl && -n $tw ]] || { echo "no truth lines in $2"; return 1; }
	wl=$(cpu_weight "$1" leader_spin "${3:-}") ml=$(min_weight "$tl" 999)
	ww=$(cpu_weight "$1" worker_spin "${3:-}") mw=$(min_weight "$tw" 999)
	lost=$($DUMP "$1" | python3 -c '
import json, re, sys
print(sum(int(m.group(1)) for c in json.load(sys.stdin).get("comments", [])
          for m in [re.match(r"lost: (\d+) label reads", c)] if m))')
	echo "labelled: leader_spin ${lead_lab:-?} of ${lead:-?}, worker_spin ${work_lab:-?} of ${work:-?}; ${lost:-?} label reads lost;" \
		"weights $((wl / 1000000)) ms, $((ww / 1000000)) ms (want $((ml / 1000000))+, $((mw / 1000000))+ of truth $((tl / 1000000)), $((tw / 1000000)))"
	# The weights need a CPU whose timer fires on time (need_real_timer):
	# checked apart, as leader_exit_*_weight, with WEIGHT=1.
	((!${WEIGHT:-0} || (wl >= ml && ww >= mw))) || { echo "too few samples for the CPU time spun"; return 1; }
	((lead - lead_lab + work - work_lab <= ${lost:-0})) ||
		{ echo "$((lead - lead_lab)) leader_spin and $((work - work_lab)) worker_spin samples without their thread's label"; return 1; }
}
# leader_exit_go ERR GO: once leader_exit has said its pid in ERR (sets
# LE_PID) and the recorder ($RECORDER_PID) has its label slot, make GO.
# GO is made in any case (the workload ends); false, with the reason, if
# the slot did not come.
leader_exit_go() {
	local err=$1 go=$2 i
	LE_PID=
	for ((i = 0; i < 2400; i++)); do # 120 s: a hung test's bound only
		LE_PID=$(awk '/^started/ { print $2 }' "$err" 2>/dev/null)
		[[ -n $LE_PID ]] && break
		kill -0 $RECORDER_PID 2>/dev/null || break
		sleep 0.05
	done
	if [[ -z $LE_PID ]]; then
		touch "$go"
		echo "leader_exit did not start: $(tail -n1 "$err")"
		return 1
	fi
	if ! wait_label_slot $RECORDER_PID "$LE_PID"; then
		touch "$go"
		echo "the recorder gave process $LE_PID no label slot"
		return 1
	fi
	touch "$go"
}
rm -f "$TMP/le.go" "$TMP/lea.go"
if start_recorder "$TMP/le.err" -F 999 -o "$TMP/le.pb.gz" -- "$B/leader_exit" 1.5 "$TMP/le.truth" - "$TMP/le.go"; then
	if out=$(leader_exit_go "$TMP/le.err" "$TMP/le.go"); then
		wait $RECORDER_PID; rc=$?
		if [[ $rc -eq 0 ]]; then
			check leader_exit_command leader_exit_labels "$TMP/le.pb.gz" "$TMP/le.truth"
			if need_real_timer leader_exit_command_weight; then
				WEIGHT=1 check leader_exit_command_weight leader_exit_labels "$TMP/le.pb.gz" "$TMP/le.truth"
			fi
		else
			fail leader_exit_command "pmubpf failed: $(tail -n1 "$TMP/le.err")"
		fi
	else
		fail leader_exit_command "$out"
		wait $RECORDER_PID
	fi
else
	fail leader_exit_command "pmubpf did not start: $(tail -n1 "$TMP/le.err")"
fi
if start_recorder "$TMP/lea.err" -a -F 999 -o "$TMP/lea.pb.gz"; then
	"$B/leader_exit" 1.5 "$TMP/lea.truth" - "$TMP/lea.go" 2>"$TMP/lea.pid" & lp=$!
	out=$(leader_exit_go "$TMP/lea.pid" "$TMP/lea.go"); ok=$?
	wait $lp
	kill -INT $RECORDER_PID; wait $RECORDER_PID
	if ((ok == 0)); then
		check leader_exit_all leader_exit_labels "$TMP/lea.pb.gz" "$TMP/lea.truth" $lp
		if need_real_timer leader_exit_all_weight; then
			WEIGHT=1 check leader_exit_all_weight leader_exit_labels "$TMP/lea.pb.gz" "$TMP/lea.truth" $lp
		fi
	else
		fail leader_exit_all "$out"
	fi
else
	fail leader_exit_all "pmubpf did not start: $(tail -n1 "$TMP/lea.err")"
fi
