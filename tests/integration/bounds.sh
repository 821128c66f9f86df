#!/usr/bin/env bash
# bounds.sh — memory and BPF slots stay bounded under process churn and
# label churn (issue 15, items 4 and 5), at a smaller scale:
#  - a process making a new label set per request: its sets past the cap
#    are labelled [too many sets] and counted, and pmubpf's peak RSS grows
#    by less than SET_BOUND bytes per label set over a one-set baseline;
#  - `-a` (the mmap reports' way) beside a churn of twice as many new
#    processes as it has unwind slots: more processes than slots pass,
#    none goes without a slot, the slots in use at the end are about the
#    processes still alive, and no sample is lost to a full counts map;
#  - a stacks map that churn fills before the window's time is up: the
#    recording drains it when half full, loses no stack, and its one
#    profile holds every sample of its windows.
# Every workload here is bounded by work (CPU time spun, processes
# started), never by wall time at a rate assumed: a slower or busier
# machine takes longer, and gets the same samples.
source "$(dirname "$0")/lib.sh"
need_root labels_capped labels_rss_per_set labels_per_window churn_slots_reclaimed churn_slots_live churn_no_counts_loss \
	stacks_drained_half_full oneshot_windows_exact every_drained_half_full

# Comments of a profile, one per line.
comments() {
	python3 - "$ROOT" "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
print("\n".join(check.load(sys.argv[2])["comments"]))
PY
}

# label_run NEW NAME SECS: label_churn (NEW: a new set per request, else
# one set) for SECS of its CPU time, recorded at 20 kHz with -p from its
# first set to its end (it waits for the recorder, which stops when it
# exits). Sets PEAK_KB to the recorder's peak RSS (KiB; -1: it failed;
# its stderr in $TMP/NAME.err) and SETS to the label sets the profile
# says it saw (kept, and not kept over a cap).
label_run() {
	local new=$1 name=$2 secs=$3 lp rp i
	rm -f "$TMP/$name.go" "$TMP/$name.peak"
	"$B/label_churn" "$secs" "$new" "$TMP/$name.go" >"$TMP/$name.out" & lp=$!
	python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[2:], stderr=open(sys.argv[1] + ".err", "w"))
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if r.returncode == 0 else -1
open(sys.argv[1] + ".peak", "w").write("%d\n" % kb)' "$TMP/$name" \
		"$PMUBPF" -v -F 20000 -p $lp -o "$TMP/$name.pb.gz" & rp=$!
	for ((i = 0; i < 2400; i++)); do # 120 s: a hung recorder's bound only
		grep -q '^pmubpf: recording' "$TMP/$name.err" 2>/dev/null && break
		kill -0 $rp 2>/dev/null || break
		sleep 0.05
	done
	touch "$TMP/$name.go"
	wait $rp
	wait $lp
	PEAK_KB=$(cat "$TMP/$name.peak" 2>/dev/null || echo -1)
	SETS=0
	if ((PEAK_KB >= 0)); then
		comments "$TMP/$name.pb.gz" >"$TMP/$name.comments"
		SETS=$(sed -n -e 's/^labels: .* \([0-9]*\) sets read.*/\1/p' \
			-e 's/^labels: \([0-9]*\) sets not kept.*/\1/p' "$TMP/$name.comments" | awk '{ n += $1 } END { print n + 0 }')
	fi
}

# --- label churn ----------------------------------------------------------
# 20 kHz on a thread that changes sets every ~5 us: nearly every sample
# names a new set. It must see a third more sets than the per-process
# cap (16384) holds. How many a second of its CPU time gives depends on
# the machine: each sample's cost is counted in the thread's time, and
# where it is longer than the period two samples come close and name one
# set (~8000 sets in a CPU second here, of 17000 samples, not 20000).
# So 1 s of churn measures that rate first, and the churn runs for the
# time that gives 24576 sets at it, and a quarter more (60 s at most: a
# hung test's bound); the baseline (one set) for as long.
label_run 1 lcal 1
lcal_sets=$SETS
churn_s=$(awk -v n="$SETS" 'BEGIN { s = n > 0 ? 1.25 * (16384 + 8192) / n : 60; printf "%.3f", (s > 60 ? 60 : s) }')
label_run 1 l1 "$churn_s"
churn_kb=$PEAK_KB
label_run 0 l0 "$churn_s"
base_kb=$PEAK_KB
if [[ $base_kb -lt 0 || $churn_kb -lt 0 ]]; then
	fail labels_capped "pmubpf failed: $(tail -n1 "$TMP/l0.err") / $(tail -n1 "$TMP/l1.err")"
	fail labels_rss_per_set "pmubpf failed"
else
	check labels_capped python3 - "$ROOT" "$TMP/l1.pb.gz" "$TMP/l1.comments" <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
p = check.load(sys.argv[2])
text = open(sys.argv[3]).read()
m = re.search(r"labels: .* (\d+) sets read", text)
o = re.search(r"labels: (\d+) sets not kept, over a cap", text)
if not m or not o:
    sys.exit("no labels/over-cap comment:\n" + text)
kept, over = int(m.group(1)), int(o.group(1))
if kept > 16384:
    sys.exit(f"{kept} sets kept for one process, cap 16384")
named = sum(s["values"][0] for s in p["samples"]
            if s["labels"].get("pmubpf_labels") == "[too many sets]")
if not named:
    sys.exit(f"{over} sets over the cap but no sample labelled [too many sets]")
print(f"{kept} sets kept, {over} over the cap, {named} samples labelled [too many sets]")
PY
	# Per set: its kept copy (one allocation: header, 2 pairs, ~30 bytes
	# of strings: < 128 bytes; its index entry and the array slot: < 64)
	# and, at the end, its profile sample (drained counts entry ~64 bytes,
	# pprof sample, its label strings interned: < 768): 1 KiB. The set's
	# old representation alone was 5.7 KiB.
	SET_BOUND=1024
	check labels_rss_per_set python3 - "$TMP/l1.comments" "$base_kb" "$churn_kb" "$SET_BOUND" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
base, churn, bound = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
m = re.search(r"labels: .* (\d+) sets read", text)
o = re.search(r"labels: (\d+) sets not kept", text)
sets = int(m.group(1)) + (int(o.group(1)) if o else 0)
if sets < 5000:
    sys.exit(f"only {sets} label sets seen: the workload did not churn")
per = (churn - base) * 1024 / sets
print(f"peak RSS {base} KiB (one set) -> {churn} KiB ({sets} sets): {per:.0f} bytes per set, bound {bound}")
if per > bound:
    sys.exit(f"{per:.0f} bytes per label set > {bound}")
PY
fi

# --- label sets per window: the caps bound the sets a window reads -----
# An --every recording keeps a set while windows use it, and its caps
# count the sets read in a window (procs.h: procs__labels_gc):
# label_churn's new set per request, 1.5 times the per-process cap
# (16384) of them in all, recorded in 2 s windows at 4999 Hz (a sample
# names about one new set: up to ~10000 a window, and three windows'
# worth alive at once, more than the cap: under the alive bound, three
# times it). Every set was once kept for the whole recording, and every
# sample after the cap's 16384th set said [too many sets] (issue 40).
# The churn's CPU time: the sets it gives at lcal's rate, which 4999 Hz
# caps (60 s at most: a hung test's bound).
win_s=$(awk -v n="$lcal_sets" 'BEGIN { r = n > 4999 ? 4999 : n; s = r > 0 ? 1.5 * 16384 / (0.9 * r) : 60; printf "%.3f", (s > 60 ? 60 : s) }')
rm -f "$TMP/lw.go"
mkdir -p "$TMP/lw"
"$B/label_churn" "$win_s" 1 "$TMP/lw.go" >"$TMP/lw.out" & lp=$!
start_recorder "$TMP/lw.err" -F 4999 --every 2 -p $lp -o "$TMP/lw/"
touch "$TMP/lw.go"
wait $lp
wait $RECORDER_PID; rc=$?
if [[ $rc -ne 0 ]]; then
	fail labels_per_window "pmubpf failed ($rc): $(tail -n1 "$TMP/lw.err")"
else
	check labels_per_window python3 - "$ROOT" "$TMP"/lw/*.pb.gz <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
sets = forgot = over = labelled = samples = 0
for f in sys.argv[2:]:
    p = check.load(f)
    for c in p["comments"]:
        # "forgotten" is said once some were (the third window's gc on).
        m = re.search(r"labels: .* (\d+) sets read", c)
        if m:
            sets = max(sets, int(m.group(1)))
        m = re.search(r"labels: .*; (\d+) forgotten", c)
        if m:
            forgot = max(forgot, int(m.group(1)))
        m = re.search(r"labels: (\d+) sets not kept", c)
        if m:
            over = max(over, int(m.group(1)))
    for s in p["samples"]:
        if s["labels"].get("comm") != "label_churn":
            continue
        samples += s["values"][0]
        labelled += s["values"][0] * ("req" in s["labels"])
print(f"{len(sys.argv) - 2} profiles: {sets} sets read, {forgot} forgotten, {over} over a cap; "
      f"{labelled} of {samples} samples of label_churn labelled")
if over:
    sys.exit(f"{over} sets over a cap: the sets of windows written were not forgotten")
if sets < 1.25 * 16384:
    sys.exit(f"only {sets} sets read: fewer than the cap and a quarter, nothing shown")
if labelled < 0.95 * samples:
    sys.exit("under 95% of label_churn's samples labelled")
PY
fi

# --- process churn ----------------------------------------------------------
# The mmap reports' way (targets, and -a on kernels before 6.16): each
# process is read at its notice and takes a slot, the case that once
# leaked them. With images from BPF a churn of /bin/true is never read
# (its image comes from BPF within its 10 ms wait, procs.h) and takes no
# slot. The churn is the recording's command: a target's recording has
# 256 slots (unwind.c), and 2048 new processes, each sampled (proc_churn:
# 5 ms of CPU at 999 Hz), go through them whatever share of them is read
# before it ends: on a machine where the loader keeps up, all; where it
# falls behind, those gone first are put together from the reports and
# take none (609 of 2048 under -a, with 1024 slots, on one machine of
# our kind: the check failed there). It was two `while :; do /bin/true;
# done` loops for 60 s before that: 1239 processes in 20 s on one
# machine, 636 in 60 s on another.
CHURN_N=2048
"$PMUBPF" -v -o "$TMP/c.pb.gz" -- "$B/proc_churn" $CHURN_N 2 5 >"$TMP/c.out" 2>"$TMP/c.err"; rc=$?
live=$(ls -d /proc/[0-9]* 2>/dev/null | wc -l)
if [[ $rc -ne 0 ]]; then
	for n in churn_slots_reclaimed churn_slots_live churn_no_counts_loss; do
		fail $n "pmubpf failed: $(tail -n1 "$TMP/c.err")"
	done
else
	comments "$TMP/c.pb.gz" >"$TMP/c.comments"
	unw=$(grep '^unwind tables:' "$TMP/c.comments")
	# Every dead process's slot must come back (unwind.c: they held all
	# 1024 under churn), or slots run out with twice as many processes.
	# How many of them died between their read and their slot's
	# publication (an entry BPF's exit tracepoint could not delete, the
	# "reclaimed" count) is only said: that is a race the churn wins by
	# chance (1 to 6 of 2048 processes in runs here, 0 in a run of 1024
	# longer ones: requiring one would fail now and then), and
	# tests/unit/test_unwind.c dead_before_publication makes it happen
	# every time.
	check churn_slots_reclaimed python3 - "$unw" "$(cat "$TMP/c.out")" <<'PY'
import re, sys
m = re.search(r"(\d+) processes, slots (\d+)/(\d+) in use, (\d+) without a slot, (\d+) reclaimed", sys.argv[1])
if not m:
    sys.exit("no unwind summary: " + sys.argv[1])
procs, used, slots, without, reclaimed = map(int, m.groups())
print(f"{procs} processes through {slots} slots, {without} without one, {reclaimed} reclaimed; churn: {sys.argv[2]}")
if without:
    sys.exit(f"{without} processes without a slot")
if procs <= slots:
    sys.exit(f"only {procs} processes for {slots} slots: the churn did not exercise reuse")
PY
	# Slots still in use at the end: processes alive then (the final maps
	# re-read finds the dead ones gone and gives their slots back).
	check churn_slots_live python3 - "$unw" "$live" <<'PY'
import re, sys
used = int(re.search(r"slots (\d+)/", sys.argv[1]).group(1))
live = int(sys.argv[2])
print(f"{used} slots in use at the end, {live} processes alive")
if used > live + 16:
    sys.exit(f"{used} slots in use but {live} processes alive")
PY
	check churn_no_counts_loss bash -c "! grep -e '^lost: .*counts map full' -e 'lost [1-9][0-9]* samples (counts map full)' '$TMP/c.comments' '$TMP/c.err'"
fi

# --- a stacks map churn fills: drained when half full -------------------------
# A churn of new processes (proc_churn) fills a map with entries however
# slowly it runs: every process's addresses are its own (ASLR), so each
# one sampled brings at least one new stack. 1536 processes of 3 ms of
# CPU at 999 Hz: 1460 or more sampled (all but e^-3), more than half of
# a 2048-entry map, whatever share of their samples repeat a stack of
# theirs (how many IPs a spin hits moves with the CPU: 512 processes of
# 5 ms filled a 4096-entry map past half on one machine, not on
# another, 1043 stacks). The window is 300 s (--window: kept as asked),
# longer than the churn: every window but the last ended early, its map
# half full. The recording must drain each such window, lose no stack,
# and add every window into its one profile (a 16-CPU machine under
# churn fills the default 65536 entries the same way: 24% of its user
# stacks were lost before). The other half (1024 entries, ~0.5 s of
# this churn) is the slack a drain has: a loop step is at most 100 ms.
if [[ $(cat /proc/sys/kernel/randomize_va_space 2>/dev/null) == 0 ]]; then
	skip stacks_drained_half_full "address space randomisation is off (kernel.randomize_va_space=0): the churn's processes repeat one another's stacks"
	skip oneshot_windows_exact "address space randomisation is off: no window drains early"
	rc=skip
elif start_recorder "$TMP/sm.err" -a -F 999 --window 300 --stack-map-size 2048 -o "$TMP/sm.pb.gz"; then
	"$B/proc_churn" 1536 2 3 >/dev/null
	kill -INT $RECORDER_PID; wait $RECORDER_PID; rc=$?
else
	rc=1
fi
if [[ $rc == skip ]]; then
	:
elif [[ $rc -ne 0 ]]; then
	fail stacks_drained_half_full "pmubpf failed: $(tail -n1 "$TMP/sm.err")"
	fail oneshot_windows_exact "pmubpf failed"
else
	check stacks_drained_half_full python3 - "$TMP/sm.err" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"samples taken in all windows \((\d+) windows\)", text)
if not m:
    print(text[-800:])
    sys.exit("no 'samples taken in all windows' line: the recording's window never ended early")
windows = int(m.group(1))
lost = re.findall(r"lost: (\d+) (user|kernel) stacks", text)
print(f"{windows} windows, stacks lost: {lost or 'none'}")
if lost:
    sys.exit("stacks lost to a full map: " + ", ".join(f"{n} {k}" for n, k in lost))
if windows < 2:
    sys.exit(f"{windows} windows of 300 s in a shorter churn: none drained early, yet the map is 2048 entries")
PY
	# Every sample taken (BPF's count over all windows) is in the profile,
	# lost, or an idle one left out: none dropped between windows.
	check oneshot_windows_exact python3 - "$TMP/sm.err" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
t = re.search(r"cpu-clock: (\d+) samples taken in all windows", text)
m = re.search(r"cpu-clock: (\d+) samples \(\d+ distinct\)", text)
if not t or not m:
    print(text[-800:])
    sys.exit("no 'samples taken in all windows' line or no summary line")
taken = int(t.group(1))
kept = int(m.group(1))
idle = sum(int(x) for x in re.findall(r"left out: (\d+) idle samples", text))
lost = sum(int(x) for x in re.findall(r"lost: (\d+) samples", text))
print(f"taken {taken}: {kept} in the profile + {idle} idle + {lost} lost")
if kept + idle + lost != taken:
    sys.exit(f"{kept} + {idle} + {lost} != {taken} taken")
PY
fi

# The same with --every: each profile's windows drained early too. The
# churn's 1024 processes of 5 ms of CPU each take 2.56 s or more on two
# workers, whatever the machine: more than one 2 s profile. Its samples
# are in them (their weight at least a Poisson bound under the CPU time
# it spun: it was "5000 samples", 6 s at 999 Hz on two CPUs kept busy).
# The churn is the recording's command, not -a: a window fills while the
# one before it is written, and under -a that write names whatever else
# the machine runs (beside stress-ng, one window's symbols came from 21
# new objects, its write took 9 s, and 5404 stacks were lost: drains
# wait for the write's ticks). Its map is the smallest (1024 entries):
# where the churn is fast enough to fill half of it in a 2 s window, as
# here, it drains early (a recording that did not lost stacks here); where
# it is not, nothing is lost either way.
mkdir -p "$TMP/se"
"$PMUBPF" -v -F 999 --every 2 --window 2 --stack-map-size 1024 -o "$TMP/se/" -- \
	"$B/proc_churn" 1024 2 5 >/dev/null 2>"$TMP/se.err"; rc=$?
if [[ $rc -ne 0 ]]; then
	fail every_drained_half_full "pmubpf failed: $(tail -n1 "$TMP/se.err")"
else
	check every_drained_half_full python3 - "$ROOT" "$TMP/se.err" "$(min_weight $((1024 * 5000000)) 999)" "$TMP"/se/*.pb.gz <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
text, want, files = open(sys.argv[2]).read(), int(sys.argv[3]), sys.argv[4:]
w = sum(s["values"][1] for f in files for s in check.load(f)["samples"]
        if s["labels"].get("comm") == "proc_churn" and "burst" in check.funcs(s))
lost = re.findall(r"lost: (\d+) (user|kernel) stacks", text)
print(f"{len(files)} profiles, the churn's {w // 1000000} ms in them (want {want // 1000000}+), stacks lost: {lost or 'none'}")
if lost:
    sys.exit("stacks lost to a full map: " + ", ".join(f"{n} {k}" for n, k in lost))
if len(files) < 2 or w < want:
    sys.exit(f"{len(files)} profiles holding {w // 1000000} ms of the churn: the recording did not run its windows")
PY
fi
