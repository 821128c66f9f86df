#!/usr/bin/env bash
# labels.sh — the labels header end to end (issue 3): known label shares
# (20/60/20 on the main thread, nested override, a worker thread that
# adopts its creator's set, a set freed and re-allocated every iteration)
# within k binomial sigma of the CPU time the workload measured, under
# `-- command`, -p (attached after start) and -a (process started after
# pmubpf); a library using labels dlopen()ed after the first sample is
# picked up; pprof's -tagfocus works; hostile records are survived and
# counted.
source "$(dirname "$0")/lib.sh"
need_root command_shares command_worker_adopts p_shares p_first_labelled a_started_after dlopen_late_record tagfocus hostile_badmagic hostile_hugesize hostile_unmapped hostile_badset

NAMES=phase=a,phase=b,phase=c,unlabelled

# The command starts its labelled work once pmubpf has its labels
# (labels_work_go): a command is read at its first sample.
if LABELS_WORK_GO=$TMP/cmd.go start_recorder "$TMP/cmd.err" -F 999 -o "$TMP/cmd.pb.gz" -- "$B/labels_work" 4 \
	>"$TMP/cmd.truth" && { labels_work_go "$TMP/cmd.truth" "$TMP/cmd.go"; wait $RECORDER_PID; }; then
	label_shares command_shares "$TMP/cmd.pb.gz" "$TMP/cmd.truth"
	# The worker thread's samples in worker_a carry main's set (adopted).
	check command_worker_adopts $CHECK expect "$TMP/cmd.pb.gz" --func worker_a --tag phase=a --tag req=1 --tag phase=c
	check command_valid valid_profile "$TMP/cmd.pb.gz"
else
	fail command_shares "pmubpf failed: $(tail -n1 "$TMP/cmd.err")"
fi

# -p reads its target before sampling begins (its labels among the
# rest): every sample inside a labelled unit carries a phase, from the
# first on (units_labelled, lib.sh). Read at the first sample instead, the
# first ~15 ms went unlabelled here (seconds under qemu: p_shares'
# unlabelled share 28.7% for a truth of 25.3%).
# -p: attach to a running process; only the recorded window counts, so
# the truth is the whole run's and the window must be representative:
# the workload's pattern repeats every few milliseconds. It runs until
# the -d 3 recording has ended (stopped by SIGTERM, its truth printed),
# however long the recorder's start took (BPF verification on a loaded
# machine or under qemu: seconds).
"$B/labels_work" 600 >"$TMP/p.truth" & lp=$!
sleep 0.3
if start_recorder "$TMP/p.err" -F 999 -p $lp -d 3 -o "$TMP/p.pb.gz" && wait_recorder 120; then
	kill -TERM $lp; wait $lp
	label_shares p_shares "$TMP/p.pb.gz" "$TMP/p.truth"
	check p_first_labelled units_labelled "$TMP/p.pb.gz"
else
	fail p_shares "pmubpf failed: $(tail -n1 "$TMP/p.err")"
	fail p_first_labelled "pmubpf failed"
	kill -TERM $lp; wait $lp
fi

# -a, the labelled process started after pmubpf. Under -a pmubpf first
# reads every process already running (seconds of CPU on a loaded
# machine), and a 1 s process started during that was gone before its
# maps were read (no labels record: 2 failures in 4 loaded runs): the
# process starts once that is done and runs 3 s.
if start_recorder "$TMP/a.err" -a -F 999 -o "$TMP/a.pb.gz"; then
	sleep 2
	"$B/labels_work" 3 >/dev/null & ap=$!
	wait $ap
	kill -INT $RECORDER_PID; wait $RECORDER_PID
	check a_started_after $CHECK expect "$TMP/a.pb.gz" --pid $ap --tag phase=b --tag phase=c
else
	fail a_started_after "pmubpf did not start: $(tail -n1 "$TMP/a.err")"
fi

# A library with its own labels record, dlopen()ed 0.8 s after start (a
# plugin, a Python extension; after the early re-reads of a new process's
# maps at +20 and +220 ms, before the next at +2.2 s): its record is
# found when the library arrives (the mmap report), so only the plugin's
# first moments, before pmubpf's read of its maps, go unlabelled: the
# unlabelled samples must span at most 400 ms of its 1 s (2-3 ms on a quiet machine, 47 ms seen
# on a loaded CI run where pmubpf waited for a CPU; the bound is far
# from both that and the 1000 ms of the broken path). Without the mmap
# report the record is found only at the end: nothing labelled.
if "$PMUBPF" -F 999 -o "$TMP/dl.pb.gz" -- "$B/dlopen_work" "$B/liblabeled.so" 0.8 1 2>"$TMP/dl.err"; then
	check dlopen_late_record python3 - "$ROOT" "$TMP/dl.pb.gz" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/tests/integration")
import check
p = check.load(sys.argv[2])
tot = lab = 0
for s in p["samples"]:
    if check.leaf(s) == "plugin_work":
        tot += s["values"][0]
        lab += s["values"][0] if s["labels"].get("phase") == "plugin" else 0
# plugin_work runs 1 s: tot samples span it, so the unlabelled ones
# span (tot - lab) / tot seconds.
late_ms = 1000.0 * (tot - lab) / tot if tot else 1000.0
print("plugin_work: %d samples, %d with phase=plugin: unlabelled for %.0f ms" % (tot, lab, late_ms))
if tot < 300 or late_ms > 400:
    sys.exit("plugin_work: %d of %d samples labelled phase=plugin (unlabelled for %.0f ms), want >= 300 samples, unlabelled for <= 400 ms" % (lab, tot, late_ms))
PY
else
	fail dlopen_late_record "pmubpf failed: $(tail -n1 "$TMP/dl.err")"
fi

# go tool pprof -tagfocus phase=b keeps only phase=b samples, and
# -traces shows them under work_b.
if [[ -s $TMP/cmd.pb.gz ]] && command -v go >/dev/null; then
	gp() { HOME=${HOME:-/root} GOCACHE=$TMP/gocache go tool pprof "$@" 2>/dev/null; }
	tags=$(gp -tags -tagfocus phase=b "$TMP/cmd.pb.gz")
	traces=$(gp -traces -tagfocus phase=b "$TMP/cmd.pb.gz")
	if ! grep -q '(  100%): b$' <<<"$tags"; then fail tagfocus "-tags under -tagfocus phase=b: $(tr '\n' ' ' <<<"$tags")"
	elif ! grep -qw work_b <<<"$traces" || grep -qw -e work_a -e work_c <<<"$traces"; then fail tagfocus "-traces under -tagfocus phase=b do not show only work_b"
	else pass tagfocus; fi
else
	fail tagfocus "no profile, or go not installed (tools/deps.sh installs golang-go)"
fi

# Hostile records: rejected or their reads failed, counted, never fatal.
hostile() { # mode comment-regex
	local mode=$1 re=$2
	if "$PMUBPF" -F 999 -o "$TMP/h.pb.gz" -- "$B/labels_hostile" "$mode" 1 2>"$TMP/h.err"; then
		check hostile_$mode $CHECK expect "$TMP/h.pb.gz" --min-samples 100 --comment "$re"
	else
		fail hostile_$mode "pmubpf failed: $(tail -n1 "$TMP/h.err")"
	fi
}
hostile badmagic 'labels: 0 processes registered, 1 records rejected'
hostile hugesize 'labels: 0 processes registered, 1 records rejected'
hostile unmapped '^lost: [1-9][0-9]* label reads'
hostile badset 'labels: 1 processes registered.* 1 malformed'
