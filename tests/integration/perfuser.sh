#!/usr/bin/env bash
# perfuser.sh — recording the perf way (issue 14): tracepoints, event
# groups, -o -, the terminal status line, what pmubpf says when a command
# or a -p target ends the recording, `list` filters and perf's
# --call-graph spellings.
source "$(dirname "$0")/lib.sh"

NAMES="tp_every_hit tp_every_nth group_member_profile o_stdout o_stdout_refused tty_status no_tty_status
       d_stops_command pid_exit_said list_filter list_counting_only call_graph_size call_graph_lbr hw_group"
need_root $NAMES

pyget() { # FILE EXPR: evaluate EXPR over the dumped profile p
	"$DUMP" "$1" | python3 -c 'import json,sys
p=json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$2"
}

# A tracepoint hit exactly N times: `syscalls:sys_enter_getppid` while a
# Python loop calls getppid N times (-c 1: a sample per hit; -c 10: one per
# ten, each weighing 10). Other processes hardly call getppid; the command
# is the only target anyway.
N=2000
WORK=(python3 -c "import os
for _ in range($N): os.getppid()")
tp_check() { # NAME PERIOD
	local name=$1 c=$2 out
	rm -f "$TMP/tp.pb.gz"
	out=$("$PMUBPF" -e syscalls:sys_enter_getppid -c "$c" -o "$TMP/tp.pb.gz" -- "${WORK[@]}" 2>&1) || {
		fail "$name" "pmubpf failed: $out"; return; }
	local got ref
	got=$(pyget "$TMP/tp.pb.gz" 'sum(s["values"][0] for s in p["samples"]), sum(s["values"][1] for s in p["samples"]), any(f["func"]=="__x64_sys_getppid" or "getppid" in f["func"] for s in p["samples"] for l in s["stack"] for f in l["frames"])')
	read -r cnt wt named <<<"$(tr -d '(),' <<<"$got")"
	# The reference: perf counting the same tracepoint for the same
	# command (python's start-up calls getppid a few times too).
	ref=$(perf stat -x, -e syscalls:sys_enter_getppid -- "${WORK[@]}" 2>&1 >/dev/null | awk -F, '/getppid/ {print $1}')
	# Every hit counted: ref/c samples weighing ref (the hit counter is
	# per CPU, so a migration can leave < c hits unsampled on each CPU).
	local lo=$((ref / c - 2)) hi=$((ref / c))
	if [[ -z $ref ]] || ((ref < N)); then fail "$name" "perf stat counted '$ref' getppid hits, want >= $N"
	elif ((cnt < lo || cnt > hi)); then fail "$name" "$cnt samples, want $lo..$hi (perf stat: $ref hits)"
	elif ((wt != cnt * c)); then fail "$name" "weight $wt, want $cnt x $c"
	elif [[ $named != True ]]; then fail "$name" "no getppid frame in the stacks"
	elif ! valid_profile "$TMP/tp.pb.gz" >/dev/null; then fail "$name" "$(valid_profile "$TMP/tp.pb.gz")"
	else pass "$name"; fi
}
tp_check tp_every_hit 1
tp_check tp_every_nth 10

# A group: cpu-clock samples, page-faults is read at its samples. The
# workload allocates fresh pages for ~1 s and reports its own minor faults
# over that loop (getrusage): the member's weights must account for them.
# The only undercount is each CPU's first interval (before the leader's
# first sample there, < 1 ms of a 1 s run) and intervals that end in
# another task's sample (a busy neighbour), hence the 10% slack; other
# tasks' faults can only add.
cat >"$TMP/faults.py" <<'PY'
import mmap, resource, sys, time
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
t = time.time()
while time.time() - t < 1.0:
    m = mmap.mmap(-1, 4 << 20)   # fresh pages: a fault each when touched
    m[0::4096] = bytes(1024)
    m.close()
r1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
open(sys.argv[1], "w").write(str(r1 - r0))
PY
rm -f "$TMP"/g.*
if out=$("$PMUBPF" -e '{cpu-clock,page-faults}' -F 4999 -o "$TMP/g.pb.gz" -- python3 "$TMP/faults.py" "$TMP/faults.n" 2>&1); then
	lc=$(pyget "$TMP/g.cpu-clock.pb.gz" 'sum(s["values"][0] for s in p["samples"])')
	mc=$(pyget "$TMP/g.page-faults.pb.gz" 'sum(s["values"][0] for s in p["samples"])')
	mw=$(pyget "$TMP/g.page-faults.pb.gz" 'sum(s["values"][1] for s in p["samples"])')
	how=$(pyget "$TMP/g.page-faults.pb.gz" '[c for c in p["comments"] if c.startswith("sampling:")][0]')
	ref=$(cat "$TMP/faults.n")
	if ((mc < 1 || mc > lc)); then fail group_member_profile "member samples $mc, leader $lc"
	elif [[ $how != *"group leader 'cpu-clock'"* ]]; then fail group_member_profile "comment: $how"
	elif ((ref < 1000 || mw * 10 < ref * 9)); then
		fail group_member_profile "member weight $mw page faults, the workload counted $ref in its loop"
	else pass group_member_profile; fi
else
	fail group_member_profile "$out"
fi

# -o -: the profile on stdout, messages on stderr only.
if "$PMUBPF" -d 0.3 -o - >"$TMP/stdout.pb.gz" 2>"$TMP/stdout.err" && valid_profile "$TMP/stdout.pb.gz" >/dev/null \
   && ! ls "$TMP"/- ./- >/dev/null 2>&1 && grep -q -- '-> -' "$TMP/stdout.err"; then
	pass o_stdout
else
	fail o_stdout "$(cat "$TMP/stdout.err"; valid_profile "$TMP/stdout.pb.gz")"
fi
out=$("$PMUBPF" -e cpu-clock,task-clock -d 0.3 -o - 2>&1 >"$TMP/refused"); rc=$?
if [[ $rc -ne 0 && $(grep -c . <<<"$out") -eq 1 && $out == *"one profile"* && ! -s $TMP/refused ]]; then
	pass o_stdout_refused
else
	fail o_stdout_refused "rc $rc, stderr: $out"
fi

# The status line: on a terminal (script gives pmubpf a pty), redrawn in
# place with the sample count; not a byte of it in a pipe.
script -qec "$PMUBPF -d 1.2 -o $TMP/tty.pb.gz" /dev/null >"$TMP/tty.out" 2>&1
if grep -aq $'\r''pmubpf: [0-9.]* s, [0-9]* samples, [0-9]* lost' "$TMP/tty.out" &&
   grep -aq $'\r\e\[K' "$TMP/tty.out"; then
	pass tty_status
else
	fail tty_status "no status line: $(od -c "$TMP/tty.out" | head -3)"
fi
"$PMUBPF" -d 0.6 -o "$TMP/notty.pb.gz" 2>"$TMP/notty.err"
if grep -aq -e $'\r' -e ' samples, .* lost' "$TMP/notty.err"; then
	fail no_tty_status "status line in a pipe: $(head -c 200 "$TMP/notty.err")"
else
	pass no_tty_status
fi

# -d ends a command: one line says so, and the exit status is documented.
out=$("$PMUBPF" -d 0.5 -o "$TMP/d.pb.gz" -- sleep 5 2>&1); rc=$?
if [[ $rc -eq 143 ]] && grep -q "^pmubpf: -d 0.5 elapsed: stopped 'sleep' by SIGTERM; exit status 143" <<<"$out"; then
	pass d_stops_command
else
	fail d_stops_command "rc $rc: $out"
fi

# A -p target that exits ends the recording, and pmubpf says so.
sleep 1 &
tpid=$!
out=$("$PMUBPF" -p $tpid -o "$TMP/p.pb.gz" 2>&1); rc=$?
if [[ $rc -eq 0 ]] && grep -q '^pmubpf: every target has exited: recording ended after' <<<"$out"; then
	pass pid_exit_said
else
	fail pid_exit_said "rc $rc: $out"
fi

# list WORD: only what names WORD, tracepoints included, each opened.
out=$("$PMUBPF" list sched_switch 2>&1)
if grep -q '^  sched:sched_switch .* available$' <<<"$out" && ! grep -q cpu-clock <<<"$out"; then
	pass list_filter
else
	fail list_filter "$out"
fi
# list calls available only what opens for sampling: msr/tsc/ counts only.
if [[ -d /sys/bus/event_source/devices/msr/events ]]; then
	out=$("$PMUBPF" list msr/tsc 2>&1)
	if grep -q 'msr/tsc/ .*counts but cannot sample' <<<"$out"; then pass list_counting_only
	else fail list_counting_only "$out"; fi
else
	skip list_counting_only "no msr PMU on this machine"
fi

# perf's --call-graph dwarf,SIZE is accepted (and does nothing); lbr is
# refused with the reason.
if "$PMUBPF" --call-graph dwarf,16384 -d 0.2 -o "$TMP/cg.pb.gz" 2>/dev/null && valid_profile "$TMP/cg.pb.gz" >/dev/null; then
	pass call_graph_size
else
	fail call_graph_size "--call-graph dwarf,16384 failed"
fi
out=$("$PMUBPF" --call-graph lbr -d 0.2 -o "$TMP/lbr.pb.gz" 2>&1); rc=$?
if [[ $rc -ne 0 && $out == *"lbr is not supported"* && ! -e $TMP/lbr.pb.gz ]]; then pass call_graph_lbr
else fail call_graph_lbr "rc $rc: $out"; fi

# A hardware group: one line, no file, where there is no PMU.
if has_pmu; then
	if "$PMUBPF" -e '{cycles,instructions}' -d 0.3 -o "$TMP/hw.pb.gz" 2>/dev/null &&
	   [[ -s $TMP/hw.instructions.pb.gz ]]; then pass hw_group; else fail hw_group "no member profile"; fi
else
	out=$("$PMUBPF" -e '{cycles,instructions}' -d 0.3 -o "$TMP/hw.pb.gz" 2>&1); rc=$?
	if [[ $rc -ne 0 && $(grep -c . <<<"$out") -eq 1 && $out == *"event 'cycles': not supported on this machine"* ]] &&
	   ! ls "$TMP"/hw* >/dev/null 2>&1; then pass hw_group
	else fail hw_group "rc $rc: $out"; fi
fi
