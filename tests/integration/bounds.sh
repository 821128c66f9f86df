#!/usr/bin/env bash
# bounds.sh — memory and BPF slots stay bounded under process churn and
# label churn (issue 15, items 4 and 5), at a smaller scale:
#  - a process making a new label set per request: its sets past the cap
#    are labelled [too many sets] and counted, and pmubpf's peak RSS grows
#    by less than SET_BOUND bytes per label set over a one-set baseline;
#  - `-a` (the mmap reports' way) beside two `while :; do /bin/true; done`
#    loops for 60 s: more processes than unwind slots pass, none goes
#    without a slot, the slots in use at the end are about the processes
#    still alive, and no sample is lost to a full counts map;
#  - a stacks map that churn fills before the window's time is up: the
#    recording drains it when half full, loses no stack, and its one
#    profile holds every sample of its windows.
source "$(dirname "$0")/lib.sh"
need_root labels_capped labels_rss_per_set churn_slots_reclaimed churn_slots_live churn_no_counts_loss \
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

# run_peak OUTVAR CMD...: run CMD, set OUTVAR to its peak RSS in KiB.
run_peak() {
	local var=$1 kb
	shift
	kb=$(python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:])
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if r.returncode == 0 else -1)' "$@") || kb=-1
	printf -v "$var" '%s' "$kb"
}

# --- label churn ----------------------------------------------------------
# 20 kHz on a thread that changes sets every ~5 us: every sample names
# a new set, thousands a second even on a busy machine, past the
# per-process cap (16384) within the 6 s.
"$B/label_churn" 8 0 >/dev/null & lp=$!
sleep 0.2
run_peak base_kb "$PMUBPF" -F 20000 -p $lp -d 6 -o "$TMP/l0.pb.gz" 2>"$TMP/l0.err"
wait $lp
"$B/label_churn" 8 1 >/dev/null & lp=$!
sleep 0.2
run_peak churn_kb "$PMUBPF" -F 20000 -p $lp -d 6 -o "$TMP/l1.pb.gz" 2>"$TMP/l1.err"
wait $lp
if [[ $base_kb -lt 0 || $churn_kb -lt 0 ]]; then
	fail labels_capped "pmubpf failed: $(tail -n1 "$TMP/l0.err") / $(tail -n1 "$TMP/l1.err")"
	fail labels_rss_per_set "pmubpf failed"
else
	comments "$TMP/l1.pb.gz" >"$TMP/l1.comments"
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

# --- process churn ----------------------------------------------------------
# The mmap reports' way (targets, kernels before 6.16): each process is
# read at its notice and takes a slot, the case that once leaked them.
# With images from BPF a churn of /bin/true is never read (its image
# comes from BPF within its 10 ms wait, procs.h) and takes no slot.
loop() { while :; do /bin/true; done; }
loop & l1=$!
loop & l2=$!
PMUBPF_MMAP_REPORTS=1 "$PMUBPF" -a -d 60 -o "$TMP/c.pb.gz" 2>"$TMP/c.err"; rc=$?
live=$(ls -d /proc/[0-9]* | wc -l)
kill $l1 $l2; wait $l1 $l2 2>/dev/null
if [[ $rc -ne 0 ]]; then
	for n in churn_slots_reclaimed churn_slots_live churn_no_counts_loss; do
		fail $n "pmubpf failed: $(tail -n1 "$TMP/c.err")"
	done
else
	comments "$TMP/c.pb.gz" >"$TMP/c.comments"
	unw=$(grep '^unwind tables:' "$TMP/c.comments")
	check churn_slots_reclaimed python3 - "$unw" <<'PY'
import re, sys
m = re.search(r"(\d+) processes, slots (\d+)/(\d+) in use, (\d+) without a slot, (\d+) reclaimed", sys.argv[1])
if not m:
    sys.exit("no unwind summary: " + sys.argv[1])
procs, used, slots, without, reclaimed = map(int, m.groups())
print(f"{procs} processes through {slots} slots, {without} without one, {reclaimed} reclaimed")
if procs <= slots:
    sys.exit(f"only {procs} processes for {slots} slots: the churn did not exercise reuse")
if without:
    sys.exit(f"{without} processes without a slot")
if not reclaimed:
    sys.exit("no slot reclaimed from a process gone before its slot was published")
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
# Two churn workers bring ~2000 new user stacks a second (and kernel ones)
# on 2 CPUs; 4096 entries and 3 s windows (--window: kept as asked) fill
# in about a second. The recording must drain each window once its map is
# half full, lose no stack, and add every window into its one profile (a
# 16-CPU machine under churn fills the default 65536 entries the same way:
# 24% of its user stacks were lost before).
"$ROOT/${PMUBPF_BUILD:-build}/bench/churn_work" 10 2 "$TMP/sm.prog" >/dev/null & cw=$!
sleep 0.5
"$PMUBPF" -v -a -F 999 -d 6 --window 3 --stack-map-size 4096 -o "$TMP/sm.pb.gz" 2>"$TMP/sm.err" >/dev/null; rc=$?
kill $cw; wait $cw 2>/dev/null
if [[ $rc -ne 0 ]]; then
	fail stacks_drained_half_full "pmubpf failed: $(tail -n1 "$TMP/sm.err")"
	fail oneshot_windows_exact "pmubpf failed"
else
	check stacks_drained_half_full python3 - "$TMP/sm.err" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"samples taken in all windows \((\d+) windows\)", text)
if not m:
    sys.exit("no windows line: a 6 s recording of 3 s windows did not flip:\n" + text[-800:])
windows = int(m.group(1))
lost = re.findall(r"lost: (\d+) (user|kernel) stacks", text)
print(f"{windows} windows, stacks lost: {lost or 'none'}")
if lost:
    sys.exit("stacks lost to a full map: " + ", ".join(f"{n} {k}" for n, k in lost))
if windows <= 2:
    sys.exit(f"{windows} windows for 6 s of 3 s windows: none drained early, yet the map is 4096 entries")
PY
	# Every sample taken (BPF's count over all windows) is in the profile,
	# lost, or an idle one left out: none dropped between windows.
	check oneshot_windows_exact python3 - "$TMP/sm.err" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
taken = int(re.search(r"cpu-clock: (\d+) samples taken in all windows", text).group(1))
m = re.search(r"cpu-clock: (\d+) samples \(\d+ distinct\)", text)
if not m:
    sys.exit("no summary line:\n" + text[-800:])
kept = int(m.group(1))
idle = sum(int(x) for x in re.findall(r"left out: (\d+) idle samples", text))
lost = sum(int(x) for x in re.findall(r"lost: (\d+) samples", text))
print(f"taken {taken}: {kept} in the profile + {idle} idle + {lost} lost")
if kept + idle + lost != taken:
    sys.exit(f"{kept} + {idle} + {lost} != {taken} taken")
PY
fi

# The same with --every: each profile's windows drained early too.
"$ROOT/${PMUBPF_BUILD:-build}/bench/churn_work" 10 2 "$TMP/se.prog" >/dev/null & cw=$!
sleep 0.5
mkdir -p "$TMP/se"
"$PMUBPF" -v -a -F 999 -d 6 --every 3 --window 3 --stack-map-size 4096 -o "$TMP/se/" 2>"$TMP/se.err" >/dev/null; rc=$?
kill $cw; wait $cw 2>/dev/null
if [[ $rc -ne 0 ]]; then
	fail every_drained_half_full "pmubpf failed: $(tail -n1 "$TMP/se.err")"
else
	check every_drained_half_full python3 - "$TMP/se.err" "$(ls "$TMP/se" | wc -l)" <<'PY'
import re, sys
text, files = open(sys.argv[1]).read(), int(sys.argv[2])
lost = re.findall(r"lost: (\d+) (user|kernel) stacks", text)
kept = sum(int(x) for x in re.findall(r"cpu-clock: (\d+) samples \(\d+ distinct\)", text))
print(f"{files} profiles, {kept} samples, stacks lost: {lost or 'none'}")
if lost:
    sys.exit("stacks lost to a full map: " + ", ".join(f"{n} {k}" for n, k in lost))
if files < 2 or kept < 5000:
    sys.exit(f"{files} profiles of {kept} samples: the recording did not run its windows")
PY
fi
